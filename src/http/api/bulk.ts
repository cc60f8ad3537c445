// POST /api/v1/{contacts|inquiries}/bulk: one update or deletion over many records (CONTRACT.md, "Bulk actions").
// Thin: it hands the body to bulkRecords (src/records/bulk.ts) and shapes the answer.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { schemaIds } from '../../derive/api-schema.ts';
import { BULK_MAX, bulkRecords } from '../../records/bulk.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const fieldErrors = { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } };

export function bulkRoutes(database: Database, resource: Resource) {
  const ids = schemaIds(resource);
  const outcome = {
    type: 'object',
    properties: {
      updated: { type: 'integer', description: 'action update: records that now hold the changes' },
      deleted: { type: 'integer', description: 'action delete: records moved to the trash' },
      failed: {
        type: 'array',
        description: 'the records left as they were, in the order named, each with why (as the single call would say)',
        items: {
          type: 'object',
          properties: { id: { type: 'integer', format: 'int64' }, errors: fieldErrors },
          required: ['id', 'errors'],
        },
      },
    },
    required: ['failed'],
  };
  return async function plugin(app: FastifyInstance) {
    app.post(
      '/bulk',
      {
        schema: {
          tags: [resource.name],
          summary: `Update or delete many ${resource.name} at once`,
          description: [
            `Names the ${resource.name} by ids, or by a list query string (search, filter and sort as for`,
            `GET /api/v1/${resource.name}; page, per_page and cursor are refused): at most ${BULK_MAX} records,`,
            'else 422 naming ids or query. action update sets the same changes on each, checked as a PATCH body',
            '(an unknown or invalid field is a 422 naming changes.<field>, nothing written); action delete moves each',
            'to the trash, as DELETE does. Each record is written with its own activity entry, 500 records to a',
            'transaction. A record you may not change (an agent: one you neither created nor are assigned), or that',
            'does not exist, is listed in failed and the others are written; a role that may change none gets 403.',
          ].join(' '),
          body: {
            type: 'object',
            properties: {
              ids: {
                type: 'array',
                items: { type: 'integer', format: 'int64' },
                minItems: 1,
                maxItems: BULK_MAX,
                description: 'the records, by id (or give query)',
              },
              query: {
                type: 'string',
                description: 'the records a list matches, as its query string: "filter[stage_id]=1&search=acme"',
              },
              action: { type: 'string', enum: ['update', 'delete'] },
              changes: { $ref: `${ids.input}#`, description: 'action update: the fields to set on every record' },
            },
            required: ['action'],
            additionalProperties: false,
          },
          response: {
            200: { description: 'what was done, and the records that were not changed', ...outcome },
            400: problem('malformed JSON'),
            403: problem('your role may change (or delete) none of these records'),
            413: problem('body over 1 MiB'),
            415: problem('not application/json'),
            422: problem(`invalid ids, query, action or changes, or over ${BULK_MAX} records, each named in errors`),
          },
        },
      },
      async (request) => {
        const { action, done, failed } = await bulkRecords(contextOf(database, request), resource, request.body);
        return {
          [action === 'update' ? 'updated' : 'deleted']: done,
          failed: failed.map(({ id, errors }) => ({ id, errors })),
        };
      },
    );
  };
}
