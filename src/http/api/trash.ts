// The trash: what the caller may restore, and restoring it (CONTRACT.md, "Activity, notes, trash and undo").
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { listTrash, restoreFromTrash } from '../../records/trash.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const item = {
  type: 'object',
  properties: {
    change_id: { type: 'integer', format: 'int64', description: 'the deletion; restore with it' },
    resource: { type: 'string' },
    id: { type: 'integer', format: 'int64', description: 'the record’s id, which it gets back' },
    title: { type: 'string' },
    deleted_at: { type: 'string', format: 'date-time' },
    deleted_by: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } },
    },
    with: {
      type: 'object',
      description: 'what the deletion took along and restoring brings back, by resource: {"notes": 3}',
      additionalProperties: { type: 'integer' },
    },
  },
  required: ['change_id', 'resource', 'id', 'title', 'deleted_at', 'deleted_by', 'with'],
};

export function trashRoutes(database: Database, trashDays: number) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/trash',
      {
        schema: {
          tags: ['trash'],
          summary: `What you may restore, deleted in the last ${trashDays} days, newest first`,
          querystring: {
            type: 'object',
            properties: { cursor: { type: 'string', description: 'meta.next_cursor of the page before' } },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one page of deleted records',
              type: 'object',
              properties: {
                data: { type: 'array', items: item },
                meta: { type: 'object', properties: { next_cursor: { type: ['string', 'null'] } } },
              },
            },
            422: problem('an invalid cursor'),
          },
        },
      },
      (request: FastifyRequest<{ Querystring: { cursor?: string } }>) =>
        listTrash(contextOf(database, request), trashDays, request.query.cursor),
    );

    app.post(
      '/trash/:change_id/restore',
      {
        schema: {
          tags: ['trash'],
          summary: 'Bring a deleted record back, with its id, its notes and its links',
          params: {
            type: 'object',
            properties: { change_id: { type: 'string', pattern: '^[0-9]+$' } },
            required: ['change_id'],
          },
          response: {
            200: {
              description: 'which record is back (read it at its address)',
              type: 'object',
              properties: {
                data: {
                  type: 'object',
                  properties: {
                    resource: { type: 'string' },
                    id: { type: 'integer', format: 'int64' },
                    url: { type: 'string' },
                  },
                },
              },
            },
            403: problem('you may not delete, so not restore, this record'),
            404: problem('no deletion in the trash has this id'),
            409: problem('already restored, or what it belongs to is still deleted'),
            410: problem('emptied from the trash'),
          },
        },
      },
      async (request: FastifyRequest<{ Params: { change_id: string } }>) => {
        const { resource, record } = await restoreFromTrash(
          contextOf(database, request),
          request.params.change_id,
          trashDays,
        );
        const id = record[resource.primaryKey.name];
        return { data: { resource: resource.name, id, url: `/api/v1/${resource.name}/${String(id)}` } };
      },
    );
  };
}
