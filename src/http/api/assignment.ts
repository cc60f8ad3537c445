// "Which rule would take this inquiry?": the assignment rules run on the given fields without taking a turn
// (admins; CONTRACT.md, "Assignment, notifications, tasks").
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { dryRun } from '../../resources/assignment.ts';
import { MATCH_KEYS } from '../../resources/assignment-rule.ts';
import { problem } from '../openapi.ts';

const named = {
  type: ['object', 'null'],
  properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } },
};

export function assignmentRoutes(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.post(
      '/assignment-rules/dry-run',
      {
        schema: {
          tags: ['assignment-rules'],
          summary: 'Which rule would take an inquiry with these fields, and whom it would go to (takes no turn)',
          body: {
            type: 'object',
            properties: Object.fromEntries(MATCH_KEYS.map((k) => [k, { type: ['string', 'integer', 'null'] }])),
          },
          response: {
            200: {
              description: 'the rule, the user (null: none can take it) and the due time; all null: no rule matches',
              type: 'object',
              properties: {
                data: {
                  type: 'object',
                  properties: { rule: named, user: named, due_at: { type: ['string', 'null'], format: 'date-time' } },
                },
              },
            },
            422: problem('the body is not an object'),
          },
        },
      },
      async (request) => {
        if (request.actor?.role !== 'admin')
          throw new AppError(403, 'forbidden', 'Only admins may try the assignment rules.');
        return { data: await dryRun(database.db, request.body) };
      },
    );
  };
}
