// A webhook's deliveries, a test event and a new secret (CONTRACT.md,
// "Webhooks"); the webhook's own fields go through the generic record routes.
// Thin: src/webhooks/deliveries.ts does the work.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { listDeliveries, resendDelivery, rotateSecret, sendTestEvent } from '../../webhooks/deliveries.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const int64 = { type: 'integer', format: 'int64' };
const nullable = (type: string, more: object = {}) => ({ type: [type, 'null'], ...more });
const delivery = {
  type: 'object',
  properties: {
    id: int64,
    event: { type: 'string', description: 'the event type, or webhook.test' },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    attempts: { type: 'integer', description: 'attempts since it was queued or last resent' },
    created_at: { type: 'string', format: 'date-time' },
    last_attempt_at: nullable('string', { format: 'date-time' }),
    next_attempt_at: nullable('string', { format: 'date-time', description: 'when it is tried next, while pending' }),
    last_status_code: nullable('integer', { description: 'null when no answer came' }),
    last_error: nullable('string', { description: 'why no answer came (timeout, a refused address, …)' }),
    latency_ms: nullable('integer'),
    response_excerpt: nullable('string', { description: 'the first 1 KB of the last answer' }),
    payload: { type: 'string', description: 'the body sent, the same bytes on every attempt' },
  },
  required: ['id', 'event', 'status', 'attempts', 'created_at', 'payload'],
};
const one = { type: 'object', properties: { data: delivery }, required: ['data'] };
const id = { type: 'string', pattern: '^[0-9]+$' };
const params = { type: 'object', properties: { id }, required: ['id'] };
const notFound = problem('no such webhook (or delivery of it)');

type ById = FastifyRequest<{ Params: { id: string } }>;

export function webhookRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['webhooks'];
    app.get(
      '/webhooks/:id/deliveries',
      {
        schema: {
          tags,
          summary: 'A webhook’s delivery log, newest first',
          params,
          querystring: {
            type: 'object',
            properties: {
              cursor: { type: 'string', description: 'meta.next_cursor of the page before' },
              status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
            },
            additionalProperties: false,
          },
          response: {
            200: {
              description: '50 deliveries at most',
              type: 'object',
              properties: {
                data: { type: 'array', items: delivery },
                meta: { type: 'object', properties: { next_cursor: nullable('string') }, required: ['next_cursor'] },
              },
              required: ['data', 'meta'],
            },
            404: notFound,
          },
        },
      },
      (request: FastifyRequest<{ Params: { id: string }; Querystring: { cursor?: string; status?: string } }>) =>
        listDeliveries(contextOf(database, request), request.params.id, request.query),
    );

    app.post(
      '/webhooks/:id/deliveries/:delivery_id/resend',
      {
        schema: {
          tags,
          summary: 'Send a delivery again, now',
          params: { type: 'object', properties: { id, delivery_id: id }, required: ['id', 'delivery_id'] },
          response: {
            202: { description: 'queued again', ...one },
            404: notFound,
            409: problem('the delivery is waiting to be sent already'),
          },
        },
      },
      async (request: FastifyRequest<{ Params: { id: string; delivery_id: string } }>, reply) => {
        const data = await resendDelivery(contextOf(database, request), request.params.id, request.params.delivery_id);
        return reply.code(202).send({ data });
      },
    );

    app.post(
      '/webhooks/:id/test',
      {
        schema: {
          tags,
          summary: 'Send a test event (webhook.test) to the endpoint',
          params,
          response: { 202: { description: 'queued', ...one }, 404: notFound },
        },
      },
      async (request: ById, reply) =>
        reply.code(202).send({ data: await sendTestEvent(contextOf(database, request), request.params.id) }),
    );

    app.post(
      '/webhooks/:id/secret',
      {
        schema: {
          tags,
          summary: 'Rotate the signing secret: the new one is answered once; the old one also signs for 24 hours',
          params,
          response: {
            200: {
              description: 'the new secret',
              type: 'object',
              properties: {
                secret: { type: 'string', description: 'whsec_…, shown in this answer only' },
                previous_until: { type: 'string', format: 'date-time', description: 'the old secret signs until' },
              },
              required: ['secret', 'previous_until'],
            },
            404: notFound,
          },
        },
      },
      async (request: ById) => rotateSecret(contextOf(database, request), request.params.id),
    );
  };
}
