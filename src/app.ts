// Builds the Fastify app: external plugins, then app plugins, then routes.
import Fastify, { type FastifyInstance } from 'fastify';
import qs from 'qs';
import type { Database } from './db/connection.ts';
import { inputSchema, listSchema, oneSchema, recordSchema } from './derive/api-schema.ts';
import { recordRoutes } from './http/api/records.ts';
import { schemaRoutes } from './http/api/schema.ts';
import { healthRoutes } from './http/health.ts';
import { registerJsonParser } from './http/json.ts';
import { problemSchema, registerOpenApi } from './http/openapi.ts';
import { registerProblemHandlers } from './http/problem.ts';
import { buildSerializerFactory } from './http/serializer.ts';
import { recordResources, resources } from './resources/index.ts';

export interface AppOptions {
  database: Database;
  logLevel?: string;
  /** Where log lines go (tests capture them). */
  logStream?: NodeJS.WritableStream;
}

const JSON_BODY_LIMIT = 1024 * 1024;
export const VERSION = '0.1.0';

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel ?? 'info',
      ...(options.logStream ? { stream: options.logStream } : {}),
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
    },
    bodyLimit: JSON_BODY_LIMIT,
    // filter[name][contains]=x arrives as nested objects; qs never builds
    // prototype keys and its limits bound the work a query can cause.
    routerOptions: {
      ignoreTrailingSlash: true,
      querystringParser: (s: string) => qs.parse(s, { depth: 2, parameterLimit: 100, arrayLimit: 0, allowPrototypes: false, strictDepth: false }),
    },
    // Fastify's factory type is overloaded per server kind; ours serves any.
    schemaController: { compilersFactory: { buildSerializer: buildSerializerFactory as never } },
    forceCloseConnections: 'idle',
  });

  registerJsonParser(app);
  registerProblemHandlers(app);
  await registerOpenApi(app, VERSION);

  app.addSchema(problemSchema);
  for (const resource of recordResources) {
    for (const schema of [recordSchema(resource), inputSchema(resource), oneSchema(resource), listSchema(resource)]) app.addSchema(schema);
  }

  const ctx = { database: options.database };
  await app.register(healthRoutes(options.database));
  await app.register(schemaRoutes(resources), { prefix: '/api/v1' });
  for (const resource of recordResources) {
    await app.register(recordRoutes(ctx, resource), { prefix: `/api/v1/${resource.name}` });
  }
  return app;
}
