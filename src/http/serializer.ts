// Responses are written by fast-json-stringify from the declared schemas, which
// also drops any property a schema does not name. It writes a BigInt exactly
// for `type: integer`, but not inside a type list, so `['integer', 'null']`
// is rewritten to its `nullable` form for the serializer only.
import fastJsonStringify from 'fast-json-stringify';
import type { JsonSchema } from '../schema/kinds.ts';

function forSerializer(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forSerializer);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = forSerializer(value);
  const type = out.type;
  if (Array.isArray(type) && type.length === 2 && type.includes('null') && type.includes('integer')) {
    out.type = 'integer';
    out.nullable = true;
  }
  return out;
}

/**
 * Each route's serializer is compiled when it first answers with that status, not when the server starts: most of
 * the ~160 routes' answers are never sent by a given process, and each compiled one keeps its generated source.
 */
export function buildSerializerFactory(
  externalSchemas: Record<string, unknown> = {},
  options: Record<string, unknown> = {},
) {
  const schemas = Object.fromEntries(Object.entries(externalSchemas).map(([id, s]) => [id, forSerializer(s)]));
  return ({ schema }: { schema: JsonSchema }) => {
    let stringify: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      // fast-json-stringify's types want a narrower schema type than the JSON we build.
      stringify ??= fastJsonStringify(forSerializer(schema) as never, { ...options, schema: schemas as never });
      return stringify(data);
    };
  };
}
