// The profile pages (filled in by the profile work).
import type { FastifyInstance } from 'fastify';
import type { Accounts } from '../../accounts/context.ts';

export function profilePages(_a: Accounts) {
  return async function plugin(_app: FastifyInstance) {};
}
