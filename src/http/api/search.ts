// GET /api/v1/search: contacts and inquiries at once, grouped, a few of each with how many match in all.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { MAX_SEARCH_LENGTH, SEARCH_LIMIT } from '../../records/search.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';
import { searchFor } from '../search.ts';

const result = {
  type: 'object',
  properties: {
    id: { type: 'integer', format: 'int64' },
    title: { type: 'string', description: 'the name, or "Contact #12" for a record without one' },
    subtitle: {
      type: ['string', 'null'],
      description: 'email or else phone; for an inquiry also its stage, by name (joined by " · ")',
    },
    url: { type: 'string', description: 'the record’s page in the web app, e.g. /contacts/12' },
  },
  required: ['id', 'title', 'subtitle', 'url'],
};

const group = {
  type: 'object',
  properties: {
    resource: { type: 'string', description: 'contacts or inquiries: read the records at /api/v1/{resource}/{id}' },
    label: { type: 'string' },
    total: {
      type: 'integer',
      description: 'how many records of the resource match (GET /api/v1/{resource}?search=q), counted up to 1,000',
    },
    more: { type: 'boolean', description: 'true when more than `total` match (the count stopped at 1,000)' },
    results: { type: 'array', items: result, description: 'the first `limit`, newest first' },
  },
  required: ['resource', 'label', 'total', 'more', 'results'],
};

export function searchRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/search',
      {
        schema: {
          tags: ['search'],
          summary: 'Search contacts and inquiries at once (what the web app’s search box shows)',
          description:
            'The words mean what `search=` means in a list: each must occur in a searchable text field, or equal a ' +
            'searchable integer field (a ticket number). One group per resource you may read, in a fixed order.',
          querystring: {
            type: 'object',
            properties: {
              q: {
                type: 'string',
                minLength: 1,
                maxLength: MAX_SEARCH_LENGTH,
                description: 'the words (not blank, at most 200 characters, at most 10 words)',
              },
              limit: {
                type: 'integer',
                minimum: 1,
                maximum: SEARCH_LIMIT.max,
                default: SEARCH_LIMIT.default,
                description: 'results per group',
              },
            },
            required: ['q'],
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one group per resource',
              type: 'object',
              properties: { data: { type: 'array', items: group } },
              required: ['data'],
            },
            422: problem('q blank or too long, or limit out of range; errors names which'),
          },
        },
      },
      async (request) => ({
        data: await searchFor(contextOf(database, request), (request.query ?? {}) as Record<string, unknown>),
      }),
    );
  };
}
