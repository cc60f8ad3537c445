// CSV import and export pages (filled in by the CSV work).
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import type { Resource } from '../../schema/resource.ts';

export function csvPages(_database: Database, _resource: Resource) {
  return async function plugin(_app: FastifyInstance) {};
}
