// GET /api/v1/{resource}/export?format=csv and POST /api/v1/{resource}/import.
// Thin: they read the request, call the CSV core (src/records/csv.ts), and
// write the answer. The upload reading is shared with the import page
// (src/http/csv-upload.ts).
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { listQuerySchema } from '../../derive/api-schema.ts';
import { AppError } from '../../errors.ts';
import { exportCsv, exportFilename } from '../../records/csv.ts';
import { importFields } from '../../records/import-columns.ts';
import { IMPORT_MAX_BYTES, type ImportReport, upsertFields } from '../../records/import.ts';
import { ROW_ERROR } from '../../records/import-rows.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { IMPORT_MULTIPART, importUpload, uploadError } from '../csv-upload.ts';
import { problem } from '../openapi.ts';

const MIB = 1024 * 1024;

const fieldErrors = { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } };
const count = (description: string) => ({ type: 'integer', description });

const failures = {
  failed: {
    type: 'array',
    description: [
      'rows that were (or would be) skipped, in row order, at most 1000 of them, with their cells and reasons.',
      `errors maps a field to its messages; ${ROW_ERROR} holds a problem of the whole row (a wrong number of values).`,
    ].join(' '),
    items: {
      type: 'object',
      properties: {
        row: count(
          'the data row: the header row is row 0, the first row under it is row 1 (blank lines are not counted)',
        ),
        line: count('the line of the file on which the row starts (the header is usually line 1)'),
        errors: fieldErrors,
        cells: { type: 'array', items: { type: 'string' }, description: 'the row as read, in the file’s column order' },
      },
      required: ['row', 'line', 'errors', 'cells'],
    },
  },
  failed_truncated: count('present when more than 1000 rows failed: how many more failed than are listed'),
  columns: {
    type: 'array',
    description: 'each column of the file and the field it filled (null: left out)',
    items: {
      type: 'object',
      properties: { header: { type: 'string' }, field: { type: ['string', 'null'] } },
      required: ['header', 'field'],
    },
  },
  encoding: { type: 'string', enum: ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252'], description: 'as detected' },
  delimiter: { type: 'string', enum: [',', ';', '\t'], description: 'the separator, as detected' },
};

function importReportSchema() {
  return {
    description: [
      'what was imported, and the rows that were not. A dry run answers would_create and would_update in place of',
      'import_id, created and updated.',
    ].join(' '),
    type: 'object',
    properties: {
      import_id: { type: 'integer', format: 'int64', description: 'roll it back with POST /imports/{id}/rollback' },
      created: count('rows written as new records'),
      updated: count('rows that updated the record they matched (upsert_by)'),
      would_create: count('dry run: rows that would be new records'),
      would_update: count('dry run: rows that would change the record they match'),
      unchanged: count('rows that match a record already holding their values'),
      ...failures,
    },
    required: ['unchanged', 'failed', 'columns', 'encoding', 'delimiter'],
  };
}

/** An import's report as the API answers it: a dry run says what would happen. */
export function importAnswer({ dryRun, ...report }: ImportReport & { dryRun: boolean }) {
  if (!dryRun) return report;
  const { created, updated, import_id: _none, ...rest } = report;
  return { would_create: created, would_update: updated, ...rest };
}

export function csvRoutes(database: Database, resource: Resource) {
  const tags = [resource.name];
  const list = listQuerySchema(resource) as { properties: Record<string, unknown> };
  // An export is the whole list: no paging parameters.
  const listParams = Object.fromEntries(
    Object.entries(list.properties).filter(([name]) => !['page', 'per_page', 'cursor'].includes(name)),
  );
  const columns = importFields(resource);
  const matchable = upsertFields(resource).map((f) => f.name);

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
          summary: `Import ${resource.name} from CSV (or, with dry_run, preview the import)`,
          description: [
            `multipart/form-data with one file in the field file, at most ${IMPORT_MAX_BYTES / MIB} MiB: CSV separated`,
            'by commas, semicolons or tabs, in UTF-8 (with or without a byte order mark), UTF-16 with a byte order',
            'mark, or Windows-1252; both are detected. The first row names the columns. A header matches a field by',
            'its name or label, ignoring case, spaces, - and _ (E-mail is email), or by a usual synonym (Mobile is',
            `phone); a mapping chosen before for ${resource.name} is remembered.`,
            'mapping (a form field before the file, or a query parameter) is a JSON object of header to field name,',
            'or to null to leave the column out;',
            `a column that fills no field is left out and listed in columns with field null. Fields:`,
            `${columns.writable.map((f) => f.name).join(', ')}; ${columns.readOnly.map((f) => f.name).join(', ')}`,
            'are read-only (id is used by upsert_by=id).',
            'Each row is checked and stored like POST (an empty cell is null, true/false booleans, dates YYYY-MM-DD',
            'or RFC 3339, a reference by id or by name, a user by email); with upsert_by a row matching a record',
            `(by ${matchable.join(' or ')}) updates it like PATCH instead. Valid rows are written in batches, a`,
            'transaction each, and kept; invalid rows are skipped and reported in failed with their cells.',
            'dry_run=true writes nothing and answers what would happen. Every import answers its import_id, which',
            'POST /imports/{id}/rollback undoes; GET /imports/{id}/failed downloads the failed rows as CSV.',
            'If the file turns out to be malformed CSV part-way (400, naming the line), the rows before that point',
            'are kept and the detail says how many.',
          ].join(' '),
          consumes: ['multipart/form-data'],
          querystring: {
            type: 'object',
            properties: {
              dry_run: { type: 'string', enum: ['true', 'false'], default: 'false', description: 'preview only' },
              upsert_by: {
                type: 'string',
                enum: matchable,
                description: 'update the record a row matches by this field',
              },
              mapping: { type: 'string', description: 'JSON: {"header": "field" or null}' },
            },
            additionalProperties: false,
          },
          body: {
            type: 'object',
            properties: {
              mapping: { type: 'string', description: 'JSON: {"header": "field" or null}, before the file' },
              upsert_by: { type: 'string', enum: matchable, description: 'before the file' },
              dry_run: { type: 'string', enum: ['true', 'false'], description: 'before the file' },
              file: { type: 'string', format: 'binary', description: 'the CSV file' },
            },
            required: ['file'],
          },
          response: {
            200: importReportSchema(),
            400: problem('malformed CSV (the detail names the line) or an unreadable upload'),
            403: problem('your role may not import these records'),
            413: problem(`the file is larger than ${IMPORT_MAX_BYTES / MIB} MiB`),
            415: problem('not multipart/form-data, or the file is not CSV text'),
            422: problem(
              'no file, an empty file, a file none of whose columns fills a field, two columns filling one field, ' +
                'a bad mapping or upsert_by (each named in errors)',
            ),
          },
        },
      },
      async (request) => importAnswer(await importUpload(contextOf(database, request), resource, request)),
    );
  };
}
