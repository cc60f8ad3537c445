// The settings admins keep: the words of the state fields (the seed's three booleans). GET /schema shows them too.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { currentLabels, type Labels, STATE_WORDS, saveLabels } from '../../records/settings.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const words = {
  type: 'object',
  description: 'The field label and the words for true, false and not set (null); empty: as declared',
  properties: Object.fromEntries(STATE_WORDS.map((w) => [w, { type: 'string', maxLength: 50 }])),
  additionalProperties: false,
};
const labels = {
  type: 'object',
  description: 'By `resource.field`, e.g. `inquiries.status`',
  additionalProperties: words,
};

export function settingsRoutes(database: Database, resources: readonly Resource[]) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/settings/labels',
      {
        schema: {
          tags: ['settings'],
          summary: 'The words of the state fields',
          response: { 200: { type: 'object', properties: { data: labels } } },
        },
      },
      async () => ({ data: currentLabels(resources) }),
    );
    app.put(
      '/settings/labels',
      {
        schema: {
          tags: ['settings'],
          summary: 'Sets the words of the state fields (admins); logged as settings_changed',
          body: labels,
          response: {
            200: { type: 'object', properties: { data: labels } },
            403: problem('not an admin'),
            422: problem('a word over 50 characters'),
          },
        },
      },
      async (request) => {
        const body = request.body;
        const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Labels) : {};
        await saveLabels(contextOf(database, request), resources, input);
        return { data: currentLabels(resources) };
      },
    );
  };
}
