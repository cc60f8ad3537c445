// What a request hands to the operations, the same for the JSON API and the pages.
import type { FastifyRequest } from 'fastify';
import type { Database } from '../db/connection.ts';
import type { Context } from '../records/operations.ts';

/** The operations' context for a request: the database and who is calling. */
export function contextOf(database: Database, request: FastifyRequest): Context {
  return { database, actor: request.actor, sessionId: request.session?.id };
}
