// The OpenAPI 3.1 document, generated from the same schemas the routes use,
// at /api/v1/openapi.json, and a readable reference at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** A route's problem answer in its OpenAPI schema: application/problem+json, described. */
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
});

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details; `errors` maps a field to its messages.',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'validation_failed, not_found, precondition_failed, malformed_json, …' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
  required: ['type', 'title', 'status', 'detail', 'code'],
};

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    // Web pages carry no tags: only the JSON API is documented.
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Leadbook API',
        version,
        description:
          'Contacts, inquiries and team accounts. Errors are application/problem+json. Big ' +
          'integers are exact JSON numbers; a request may also send them as digit strings.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal access token (POST /api/v1/auth/token or /api/v1/me/tokens).',
          },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'leadbook_session',
            description: 'The browser session (__Host-leadbook_session over HTTPS).',
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    // filter[field][op]=value is a deepObject parameter; the plugin cannot say so per parameter.
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject;
      const { openapiObject } = documents;
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const param of item?.get?.parameters ?? []) {
          if ('name' in param && param.name === 'filter' && param.in === 'query')
            Object.assign(param, { style: 'deepObject', explode: true });
        }
      }
      return openapiObject;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // staticCSP: the reference page gets a CSP with hashes of its own scripts instead of 'unsafe-inline'.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
