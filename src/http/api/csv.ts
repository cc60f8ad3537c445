// GET /api/v1/{resource}/export?format=csv and POST /api/v1/{resource}/import (filled in by the CSV work).
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import type { Resource } from '../../schema/resource.ts';

export function csvRoutes(_database: Database, _resource: Resource) {
  return async function plugin(_app: FastifyInstance) {};
}
