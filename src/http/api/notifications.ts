// The signed-in user's notifications (CONTRACT.md, "Assignment, notifications, tasks"): newest first, and marking
// them read. Scoped to request.user like the rest of /me.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { listNotifications, markRead, NOTIFICATION_KINDS } from '../../records/notifications.ts';
import { resources } from '../../resources/index.ts';
import { problem } from '../openapi.ts';

const tags = ['notifications'];
const notification = {
  type: 'object',
  properties: {
    id: { type: 'integer', format: 'int64' },
    at: { type: 'string', format: 'date-time' },
    kind: { type: 'string', enum: [...NOTIFICATION_KINDS] },
    read: { type: 'boolean' },
    record: {
      type: 'object',
      properties: {
        resource: { type: 'string' },
        id: { type: 'integer', format: 'int64' },
        title: { type: ['string', 'null'], description: 'null when the record has been deleted' },
      },
      required: ['resource', 'id', 'title'],
    },
  },
  required: ['id', 'at', 'kind', 'read', 'record'],
};

export function notificationRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/notifications',
      {
        schema: {
          tags,
          summary: 'Your notifications, newest first',
          querystring: {
            type: 'object',
            properties: { cursor: { type: 'string', description: 'meta.next_cursor of the page before' } },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one page of notifications, and how many are unread in all',
              type: 'object',
              properties: {
                data: { type: 'array', items: notification },
                meta: {
                  type: 'object',
                  properties: { next_cursor: { type: ['string', 'null'] }, unread: { type: 'integer' } },
                },
              },
            },
            422: problem('the cursor is not one this list gave'),
          },
        },
      },
      async (request: FastifyRequest<{ Querystring: { cursor?: string } }>) =>
        listNotifications(database.db, request.user!.id, resources, request.query.cursor),
    );
    app.post(
      '/notifications/read',
      {
        schema: {
          tags,
          summary: 'Mark notifications read: {ids: [...]} or {all: true}',
          body: {
            type: 'object',
            properties: {
              ids: { type: 'array', items: { type: 'integer', format: 'int64' }, maxItems: 1000 },
              all: { type: 'boolean' },
            },
          },
          response: { 204: { description: 'marked', type: 'null' }, 422: problem('neither ids nor all') },
        },
      },
      async (request, reply) => {
        await markRead(database.db, request.user!.id, request.body);
        return reply.code(204).send();
      },
    );
  };
}
