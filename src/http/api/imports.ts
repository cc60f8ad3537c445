// The imports: who imported what and when, the rows that failed as a CSV file
// to correct, and rolling an import back (CONTRACT.md, "Import preview,
// rollback, duplicates"). Thin: src/records/imports.ts does the work.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { failedRowsCsv, getImport, listImports, rollbackImport } from '../../records/imports.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const int64 = { type: 'integer', format: 'int64' };
const count = { type: 'integer' };
const skipped = {
  type: 'array',
  description: 'records left as they are, because someone changed them or linked records to them since',
  items: {
    type: 'object',
    properties: { resource: { type: 'string' }, id: int64, reason: { type: 'string' } },
    required: ['resource', 'id', 'reason'],
  },
};
const rollbackReport = {
  type: 'object',
  properties: {
    removed: { type: 'integer', description: 'records the import created, removed' },
    restored: { type: 'integer', description: 'records the import updated, put back as they were' },
    skipped,
  },
  required: ['removed', 'restored', 'skipped'],
};

const summary = {
  type: 'object',
  properties: {
    id: int64,
    resource: { type: 'string' },
    status: {
      type: 'string',
      enum: ['running', 'done', 'failed', 'stopped', 'rolled_back'],
      description: 'failed: the file went bad part-way (the rows before stay); stopped: its process ended meanwhile',
    },
    filename: { type: ['string', 'null'] },
    by: { type: ['object', 'null'], properties: { id: int64, name: { type: 'string' } } },
    via: { type: 'string' },
    started_at: { type: 'string', format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
    size: { type: ['integer', 'null'], description: 'bytes of the file, when known' },
    bytes_read: count,
    created: count,
    updated: count,
    unchanged: count,
    failed: count,
    encoding: { type: ['string', 'null'] },
    delimiter: { type: ['string', 'null'] },
    columns: {
      type: 'array',
      items: { type: 'object', properties: { header: { type: 'string' }, field: { type: ['string', 'null'] } } },
    },
    upsert_by: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
    rolled_back_at: { type: ['string', 'null'], format: 'date-time' },
    rollback: { ...rollbackReport, type: ['object', 'null'], description: 'what the rollback did, once it has' },
  },
  required: ['id', 'resource', 'status', 'started_at', 'created', 'updated', 'unchanged', 'failed'],
};

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[0-9]+$' } },
  required: ['id'],
};

type ById = FastifyRequest<{ Params: { id: string } }>;

export function importRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['imports'];
    app.get(
      '/imports',
      {
        schema: {
          tags,
          summary: 'The imports of the records you may import, newest first: who, when, what came of them',
          querystring: {
            type: 'object',
            properties: { cursor: { type: 'string', description: 'meta.next_cursor of the page before' } },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one page of imports',
              type: 'object',
              properties: {
                data: { type: 'array', items: summary },
                meta: { type: 'object', properties: { next_cursor: { type: ['string', 'null'] } } },
              },
            },
            403: problem('your role may not import'),
            422: problem('an invalid cursor'),
          },
        },
      },
      (request: FastifyRequest<{ Querystring: { cursor?: string } }>) =>
        listImports(contextOf(database, request), request.query.cursor),
    );

    app.get(
      '/imports/:id',
      {
        schema: {
          tags,
          summary: 'One import, with its progress while it runs',
          params: idParams,
          response: {
            200: { description: 'the import', type: 'object', properties: { data: summary } },
            404: problem('no import of records you may import has this id'),
          },
        },
      },
      async (request: ById) => ({ data: (await getImport(contextOf(database, request), request.params.id)).summary }),
    );

    app.get(
      '/imports/:id/failed',
      {
        schema: {
          tags,
          summary: 'The rows an import could not take, as CSV to correct and import again',
          description:
            'The file’s own header and the failed rows’ cells as they were read, then a column "Import problems" ' +
            'saying what was wrong, which an import leaves out (it names no field). UTF-8 with a byte order mark.',
          params: idParams,
          response: {
            200: {
              description: 'the CSV file, as an attachment',
              content: { 'text/csv': { schema: { type: 'string' } } },
            },
            404: problem('no import of records you may import has this id'),
          },
        },
      },
      async (request: ById, reply) => {
        const stream = await failedRowsCsv(contextOf(database, request), request.params.id);
        return reply
          .type('text/csv; charset=utf-8')
          .header('Content-Disposition', `attachment; filename="import-${request.params.id}-failed-rows.csv"`)
          .header('Cache-Control', 'private, no-store')
          .send(stream);
      },
    );

    app.post(
      '/imports/:id/rollback',
      {
        schema: {
          tags,
          summary: 'Undo an import: remove what it created, put back what it updated',
          description:
            'In one transaction. A record changed since the import, deleted since, or that other records were ' +
            'linked to since, is left as it is and listed in skipped. The records updated get back their values ' +
            'and their updated_at.',
          params: idParams,
          response: {
            200: { description: 'what the rollback did', ...rollbackReport },
            403: problem('your role may not delete these records'),
            404: problem('no import of records you may import has this id'),
            409: problem('rolled back already, or still running'),
          },
        },
      },
      (request: ById) => rollbackImport(contextOf(database, request), request.params.id),
    );
  };
}
