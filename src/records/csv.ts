// CSV export of any declared resource, and the cell rules export and import
// share (import.ts reads files). An export streams: it walks the filtered
// list with keyset paging, a page at a time. The API and the pages are thin
// doors over it; the rules (who may) are the record operations'.
import { once } from 'node:events';
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { parseListQuery } from '../derive/list-query.ts';
import type { Field, Resource } from '../schema/resource.ts';
import { auditLog } from './change-log.ts';
import { authorize, type Context, readScopeOf } from './operations.ts';
import { selectRows, type Row } from './repository.ts';
import { asRecordTables } from '../db/tables.ts';

/** Rows per SELECT of an export. */
const BATCH = 500;

// ---------------------------------------------------------------- columns

/**
 * The columns of an export: the id, so that the file can be imported back over the records it came from
 * (upsert_by=id), then the fields *in index*; never hidden ones.
 */
export const exportFields = (resource: Resource): Field[] => [
  resource.primaryKey,
  ...resource.visible.filter((f) => f.inIndex && !f.primary),
];

/**
 * The fields a cell may name a referenced record by, instead of its id: its unique text fields (a user's email, a
 * source's name), then its title; compared case-insensitively.
 */
export const namesOf = (target: Resource) => [
  ...new Set([...target.fields.filter((f) => f.unique && f.kind.textual && !f.hidden), target.title]),
];

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
  'text/tab-separated-values',
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
  return (extension === undefined || ['csv', 'tsv', 'txt'].includes(extension)) && CSV_TYPES.has(type);
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

/** A cell as the import reads it: the quote an export put before a would-be formula taken off. */
export function importCell(field: Field, text: string, textual = field.kind.textual): string {
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
