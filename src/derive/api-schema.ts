// JSON schemas of a resource, for responses (serialization and OpenAPI) and for
// request bodies (OpenAPI; the operations validate with the field kinds).
import { FILTER_OPS } from '../schema/kinds.ts';
import type { JsonSchema } from '../schema/kinds.ts';
import { annotationsOf, countsOf, type Field, type Resource } from '../schema/resource.ts';
import { PER_PAGE } from './list-query.ts';

/** `assignment rule` → `AssignmentRule`. */
const pascal = (s: string) => s.replace(/(^|[\s_-]+)(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase());

function withNull(schema: JsonSchema): JsonSchema {
  if (schema.anyOf) return { anyOf: [...(schema.anyOf as JsonSchema[]), { type: 'null' }] };
  return { ...schema, type: [schema.type, 'null'] };
}

function describe(field: Field, schema: JsonSchema): JsonSchema {
  return { ...schema, title: field.label, 'x-input': field.input };
}

export const schemaIds = (resource: Resource) => {
  const base = pascal(resource.singular);
  return { record: base, input: `${base}Input`, one: `${base}Response`, list: `${base}List` };
};

export function recordSchema(resource: Resource): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of resource.visible) {
    const s = f.kind.schema(f);
    properties[f.name] = describe(f, f.nullable ? withNull(s) : s);
  }
  for (const [name, computed] of Object.entries(resource.computed))
    properties[name] = { ...computed.schema, readOnly: true };
  return {
    $id: schemaIds(resource).record,
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

export function inputSchema(resource: Resource): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of resource.writable) {
    const s = f.kind.inputSchema?.(f) ?? f.kind.schema(f);
    properties[f.name] = describe(f, f.nullable ? withNull(s) : s);
  }
  return {
    $id: schemaIds(resource).input,
    type: 'object',
    description: `Fields of a ${resource.singular}. Read-only fields (${resource.visible
      .filter((f) => f.readOnly)
      .map((f) => f.name)
      .join(', ')}) are ignored; unknown fields are refused.`,
    properties,
    required: resource.writable.filter((f) => f.required).map((f) => f.name),
    additionalProperties: false,
  };
}

/** A record read on its own: its fields, and the counts of the records that name it (a contact's inquiries_count). */
export function oneSchema(resource: Resource): JsonSchema {
  const ids = schemaIds(resource);
  const counts = countsOf(resource);
  if (counts.length === 0)
    return { $id: ids.one, type: 'object', properties: { data: { $ref: `${ids.record}#` } }, required: ['data'] };
  const { $id: _, ...record } = recordSchema(resource) as { $id: string; properties: object; required: string[] };
  const extra = Object.fromEntries(
    counts.map(({ resource: other, field }) => [
      field.countAs!,
      { type: 'integer', readOnly: true, description: `How many ${other.name} name it (${field.name})` },
    ]),
  );
  const data = {
    ...record,
    properties: { ...record.properties, ...extra },
    required: [...record.required, ...Object.keys(extra)],
  };
  return { $id: ids.one, type: 'object', properties: { data }, required: ['data'] };
}

/** A create's answer: the record, and what the resource reveals once beside it (a webhook's secret). */
export function createdSchema(resource: Resource): JsonSchema {
  const one = { $ref: `${schemaIds(resource).one}#` };
  const reveals = Object.entries(resource.decl.reveals ?? {});
  if (reveals.length === 0) return one;
  const properties = Object.fromEntries(reveals.map(([name, description]) => [name, { type: 'string', description }]));
  return { allOf: [one, { type: 'object', properties, required: reveals.map(([name]) => name) }] };
}

export function listSchema(resource: Resource): JsonSchema {
  const ids = schemaIds(resource);
  return {
    $id: ids.list,
    type: 'object',
    properties: {
      data: { type: 'array', items: { $ref: `${ids.record}#` } },
      meta: {
        type: 'object',
        description:
          'page, per_page, total and last_page with page paging; per_page and next_cursor with cursor paging.',
        properties: {
          page: { type: 'integer' },
          per_page: { type: 'integer' },
          total: { type: 'integer' },
          last_page: { type: 'integer' },
          next_cursor: { type: ['string', 'null'] },
        },
        required: ['per_page'],
      },
    },
    required: ['data', 'meta'],
  };
}

/** The list parameters, for the OpenAPI document. */
export function listQuerySchema(resource: Resource): JsonSchema {
  const filterProperties: Record<string, JsonSchema> = {};
  for (const f of resource.visible) {
    const ops = Object.fromEntries(f.kind.operators.map((op) => [op, { type: 'string' }]));
    filterProperties[f.name] = {
      anyOf: [{ type: 'string' }, { type: 'object', properties: ops, additionalProperties: false }],
    };
  }
  return {
    type: 'object',
    properties: {
      search: {
        type: 'string',
        description:
          'Every whitespace-separated word must occur, case-insensitively, ' +
          'in a searchable text field, or equal a searchable integer field.',
      },
      filter: {
        type: 'object',
        description: [
          `filter[field]=value (equality) or filter[field][op]=value, op one of ${FILTER_OPS.join(', ')};`,
          'in takes a comma list, null takes true or false.',
        ].join(' '),
        properties: filterProperties,
        additionalProperties: false,
      },
      sort: {
        type: 'string',
        description:
          'Comma-separated fields, - for descending; ties broken by id in the direction of the last key. Default -id.',
      },
      page: { type: 'integer', minimum: 1, default: 1 },
      per_page: { type: 'integer', minimum: 1, maximum: PER_PAGE.max, default: PER_PAGE.default },
      cursor: { type: 'string', description: 'Keyset paging: empty to start, then meta.next_cursor.' },
    },
    additionalProperties: false,
  };
}

/** A page of a record's timeline: each entry's changes are [before, after] pairs typed by the fields they name. */
export function activitySchema(resource: Resource): JsonSchema {
  const changes: Record<string, JsonSchema> = {};
  for (const f of resource.visible) {
    if (f.primary || f.timestamp) continue;
    changes[f.name] = { type: 'array', minItems: 2, maxItems: 2, items: withNull(f.kind.schema(f)) };
  }
  const entry = {
    type: 'object',
    properties: {
      id: { type: 'integer', format: 'int64' },
      at: { type: 'string', format: 'date-time' },
      action: {
        type: 'string',
        description: 'created, updated, deleted, restored, merged, note; on users also their security events',
      },
      actor: {
        type: ['object', 'null'],
        properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } },
        required: ['id', 'name'],
      },
      via: { type: 'string', enum: ['web', 'api', 'import', 'intake', 'rule', 'cli', 'system'] },
      changes: { type: 'object', properties: changes, additionalProperties: false },
      hidden_changed: { type: 'array', items: { type: 'string' } },
      merged: {
        type: 'array',
        description: 'on a merged entry: the ids of the records merged into this one (now in the trash)',
        items: { type: 'integer', format: 'int64' },
      },
      // A record that others annotate shows them: `note: {id, body}` on an entry whose action is `note`.
      ...Object.fromEntries(
        annotationsOf(resource).map(({ resource: other }) => [
          other.singular,
          {
            type: 'object',
            description: `on a ${other.decl.timelineAction} entry: the ${other.singular} as it is now`,
            properties: { id: { type: 'integer', format: 'int64' }, [other.title.name]: { type: 'string' } },
          },
        ]),
      ),
    },
    required: ['id', 'at', 'action', 'actor', 'via'],
  };
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: entry },
      meta: { type: 'object', properties: { next_cursor: { type: ['string', 'null'] } }, required: ['next_cursor'] },
    },
    required: ['data', 'meta'],
  };
}
