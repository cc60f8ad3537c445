// GET /api/v1/schema: the resource declarations, as clients and the web app
// need them. Hidden fields are left out, except those a client writes (a
// user's password), listed as write-only so a client knows to send them.
import type { FastifyInstance } from 'fastify';
import { type Field, optionsOf, type Resource, unsetWordOf } from '../../schema/resource.ts';

function describeField(f: Field) {
  return {
    name: f.name,
    label: f.label,
    type: f.kind.seedType,
    input: f.input,
    rules: f.rules,
    required: f.required,
    nullable: f.nullable,
    ...(f.max !== undefined ? { max: f.max } : {}),
    primary: f.primary,
    auto_increment: f.autoIncrement,
    unsigned: f.unsigned,
    read_only: f.readOnly,
    write_only: f.hidden,
    searchable: f.searchable,
    fillable: f.fillable,
    in_form: f.inForm,
    in_index: f.inIndex,
    in_view: f.inView,
    filter_operators: f.kind.operators,
    // The words of each state, as an admin set them (Status: Closed / Open / New).
    ...(f.kind.options
      ? {
          labels: {
            ...Object.fromEntries(optionsOf(f).map((o) => [o.value, o.label])),
            ...(f.nullable ? { null: unsetWordOf(f) } : {}),
          },
        }
      : {}),
  };
}

export function describeResource(r: Resource) {
  return {
    name: r.name,
    singular: r.singular,
    label: r.label,
    fields: r.fields.filter((f) => !f.hidden || r.writable.includes(f)).map(describeField),
    needs_one_of: r.needsOneOf.map((f) => f.name),
  };
}

export function schemaRoutes(resources: readonly Resource[]) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/schema',
      {
        schema: {
          tags: ['schema'],
          summary: 'The resource declarations: fields, types, input kinds, rules and flags',
          response: {
            200: {
              type: 'object',
              properties: { data: { type: 'array', items: { type: 'object', additionalProperties: true } } },
            },
          },
        },
      },
      // Made for each request: the labels are settings.
      (_request, reply) =>
        reply.type('application/json; charset=utf-8').send(JSON.stringify({ data: resources.map(describeResource) })),
    );
  };
}
