// What a request hands to the operations, the same for the JSON API and the pages.
import type { FastifyRequest } from 'fastify';
import type { Database } from '../db/connection.ts';
import type { Context } from '../records/operations.ts';

/** The operations' context for a request: the database, who is calling and through which door. */
export function contextOf(database: Database, request: FastifyRequest): Context {
  const via = request.url.startsWith('/api/') ? 'api' : 'web';
  return { database, actor: request.actor, sessionId: request.session?.id, via, authEpoch: request.authEpoch };
}
