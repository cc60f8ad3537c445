// CSV export and import for any declared resource. Both stream: an export
// walks the filtered list with keyset paging, a page at a time; an import
// parses the upload as it arrives and writes valid rows in batches, one
// transaction per batch. The API and the pages are thin doors over these two
// functions; the rules (who may, what is valid) are the record operations'.
import { once } from 'node:events';
import { pipeline, Readable, Transform } from 'node:stream';
import { type CsvError, parse, type Parser } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { parseListQuery } from '../derive/list-query.ts';
import { formInput } from '../derive/form-values.ts';
import { AppError, type FieldErrors, validationFailed } from '../errors.ts';
import type { Field, Resource } from '../schema/resource.ts';
import { auditLog } from './change-log.ts';
import { authorize, type Context, insertPreparedBatch, prepareCreate, readScopeOf } from './operations.ts';
import { selectRows, type Row } from './repository.ts';
import { asRecordTables, type Executor } from '../db/tables.ts';
import { sql } from 'kysely';

/** The largest file an import reads (the HTTP doors answer 413 beyond it). */
export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;
/** Rows per SELECT of an export. */
const BATCH = 500;
/** Rows per transaction of an import: big batches make few, large multi-row INSERTs. */
const IMPORT_BATCH = 2000;
/** Failed rows listed in an import report; the rest are only counted. */
const MAX_FAILURES = 1000;
/** One row of a CSV file may not be longer than this: memory stays bounded. */
const MAX_RECORD_BYTES = 1024 * 1024;
/** Key of a failure that concerns the whole row, not one field (never a field name: those start with a letter). */
export const ROW_ERROR = '_row';

// ---------------------------------------------------------------- columns

/** The columns of an export: the fields *in index*, never hidden ones. */
export const exportFields = (resource: Resource): Field[] => resource.visible.filter((f) => f.inIndex);

/**
 * The header names an import understands: the writable fields (a user's
 * password too), and the visible read-only ones (id, timestamps, fields kept
 * by the server), which are ignored as the JSON API ignores them, so that an
 * exported file imports again. A hidden read-only field (a 2FA secret) is no
 * column at all.
 */
export function importColumns(resource: Resource): { writable: Field[]; ignored: Field[] } {
  return {
    writable: [...resource.writable],
    ignored: resource.visible.filter((f) => f.readOnly),
  };
}

/** `contacts-2026-11-22.csv` (the date in UTC). */
export function exportFilename(resource: Resource, now = new Date()): string {
  return `${resource.name}-${now.toISOString().slice(0, 10)}.csv`;
}

const CSV_TYPES = new Set([
  'text/csv',
  'text/plain',
  'text/x-csv',
  'application/csv',
  'application/x-csv',
  'text/comma-separated-values',
  'text/x-comma-separated-values',
  'application/vnd.ms-excel',
  'application/octet-stream',
  '',
]);

/**
 * Whether an upload says it is CSV: a .csv or .txt name (or none), and a type
 * browsers and tools give CSV files (Excel's Windows type, or none in particular).
 */
export function looksLikeCsv(filename: string, mimetype: string): boolean {
  const extension = /\.([^./\\]+)$/.exec(filename)?.[1]?.toLowerCase();
  const type = mimetype.split(';')[0]!.trim().toLowerCase();
  return (extension === undefined || extension === 'csv' || extension === 'txt') && CSV_TYPES.has(type);
}

// ---------------------------------------------------------------- formula injection

// A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage
// return before one) as a formula, so a value typed by a stranger into a
// contact form could run in the exporting user's Excel ("CSV injection").
// Following OWASP's advice, an exported text cell that starts with one of
// these characters is prefixed with a single quote, which spreadsheets show
// as text. So that export and import round-trip exactly, a text value that
// already starts with quotes before such a character gets one more quote, and
// the import takes one quote off such a cell: '=1+1 (a file) ⇄ =1+1 (stored).
// Only text fields are escaped: numbers, booleans and dates cannot hold one.
const FORMULA = /^'*[=+\-@\t\r]/;
const ESCAPED_FORMULA = /^'+[=+\-@\t\r]/;

/** A text cell as it is exported: quoted off when a spreadsheet would run it. */
export const textCell = (text: string) => (FORMULA.test(text) ? `'${text}` : text);

/**
 * A cell's text; `textual`: it holds words a person wrote (a name too, for a reference), which may look like a
 * formula.
 */
function exportCell(field: Field, value: unknown, textual = field.kind.textual): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // Big integers are BigInt in rows: String() writes them exactly.
  const text = String(value);
  return textual && FORMULA.test(text) ? `'${text}` : text;
}

function importCell(field: Field, text: string, textual = field.kind.textual): string {
  return textual && ESCAPED_FORMULA.test(text) ? text.slice(1) : text;
}

// ---------------------------------------------------------------- export

/** Paging parameters are left out: an export is the whole filtered, sorted list. */
const NOT_FOR_EXPORT = new Set(['page', 'per_page', 'cursor']);

export interface ExportOptions {
  /** Start with a UTF-8 byte order mark, so that Excel reads accents and emoji right. */
  bom?: boolean;
  pageSize?: number;
  /** Told how many records have been read so far, after each page. */
  onProgress?: (records: number) => void;
}

/**
 * The filtered, sorted list (search, filter and sort as for listRecords) as a
 * CSV stream: a header row of the field names in index, then one row per
 * record. null is an empty cell, booleans true/false, dates RFC 3339 UTC,
 * big integers exact. Access and the list parameters are checked, and the
 * first page read, before the stream is handed back, so those failures are
 * ordinary errors; memory stays bounded by one page however long the list.
 */
export async function exportCsv(
  ctx: Context,
  resource: Resource,
  query: Record<string, unknown>,
  options: ExportOptions = {},
): Promise<Readable> {
  const actor = authorize(ctx, resource, 'export');
  const fields = exportFields(resource);
  const listQuery = Object.fromEntries(Object.entries(query).filter(([key]) => !NOT_FOR_EXPORT.has(key)));
  const plan = { ...parseListQuery(resource, { ...listQuery, cursor: '' }), scope: readScopeOf(actor, resource) };
  const size = options.pageSize ?? BATCH;
  const { db } = ctx.database;
  // Keyset paging: each page is one indexed query for the rows after the last one seen.
  const pageAfter = (after: unknown[] | null) =>
    selectRows(db, resource, { ...plan, paging: { mode: 'cursor', perPage: size, after } }, size, 0);
  const first = await pageAfter(null);

  // A reference is written as the name the import takes back (a source's name, a user's email) where one names a
  // record alone; else (a contact) as its id.
  const named = fields.flatMap((f) => {
    const by = f.target && namesOf(f.target).find((n) => n.unique);
    return f.target && by ? [{ field: f, target: f.target, by }] : [];
  });
  async function namesOnPage(page: Row[]): Promise<Map<Field, Map<string, string>>> {
    const out = new Map<Field, Map<string, string>>();
    for (const { field, target, by } of named) {
      const ids = [...new Set(page.map((r) => r[field.name]).filter((v) => v !== null && v !== undefined))];
      const pk = target.primaryKey.name;
      const rows = ids.length
        ? await asRecordTables(db).selectFrom(target.table).select([pk, by.name]).where(pk, 'in', ids).execute()
        : [];
      out.set(field, new Map(rows.map((r) => [String(r[pk]), String(r[by.name])])));
    }
    return out;
  }

  async function* records(): AsyncGenerator<string[]> {
    yield fields.map((f) => f.name);
    let page: Row[] = first;
    let read = 0;
    for (;;) {
      const names = await namesOnPage(page);
      for (const row of page)
        yield fields.map((f) => {
          const value = row[f.name];
          const name = value === null || value === undefined ? undefined : names.get(f)?.get(String(value));
          return name === undefined ? exportCell(f, value) : exportCell(f, name, true);
        });
      read += page.length;
      options.onProgress?.(read);
      if (page.length < size) return;
      const last = page.at(-1)!;
      page = await pageAfter(plan.sort.map((k) => last[k.field.name] ?? null));
    }
  }

  // RFC 4180: CRLF between records; a value with a line break is always quoted.
  const out = stringify({ bom: options.bom ?? false, record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  // A failure mid-way (the database gone) ends the download with an error instead of a short file that looks whole.
  pipeline(Readable.from(records()), out, () => {});
  return out;
}

// ---------------------------------------------------------------- import

export interface ImportFailure {
  /** The data row: the header is row 0, the first row under it row 1 (blank lines are not counted). */
  row: number;
  /** The line of the file on which the row starts (the header is usually line 1). */
  line: number;
  errors: FieldErrors;
}

export interface ImportReport {
  created: number;
  /** Rows that were not imported, by row number; at most MAX_FAILURES of them. */
  failed: ImportFailure[];
  /** How many more rows failed than are listed (present only when some were left out). */
  failed_truncated?: number;
}

export interface ImportOptions {
  batchSize?: number;
  maxBytes?: number;
  /** Told the bytes of the file read so far and the rows created and failed, after each batch. */
  onProgress?: (progress: { bytes: number; created: number; failed: number }) => void;
}

interface Column {
  name: string;
  /** The field a cell of this column sets; undefined for a read-only column, which is ignored. */
  field?: Field;
}

/**
 * Reads the header row: every name must be a field an import can set or ignores; else a 422 before anything is
 * written.
 */
function readHeader(resource: Resource, names: string[]): Column[] {
  const { writable, ignored } = importColumns(resource);
  const known = new Map([...writable, ...ignored].map((f) => [f.name, f]));
  const errors: FieldErrors = Object.create(null);
  const addError = (key: string, message: string) => {
    errors[key] ??= [];
    errors[key].push(message);
  };
  const seen = new Set<string>();
  const columns = names.map((raw, i): Column => {
    const name = raw.trim();
    const field = known.get(name);
    if (name === '') addError(`column ${i + 1}`, 'has no name in the header row');
    else if (seen.has(name)) addError(name, 'is given twice in the header row');
    else if (!field) addError(name, 'is not a column you can import');
    seen.add(name);
    return { name, field: field && !field.readOnly ? field : undefined };
  });
  const unknown = Object.keys(errors);
  if (unknown.length) {
    const importable = writable.map((f) => f.name).join(', ');
    throw validationFailed(
      errors,
      `The header row has columns ${resource.name} cannot import: ${unknown.join(', ')}. ` +
        `Columns you can import: ${importable}. Nothing was imported.`,
    );
  }
  return columns;
}

/**
 * A row's cells as the JSON API would receive them ("" is null, "true"/"false"
 * booleans, digits integers). An empty cell of a field that cannot be null is
 * left out, as if the column were missing: the field's default applies, or
 * the row is told the field is required.
 */
function rowInput(resource: Resource, columns: Column[], cells: string[]): Record<string, unknown> {
  const form: Record<string, string> = Object.create(null);
  columns.forEach(({ field }, i) => {
    const text = cells[i]!;
    if (!field || (!field.nullable && text.trim() === '')) return;
    form[field.name] = importCell(field, text);
  });
  return formInput(resource, form);
}

/**
 * The fields a cell may name a referenced record by, instead of its id: its unique text fields (a user's email, a
 * source's name), then its title; compared case-insensitively.
 */
const namesOf = (target: Resource) => [
  ...new Set([...target.fields.filter((f) => f.unique && f.kind.textual && !f.hidden), target.title]),
];

/**
 * Replaces each reference cell that is not an id by the id of the one record it names (CONTRACT.md: "CSV import also
 * takes the referenced record's name (for users: email)"); answers the cells, or the errors of the cells that name
 * none or several. `known` remembers the answers for the rest of the import.
 */
async function namedReferences(
  db: Executor,
  columns: Column[],
  cells: string[],
  known: Map<string, string | null>,
): Promise<{ cells: string[]; errors?: FieldErrors }> {
  const out = [...cells];
  const errors: FieldErrors = {};
  for (const [i, { field }] of columns.entries()) {
    const target = field?.target;
    if (!target) continue;
    const text = importCell(field, cells[i] ?? '', true).trim();
    if (text === '' || /^\d+$/.test(text)) continue;
    const key = `${target.name}\u0000${text.toLowerCase()}`;
    if (!known.has(key)) {
      let found: string | null = null;
      for (const by of namesOf(target)) {
        const rows = await asRecordTables(db)
          .selectFrom(target.table)
          .select(target.primaryKey.name)
          .where(sql`lower(${sql.ref(by.name)})`, '=', text.toLowerCase())
          .limit(2)
          .execute();
        if (rows.length === 1) found = String(rows[0]![target.primaryKey.name]);
        if (rows.length) {
          if (rows.length > 1) found = '';
          break;
        }
      }
      known.set(key, found);
    }
    const id = known.get(key);
    if (id) out[i] = id;
    else
      errors[field.name] = [
        id === ''
          ? `names more than one ${target.singular} "${text}": give its id`
          : `names no ${target.singular}: there is no ${target.singular} "${text}"`,
      ];
  }
  return Object.keys(errors).length ? { cells: out, errors } : { cells: out };
}

/** Counts bytes (413 past the limit) and refuses NUL bytes: a spreadsheet or UTF-16 file is not UTF-8 CSV. */
function byteGuard(maxBytes: number): Transform & { seen: () => number } {
  let seen = 0;
  return Object.assign(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        seen += chunk.length;
        if (seen > maxBytes)
          return done(
            new AppError(
              413,
              'payload_too_large',
              `The file is larger than ${maxBytes / 1024 / 1024} MiB; split it into smaller files.`,
            ),
          );
        if (chunk.includes(0))
          return done(
            new AppError(
              415,
              'unsupported_media_type',
              'The file is not CSV text: save it as "CSV UTF-8 (comma delimited)".',
            ),
          );
        done(null, chunk);
      },
    }),
    { seen: () => seen },
  );
}

const PARSE_REASONS: Record<string, string> = {
  CSV_INVALID_CLOSING_QUOTE: 'a quoted value is followed by more text (inside quotes, write a quote as two quotes "")',
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed',
  CSV_MAX_RECORD_SIZE: `a row is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB`,
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'a quoted value is followed by more text',
};

interface Parsed {
  record?: string[];
  info?: { lines: number };
  /** Pushed in place of a record csv-parse could not read, so that every row before it is still seen. */
  malformed?: Unreadable;
}

type Unreadable = Error & { code?: string; lines?: number };

function malformedCsv(error: Unreadable): AppError {
  const line = error.lines;
  const reason = PARSE_REASONS[error.code ?? ''] ?? error.message;
  return new AppError(400, 'malformed_csv', `The file is not valid CSV${line ? ` at line ${line}` : ''}: ${reason}.`);
}

/** A row whose values hold line breaks starts that many lines before the line csv-parse reports, which is its last. */
const startLine = (endLine: number, cells: string[]) =>
  endLine - cells.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);

/**
 * Imports a CSV file: a header row of field names, then one record per row.
 * Each row goes through the same checks and defaults as createRecord
 * (created_by is the importer, passwords are hashed); valid rows are written
 * in batches, one transaction each, and kept; invalid rows are reported by
 * row number with their field errors and skipped. A row is never half-written.
 *
 * Unknown header names are a 422 before any row is written. When the file
 * turns out to be malformed CSV (400, naming the line), too large (413) or
 * not text (415) part-way, the rows before that point are written (and said
 * so in the error's detail) and nothing after it.
 */
export async function importCsv(
  ctx: Context,
  resource: Resource,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  authorize(ctx, resource, 'import');
  // An import's changes say so, whichever door brought the file; the command line is a door of its own.
  ctx = { ...ctx, via: ctx.via === 'cli' ? 'cli' : 'import' };
  const batchSize = options.batchSize ?? IMPORT_BATCH;
  const parser: Parser = parse({
    bom: true,
    info: true,
    skip_empty_lines: true,
    // A row with too few or too many cells is reported as a failed row, not a broken file.
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
    skip_records_with_error: true,
    on_skip: (error: CsvError | undefined) => {
      parser.push({ malformed: error ?? new Error('a row could not be read') } satisfies Parsed);
      return undefined;
    },
  });
  const guard = byteGuard(options.maxBytes ?? IMPORT_MAX_BYTES);
  pipeline(input, guard, parser, () => {});

  let created = 0;
  const failed: ImportFailure[] = [];
  let truncated = 0;
  const fail = (row: number, line: number, errors: FieldErrors) => {
    if (failed.length < MAX_FAILURES) failed.push({ row, line, errors: { ...errors } });
    else truncated++;
  };
  let batch: { row: number; line: number; values: Row }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const outcomes = await insertPreparedBatch(
      ctx,
      resource,
      batch.map((b) => b.values),
    );
    outcomes.forEach((error, i) => {
      if (error) fail(batch[i]!.row, batch[i]!.line, error.errors ?? { [ROW_ERROR]: [error.detail] });
      else created++;
    });
    batch = [];
    options.onProgress?.({ bytes: guard.seen(), created, failed: failed.length + truncated });
  };
  const report = (): ImportReport => {
    failed.sort((a, b) => a.row - b.row);
    return { created, failed, ...(truncated ? { failed_truncated: truncated } : {}) };
  };
  const soFar = () => {
    const failures = failed.length + truncated;
    return created || failures
      ? ` The rows before it were imported: ${created} created, ${failures} failed; nothing after it was.`
      : ' Nothing was imported.';
  };

  let columns: Column[] | undefined;
  const known = new Map<string, string | null>();
  let row = 0;
  const now = new Date().toISOString();
  try {
    for await (const item of parser as AsyncIterable<Parsed>) {
      if (item.malformed) throw malformedCsv(item.malformed);
      const cells = item.record!;
      if (!columns) {
        columns = readHeader(resource, cells);
        continue;
      }
      row++;
      const line = startLine(item.info!.lines, cells);
      // A row of empty cells (a spreadsheet's blank line) is not a record.
      if (cells.every((c) => c.trim() === '')) continue;
      if (cells.length !== columns.length) {
        fail(row, line, { [ROW_ERROR]: [`has ${cells.length} values; the header row has ${columns.length} columns`] });
        continue;
      }
      const named = await namedReferences(ctx.database.db, columns, cells, known);
      try {
        // A reference that names nothing is reported with the row's other errors (its cell is read as empty).
        const unnamed = new Set(Object.keys(named.errors ?? {}));
        const readable = named.cells.map((cell, i) => (unnamed.has(columns![i]!.field?.name ?? '') ? '' : cell));
        const values = await prepareCreate(ctx, resource, rowInput(resource, columns, readable), now);
        if (named.errors) fail(row, line, named.errors);
        else batch.push({ row, line, values });
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        fail(row, line, { ...(error.errors ?? { [ROW_ERROR]: [error.detail] }), ...named.errors });
      }
      if (batch.length >= batchSize) await flush();
    }
  } catch (error) {
    // The file went bad part-way: keep the complete rows read before that point, and say so.
    if (!(error instanceof AppError) || ![400, 413, 415].includes(error.status)) throw error;
    if (!columns) throw new AppError(error.status, error.code, `${error.detail} Nothing was imported.`);
    await flush();
    throw new AppError(error.status, error.code, `${error.detail}${soFar()}`);
  }
  if (!columns)
    throw validationFailed(
      { file: ['is empty: its first row must name the columns'] },
      'The file is empty: its first row must name the columns, e.g. name,email. Nothing was imported.',
    );
  await flush();
  return report();
}

/** The audit log as CSV (admins), streamed page by page: one row per entry, its changes as JSON. */
export function auditCsv(ctx: Context, query: Record<string, unknown>): Readable {
  const { cursor: _ignored, ...narrowing } = query;
  const out = stringify({ header: true, columns: AUDIT_COLUMNS, record_delimiter: 'windows' });
  const write = async () => {
    let cursor: string | undefined;
    do {
      const page = await auditLog(ctx, { ...narrowing, cursor }, 500);
      for (const e of page.data) {
        const row = [
          e.id,
          e.at,
          e.actor?.id ?? '',
          e.actor?.name ?? '',
          e.via,
          e.action,
          e.resource ?? '',
          e.record_id ?? '',
        ];
        const json = [e.changes ? JSON.stringify(e.changes) : '', e.hidden_changed ? e.hidden_changed.join(' ') : ''];
        if (!out.write([...row.map((v) => textCell(String(v))), ...json.map(textCell)])) await once(out, 'drain');
      }
      cursor = page.meta.next_cursor ?? undefined;
    } while (cursor);
    out.end();
  };
  write().catch((error: unknown) => out.destroy(error as Error));
  return out;
}

const AUDIT_COLUMNS = [
  'id',
  'at',
  'actor_id',
  'actor',
  'via',
  'action',
  'resource',
  'record_id',
  'changes',
  'hidden_changed',
];
