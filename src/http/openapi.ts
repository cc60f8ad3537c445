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

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}

/** `POST /api/v1/imports/{id}/rollback` → `postImportsByIdRollback`: unique, as method and path are. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1\//, '/')
    .split('/')
    .filter(Boolean)
    .flatMap((part) => (part.startsWith('{') ? ['by', part.slice(1, -1)] : [part]))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/).filter(Boolean));
  return [method, ...words].map((w, i) => (i ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join('');
}

/**
 * What every operation has in common, said once here rather than by each route: an operationId from its method and
 * path; a signed-in one answers 401 without a session or a valid token, and 403 when not allowed; one that reads
 * input answers 422 naming the invalid fields (the schema's own check), and a POST with a body it cannot read 415.
 */
function completeOperation(operation: Operation, method: string, path: string) {
  // Added to the finished document: the problem schema by its place there, as the routes' own references became.
  const problem = (description: string) => ({
    description,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  });
  operation.operationId ??= operationIdOf(method, path);
  operation.responses ??= {};
  const { responses } = operation;
  const signedIn = !(Array.isArray(operation.security) && operation.security.length === 0);
  if (signedIn) responses['401'] ??= problem('not signed in: no session, or an unknown, revoked or expired token');
  // Any signed-in call may meet a token without the ability it needs (src/http/access.ts), whatever the role may do.
  if (signedIn)
    responses['403'] ??= problem(
      'not allowed: the role may not do this, or the access token lacks the ability it needs (code missing_ability)',
    );
  if (Object.keys(responses).some((code) => code.startsWith('4'))) return;
  if (operation.requestBody || operation.parameters?.length)
    responses['422'] = problem('invalid fields, each named in errors');
  else if (method !== 'get') responses['415'] = problem('a body that is not JSON');
}

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    // Web pages carry no tags: only the JSON API is documented.
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Leadbook API',
        version,
        license: { name: 'MIT', identifier: 'MIT' },
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
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject;
      const { openapiObject } = documents;
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        // filter[field][op]=value is a deepObject parameter; the plugin cannot say so per parameter.
        for (const param of item?.get?.parameters ?? []) {
          if ('name' in param && param.name === 'filter' && param.in === 'query')
            Object.assign(param, { style: 'deepObject', explode: true });
        }
        for (const method of METHODS) {
          const operation = (item as Record<string, Operation | undefined> | undefined)?.[method];
          if (operation) completeOperation(operation, method, path);
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
