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

export function buildSerializerFactory(
  externalSchemas: Record<string, unknown> = {},
  options: Record<string, unknown> = {},
) {
  const schemas = Object.fromEntries(Object.entries(externalSchemas).map(([id, s]) => [id, forSerializer(s)]));
  return ({ schema }: { schema: JsonSchema }) =>
    // fast-json-stringify's types want a narrower schema type than the JSON we build.
    fastJsonStringify(forSerializer(schema) as never, { ...options, schema: schemas as never });
}
