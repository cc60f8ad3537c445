import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/connection.ts';
import { AppError } from '../errors.ts';

const READY_TIMEOUT_MS = 2000;

export function healthRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    const status = { type: 'object', properties: { status: { type: 'string' } } };
    app.get(
      '/healthz',
      { schema: { tags: ['health'], security: [], summary: 'The process is up', response: { 200: status } } },
      () => ({ status: 'ok' }),
    );
    app.get(
      '/readyz',
      { schema: { tags: ['health'], security: [], summary: 'The database answers', response: { 200: status } } },
      async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        });
        try {
          await Promise.race([database.ping(), timeout]);
        } catch {
          throw new AppError(503, 'unavailable', 'The database does not answer.');
        } finally {
          clearTimeout(timer);
        }
        return { status: 'ready' };
      },
    );
  };
}
