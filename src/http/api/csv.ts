// GET /api/v1/{resource}/export?format=csv and POST /api/v1/{resource}/import.
// Thin: they read the request, call the CSV core (src/records/csv.ts), and
// write the answer. The upload reading is shared with the import page
// (src/http/csv-upload.ts).
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { listQuerySchema } from '../../derive/api-schema.ts';
import { AppError } from '../../errors.ts';
import { exportCsv, exportFilename, IMPORT_MAX_BYTES, importColumns, ROW_ERROR } from '../../records/csv.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { IMPORT_MULTIPART, importUpload, uploadError } from '../csv-upload.ts';
import { problem } from '../openapi.ts';

const MIB = 1024 * 1024;

const fieldErrors = { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } };

function importReportSchema() {
  return {
    description: 'what was imported, and the rows that were not',
    type: 'object',
    properties: {
      created: { type: 'integer', description: 'rows written' },
      failed: {
        type: 'array',
        description: [
          'rows that were skipped, in row order, at most 1000 of them. errors maps a field to its messages;',
          `${ROW_ERROR} holds a problem of the whole row (a wrong number of values).`,
        ].join(' '),
        items: {
          type: 'object',
          properties: {
            row: {
              type: 'integer',
              description:
                'the data row: the header row is row 0, the first row under it is row 1 (blank lines are not counted)',
            },
            line: {
              type: 'integer',
              description: 'the line of the file on which the row starts (the header is usually line 1)',
            },
            errors: fieldErrors,
          },
          required: ['row', 'line', 'errors'],
        },
      },
      failed_truncated: {
        type: 'integer',
        description: 'present when more than 1000 rows failed: how many more failed than are listed',
      },
    },
    required: ['created', 'failed'],
  };
}

export function csvRoutes(database: Database, resource: Resource) {
  const tags = [resource.name];
  const list = listQuerySchema(resource) as { properties: Record<string, unknown> };
  // An export is the whole list: no paging parameters.
  const listParams = Object.fromEntries(
    Object.entries(list.properties).filter(([name]) => !['page', 'per_page', 'cursor'].includes(name)),
  );
  const columns = importColumns(resource);

  return async function plugin(app: FastifyInstance) {
    await app.register(multipart, IMPORT_MULTIPART);
    // Upload problems answer as problems of this route (the app's handler would ask for JSON); the rest go on to it.
    app.setErrorHandler((error: FastifyError) => {
      throw uploadError(error) ?? error;
    });

    app.get(
      '/export',
      {
        schema: {
          tags,
          summary: `Export ${resource.name} as CSV`,
          description: [
            `The whole filtered, sorted list (search, filter and sort as for GET /api/v1/${resource.name}; no`,
            `paging), streamed.`,
            'A header row of the field names in index, then one row per record: an empty cell is null, booleans',
            'are true/false,',
            'date-times RFC 3339 UTC, big integers exact. A text cell that starts with = + - @, a tab or a',
            'carriage return is',
            "prefixed with ' so that a spreadsheet does not run it as a formula (the import removes it again).",
          ].join(' '),
          querystring: {
            type: 'object',
            properties: {
              format: { type: 'string', enum: ['csv'], default: 'csv' },
              bom: {
                type: 'string',
                enum: ['true', 'false'],
                default: 'false',
                description: 'true starts the file with a UTF-8 byte order mark (for Excel)',
              },
              ...listParams,
            },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'the CSV file (text/csv; charset=utf-8), as an attachment',
              headers: {
                'Content-Disposition': {
                  type: 'string',
                  description: `attachment; filename="${resource.name}-YYYY-MM-DD.csv"`,
                },
              },
              content: { 'text/csv': { schema: { type: 'string' } } },
            },
            403: problem('users are for admins only'),
            422: problem('an unknown format, or invalid list parameters'),
          },
        },
      },
      async (request, reply) => {
        const { format, bom, ...query } = request.query as Record<string, unknown>;
        if (format !== undefined && format !== 'csv')
          throw new AppError(422, 'validation_failed', 'The only export format is csv.', { format: ['must be csv'] });
        if (bom !== undefined && bom !== 'true' && bom !== 'false')
          throw new AppError(422, 'validation_failed', 'bom is true or false.', { bom: ['must be true or false'] });
        const stream = await exportCsv(contextOf(database, request), resource, query, { bom: bom === 'true' });
        return reply
          .type('text/csv; charset=utf-8')
          .header('Content-Disposition', `attachment; filename="${exportFilename(resource)}"`)
          .header('Cache-Control', 'private, no-store')
          .send(stream);
      },
    );

    app.post(
      '/import',
      {
        schema: {
          tags,
          summary: `Import ${resource.name} from CSV`,
          description: [
            `multipart/form-data with one file in the field file, at most ${IMPORT_MAX_BYTES / MIB} MiB, UTF-8`,
            `(a byte order mark is fine), comma-separated.`,
            `Its first row names the columns: ${columns.writable.map((f) => f.name).join(', ')};`,
            `${columns.ignored.map((f) => f.name).join(', ')} are read-only and ignored. Another name is a 422`,
            `before any row is written.`,
            'Each row is checked and stored like POST: an empty cell is null, true/false (or 1/0) booleans,',
            'dates YYYY-MM-DD or RFC 3339.',
            'Valid rows are written in batches of 500 rows, a transaction each, and kept; invalid rows are',
            'skipped and reported in failed,',
            'numbered as data rows (the header is row 0, the first row under it row 1). A row is never half-written.',
            'If the file turns out to be malformed CSV part-way (400, naming the line), the rows before that',
            'point are kept and the detail says how many.',
          ].join(' '),
          consumes: ['multipart/form-data'],
          body: {
            type: 'object',
            properties: { file: { type: 'string', format: 'binary', description: 'the CSV file' } },
            required: ['file'],
          },
          response: {
            200: importReportSchema(),
            400: problem('malformed CSV (the detail names the line) or an unreadable upload'),
            403: problem('users are for admins only'),
            413: problem(`the file is larger than ${IMPORT_MAX_BYTES / MIB} MiB`),
            415: problem('not multipart/form-data, or the file is not CSV text'),
            422: problem(
              'no file, an empty file, or header names that are not columns you can import (each named in errors)',
            ),
          },
        },
      },
      (request) => importUpload(contextOf(database, request), resource, request),
    );
  };
}
