// The audit log (admins): every change of every record, newest first, narrowed by actor, resource, action and
// time, as JSON pages or a streamed CSV.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { auditLog } from '../../records/change-log.ts';
import { auditCsv } from '../../records/csv.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const filter = {
  type: 'object',
  description: 'filter[actor]=<user id>, filter[resource]=contacts, filter[action]=updated, filter[at][gte|lte]=<date>',
  properties: {
    actor: { type: 'string' },
    resource: { type: 'string' },
    action: { type: 'string' },
    at: {
      type: 'object',
      properties: { gte: { type: 'string' }, lte: { type: 'string' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const entry = {
  type: 'object',
  properties: {
    id: { type: 'integer', format: 'int64' },
    at: { type: 'string', format: 'date-time' },
    action: { type: 'string' },
    actor: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } },
      required: ['id', 'name'],
    },
    via: { type: 'string' },
    resource: { type: ['string', 'null'] },
    record_id: { type: 'integer', format: 'int64', nullable: true },
    changes: {
      type: 'object',
      description: 'each changed field as [before, after], as stored (64-bit integers as digits)',
      additionalProperties: { type: 'array', items: {} },
    },
    hidden_changed: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'at', 'action', 'actor', 'via', 'resource', 'record_id'],
};

export function activityRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/activity',
      {
        schema: {
          tags: ['activity'],
          summary: 'The audit log (admins): every record change, newest first',
          querystring: {
            type: 'object',
            properties: { filter, cursor: { type: 'string', description: 'meta.next_cursor of the page before' } },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one page of entries',
              type: 'object',
              properties: {
                data: { type: 'array', items: entry },
                meta: { type: 'object', properties: { next_cursor: { type: ['string', 'null'] } } },
              },
            },
            403: problem('not an admin'),
            422: problem('an invalid filter or cursor'),
          },
        },
      },
      (request) => auditLog(contextOf(database, request), request.query as Record<string, unknown>),
    );

    app.get(
      '/activity/export',
      {
        schema: {
          tags: ['activity'],
          summary: 'The audit log as CSV (admins), streamed, with the same filters',
          querystring: {
            type: 'object',
            properties: { filter, format: { type: 'string', enum: ['csv'] } },
            additionalProperties: false,
          },
          response: {
            200: { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } },
            403: problem('not an admin'),
            422: problem('an invalid filter'),
          },
        },
      },
      async (request, reply) => {
        const { format: _csv, ...query } = request.query as Record<string, unknown>;
        const ctx = contextOf(database, request);
        // Checked before the first byte: a refusal is a problem, not a broken file.
        await auditLog(ctx, { ...query, cursor: undefined }, 1);
        return reply
          .type('text/csv; charset=utf-8')
          .header('Content-Disposition', 'attachment; filename="leadbook-activity.csv"')
          .header('Cache-Control', 'private, no-store')
          .send(auditCsv(ctx, query));
      },
    );
  };
}
