// The CSV import of any declared resource: the file is read as a spreadsheet
// wrote it (csv-file.ts), its columns mapped to fields (import-columns.ts),
// and each row created, or, with `upsertBy`, used to update the record it
// matches (by id, or by email as the contact link matches it). Rows go in
// batches, one transaction each; a bad row is reported with its cells and
// reasons and skipped, never half-written. A dry run does everything but
// write and says what would happen. Every import is a row of `imports` and
// every change it makes carries its id, so that it can be rolled back
// (import-rollback.ts); the rows that failed are kept to be downloaded. Rows
// are read and checked as the file streams in (import-rows.ts), in a worker
// thread for a large file, while the batch before is written.
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import { asRecordTables, type Executor } from '../db/tables.ts';
import { AppError, type FieldErrors, validationFailed } from '../errors.ts';
import type { Field, Resource } from '../schema/resource.ts';
import { namesOf } from './csv.ts';
import { type Delimiter, type Encoding, malformedCsv, openCsv } from './csv-file.ts';
import { type ColumnMapping, mapColumns, readMapping, rememberedMappings, rememberMappings } from './import-columns.ts';
import { readInput } from './input.ts';
import {
  authorize,
  type Context,
  insertPreparedBatch,
  type PreparedUpdate,
  updatePreparedBatch,
} from './operations.ts';
import {
  asRefusal,
  madeOf,
  matcherFor,
  type NameCache,
  nameIn,
  openRows,
  type Pending,
  type Reading,
} from './import-rows.ts';
import { type Row, selectMatching } from './repository.ts';

/** The largest file the HTTP doors take (they answer 413 beyond it); the command line takes any size. */
export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;
/**
 * Rows per transaction: big batches make few, large multi-row INSERTs and fewer commits (each writes every index page
 * the batch touched). 5,000 against 2,000: 100,000 contacts imported into SQLite in 9.2 s instead of 10.8 s; a batch
 * holds SQLite for about half a second.
 */
export const IMPORT_BATCH = 5000;
/**
 * Files this large are read and checked in a worker thread while the main thread writes (import-rows.ts); a smaller one
 * is done before the worker would have started.
 */
export const READ_IN_WORKER_BYTES = 2 * 1024 * 1024;
/** Failed rows an answer lists; the rest are counted (and kept to download, up to MAX_KEPT_FAILURES). */
const MAX_LISTED_FAILURES = 1000;
const MAX_KEPT_FAILURES = 100_000;

export interface ImportFailure {
  /** The data row: the header is row 0, the first row under it row 1 (blank lines are not counted). */
  row: number;
  /** The line of the file on which the row starts (the header is usually line 1). */
  line: number;
  errors: FieldErrors;
  /** The row's cells as read, in the file's column order. */
  cells: string[];
}

export interface ImportReport {
  /** Absent for a dry run, which writes nothing. */
  import_id?: bigint;
  created: number;
  updated: number;
  /** Rows that matched a record holding their values already. */
  unchanged: number;
  /** Rows that were not imported, in row order; at most MAX_LISTED_FAILURES of them. */
  failed: ImportFailure[];
  /** How many more rows failed than are listed (present only when some were left out). */
  failed_truncated?: number;
  columns: ColumnMapping[];
  encoding: Encoding;
  delimiter: Delimiter;
}

export interface ImportOptions {
  batchSize?: number;
  maxBytes?: number;
  /** The file's size, where it is known before it is read: a large file is read in a worker thread. */
  size?: number;
  dryRun?: boolean;
  /** Header → field (null: leave the column out), over what the headers say. */
  mapping?: unknown;
  /** Update the record a row matches by this field (the primary key, or an email) instead of creating one. */
  upsertBy?: string;
  filename?: string;
  /** The import the wizard made when the file was uploaded; else one is made. */
  importId?: bigint;
  /** Told the bytes read so far and the counts, after each batch. */
  onProgress?: (progress: Progress) => void;
}

export interface Progress {
  bytes: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

/** The fields a row may be matched to a record by: the primary key, and the fields that hold an email. */
export const upsertFields = (resource: Resource): Field[] => [
  resource.primaryKey,
  ...resource.writable.filter((f) => f.input === 'email' || f.format === 'email'),
];

/** The field `upsert_by` names, checked: one of upsertFields, else a 422 naming upsert_by. */
export function upsertField(resource: Resource, upsertBy: string): Field {
  const fields = upsertFields(resource);
  const field = fields.find((f) => f.name === upsertBy);
  if (field) return field;
  const names = fields.map((f) => f.name);
  throw validationFailed(
    { upsert_by: [`must be one of ${names.join(', ')}`] },
    `${resource.name} can be matched by ${names.join(' or ')}.`,
  );
}

/**
 * Looks up the records named by a row's reference cells that no row before named; `known` keeps the answers, and the
 * new ones are answered.
 */
async function lookUpNames(db: Executor, fields: (Field | undefined)[], cells: string[], known: NameCache) {
  const learned: [string, string | null][] = [];
  for (const [i, field] of fields.entries()) {
    const named = nameIn(field, cells[i]);
    if (!named || known.has(named.key)) continue;
    let found: string | null = null;
    for (const by of namesOf(named.target)) {
      const rows = await asRecordTables(db)
        .selectFrom(named.target.table)
        .select(named.target.primaryKey.name)
        .where(sql`lower(${sql.ref(by.name)})`, '=', named.text.toLowerCase())
        .limit(2)
        .execute();
      if (rows.length === 1) found = String(rows[0]![named.target.primaryKey.name]);
      if (rows.length) {
        if (rows.length > 1) found = '';
        break;
      }
    }
    known.set(named.key, found);
    learned.push([named.key, found]);
  }
  return learned;
}

/**
 * The references of rows about to be created that name no record, as field errors by row: one query per reference
 * field and batch, and what was found is remembered (a dry run writes nothing, so no foreign key tells it).
 */
async function missingIds(db: Executor, resource: Resource, rows: Row[], found: Map<string, boolean>) {
  const errors = new Map<number, FieldErrors>();
  for (const field of resource.fields) {
    const target = field.target;
    if (!target) continue;
    const key = (v: unknown) => `${target.name}\u0000${String(v)}`;
    const unknown = [
      ...new Set(rows.map((r) => r[field.name]).filter((v) => v !== null && v !== undefined && !found.has(key(v)))),
    ];
    for (let start = 0; start < unknown.length; start += 1000) {
      const some = unknown.slice(start, start + 1000);
      const pk = target.primaryKey.name;
      const there = await asRecordTables(db).selectFrom(target.table).select(pk).where(pk, 'in', some).execute();
      const seen = new Set(there.map((r) => String(r[pk])));
      for (const v of some) found.set(key(v), seen.has(String(v)));
    }
    rows.forEach((r, i) => {
      const v = r[field.name];
      if (v === null || v === undefined || found.get(key(v))) return;
      const e = errors.get(i) ?? {};
      e[field.name] = [`names no ${target.singular}: there is no ${target.singular} #${String(v)}`];
      errors.set(i, e);
    });
  }
  return errors;
}

/** Reads an update's input; a value sent back exactly as it is stored is no change and is not checked again. */
function updateInput(resource: Resource, input: Row, before: Row): Row {
  try {
    return readInput(resource, input, 'update');
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors) throw error;
    const unchanged = Object.keys(error.errors).filter((k) => Object.hasOwn(input, k) && input[k] === before[k]);
    if (unchanged.length === 0) throw error;
    return readInput(
      resource,
      Object.fromEntries(Object.entries(input).filter(([k]) => !unchanged.includes(k))),
      'update',
    );
  }
}

/**
 * Imports a CSV file: a header row, then one record per row. Each row goes through the same checks and defaults as a
 * create (created_by is the importer, passwords are hashed) or, when it matches a record by `upsertBy`, as an update
 * of the fields its columns fill. Valid rows are written in batches and kept; invalid rows are reported with their
 * cells and reasons and skipped. A header that fills no field is left out (and listed in `columns`).
 *
 * When the file turns out to be malformed CSV (400, naming the line), too large (413) or not text (415) part-way,
 * the rows before that point are written (and said so in the error's detail) and nothing after it.
 */
export async function importCsv(
  ctx: Context,
  resource: Resource,
  input: Readable,
  options: ImportOptions = {},
): Promise<ImportReport> {
  authorize(ctx, resource, 'import');
  const mapping = readMapping(resource, options.mapping);
  const dryRun = options.dryRun === true;
  const { db } = ctx.database;
  const matcher = options.upsertBy
    ? matcherFor(ctx.database, resource, upsertField(resource, options.upsertBy))
    : undefined;
  // Made once the header is read and mapped: a file refused whole leaves no import behind.
  let importId = options.importId;
  // An import's changes say so, whichever door brought the file; the command line is a door of its own.
  const writer: Context = { ...ctx, via: ctx.via === 'cli' ? 'cli' : 'import', exact: true };
  const batchSize = options.batchSize ?? IMPORT_BATCH;
  const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  const failed: ImportFailure[] = [];
  let kept: ImportFailure[] = [];
  const fail = (p: Pending, errors: FieldErrors) => {
    counts.failed++;
    const failure = { row: p.row, line: p.line, errors: { ...errors }, cells: p.cells };
    if (failed.length < MAX_LISTED_FAILURES) failed.push(failure);
    if (!dryRun && counts.failed <= MAX_KEPT_FAILURES) kept.push(failure);
  };
  const progress = (): Progress => ({ bytes: file.bytesRead(), ...counts });

  let columns: ColumnMapping[] | undefined;
  const referenced = new Map<string, boolean>();
  /** Keys of the rows seen so far, by row: a second row for one record would undo the first. */
  const keysSeen = new Map<string, number>();
  const now = new Date().toISOString();

  /** Checks (and, unless a dry run, writes) a batch: its lookups, creates and updates, then the progress. */
  const write = async (pending: Pending[], lookup: Promise<Map<string, Row[]>>) => {
    // Rows that failed while read (a wrong number of values) are kept with the next batch, or the last.
    if (pending.length === 0 && kept.length === 0) return;
    const matches = await lookup;
    const creates: { p: Pending; values: Row }[] = [];
    const updates: { p: Pending; update: PreparedUpdate; before: Row }[] = [];
    for (const p of pending) {
      const found = p.key ? (matches.get(p.key) ?? []) : [];
      if (found.length > 1) {
        const ids = found.map((r) => String(r[resource.primaryKey.name])).join(', ');
        fail(p, {
          [matcher!.field.name]: [
            `matches ${found.length} ${resource.name} (ids ${ids}): ` +
              `merge them first, or match by ${resource.primaryKey.name}`,
          ],
        });
        continue;
      }
      try {
        if (found.length === 1) {
          const before = found[0]!;
          const update = {
            id: BigInt(before[resource.primaryKey.name] as bigint),
            input: updateInput(resource, p.input, before),
          };
          if (p.errors) fail(p, p.errors);
          else updates.push({ p, update, before });
        } else {
          const made = await (p.made ?? madeOf(writer, resource, p.input, now));
          if ('refused' in made) fail(p, { ...made.refused, ...p.errors });
          else if (p.errors) fail(p, p.errors);
          else creates.push({ p, values: made.values });
        }
      } catch (error) {
        fail(p, { ...asRefusal(error), ...p.errors });
      }
    }
    if (dryRun) await countDry(creates, updates);
    else {
      const written = creates.length
        ? await insertPreparedBatch(
            writer,
            resource,
            creates.map((c) => c.values),
          )
        : [];
      for (const [i, error] of written.entries()) {
        if (error) fail(creates[i]!.p, asRefusal(error));
        else counts.created++;
      }
      const outcomes = updates.length
        ? await updatePreparedBatch(
            writer,
            resource,
            updates.map((u) => u.update),
          )
        : [];
      outcomes.forEach((outcome, i) => {
        if (outcome instanceof AppError) fail(updates[i]!.p, asRefusal(outcome));
        else counts[outcome]++;
      });
      await recordProgress(db, importId!, progress(), kept);
      kept = [];
    }
    options.onProgress?.(progress());
  };

  /** The records a batch's keys match, by key, in one query. */
  const matchesOf = async (pending: Pending[]) => {
    const keys = [...new Set(pending.map((p) => p.key).filter((k): k is string => !!k))];
    const out = new Map<string, Row[]>();
    for (const { key, record } of await selectMatching(db, resource, matcher!.column, keys, matcher!.folded)) {
      const k = String(key);
      out.set(k, [...(out.get(k) ?? []), record]);
    }
    return out;
  };

  /** What a dry run says of a batch: the creates whose references hold, the updates that would change something. */
  const countDry = async (
    creates: { p: Pending; values: Row }[],
    updates: { p: Pending; update: PreparedUpdate; before: Row }[],
  ) => {
    const missing = await missingIds(
      db,
      resource,
      creates.map((c) => c.values),
      referenced,
    );
    for (const [i, c] of creates.entries()) {
      if (missing.has(i)) fail(c.p, missing.get(i)!);
      else counts.created++;
    }
    for (const { p, update, before } of updates) {
      const changed = Object.entries(update.input).some(
        ([k, v]) =>
          resource.field(k)!.hidden ||
          JSON.stringify(v, bigintsAsDigits) !== JSON.stringify(before[k] ?? null, bigintsAsDigits),
      );
      const missingRefs = changed ? (await missingIds(db, resource, [update.input], referenced)).get(0) : undefined;
      if (missingRefs) fail(p, missingRefs);
      else counts[changed ? 'updated' : 'unchanged']++;
    }
  };

  // The file is read on while the batch before is checked and written, and a batch's records are looked up as soon
  // as it is read, while the one before is still being checked: the database's answers are awaited less. (The rows
  // of one file never match a record another row of it creates: a key is taken once per file.)
  let batch: Pending[] = [];
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    const [pending, previous] = [batch, inFlight];
    batch = [];
    const lookup = matcher && pending.length ? matchesOf(pending) : Promise.resolve(new Map<string, Row[]>());
    inFlight = previous.then(() => write(pending, lookup));
    // Awaited by the next flush, or at the end; never an unhandled rejection meanwhile.
    lookup.catch(() => {});
    inFlight.catch(() => {});
    await previous;
    // A file already in memory parses, and SQLite answers, without ever waiting: let the requests that came
    // meanwhile (the import's own progress page) be served between batches.
    await nextTurn();
  };
  const settle = async () => {
    await flush();
    await inFlight;
  };

  /** The header, mapped to fields; the import is recorded (unless a dry run) before any row under it is read. */
  const mapped = async (header: string[]): Promise<Reading> => {
    columns = mapColumns(resource, header, mapping, await rememberedMappings(db, resource));
    const fields = columns.map((c) => (c.field ? resource.field(c.field) : undefined));
    const keyColumn = matcher ? fields.indexOf(matcher.field) : -1;
    if (matcher && keyColumn < 0)
      throw validationFailed(
        { upsert_by: [`needs a column for ${matcher.field.name}: map one of the columns to it`] },
        `To match rows to ${resource.name} by ${matcher.field.name}, the file needs a ${matcher.field.name} column.`,
      );
    if (!dryRun) {
      importId ??= await beginImport(ctx, resource, options);
      writer.importId = importId;
      await describeImport(db, importId, file, columns);
      if (Object.keys(mapping).length) await rememberMappings(db, resource, mapping);
    }
    return { resource, fields, matcher, keyColumn, writer, now, named: new Map() };
  };
  const file = await openRows(
    input,
    {
      resource,
      maxBytes: options.maxBytes ?? IMPORT_MAX_BYTES,
      // A worker takes a few hundred milliseconds to start; a password is hashed where its scheme is known.
      inWorker: (options.size ?? 0) >= READ_IN_WORKER_BYTES && !resource.fields.some((f) => f.kind.beforeStore),
    },
    mapped,
    (r, cells) => lookUpNames(db, r.fields, cells, r.named),
  );

  try {
    for await (const p of file.rows) {
      if (p.failure) {
        fail(p, p.failure);
        continue;
      }
      if (p.key) {
        const first = keysSeen.get(p.key);
        if (first !== undefined) {
          fail(p, { [matcher!.field.name]: [`is the same as row ${first}'s: a record is imported once per file`] });
          continue;
        }
        keysSeen.set(p.key, p.row);
      }
      batch.push(p);
      if (batch.length >= batchSize) await flush();
    }
  } catch (error) {
    // The file went bad part-way: keep the complete rows read before that point, and say so.
    const partWay = error instanceof AppError && [400, 413, 415].includes(error.status) && columns;
    if (partWay) await settle();
    else await inFlight.catch(() => {});
    if (importId !== undefined && !dryRun)
      await endImport(db, importId, 'failed', error instanceof AppError ? error.detail : 'the import stopped');
    if (!(error instanceof AppError) || ![400, 413, 415].includes(error.status)) throw error;
    const soFar = !partWay || dryRun ? ' Nothing was imported.' : soFarNote(counts);
    throw new AppError(error.status, error.code, `${error.detail}${soFar}`);
  }
  if (!columns) {
    if (importId !== undefined && !dryRun) await endImport(db, importId, 'failed', 'the file is empty');
    throw validationFailed(
      { file: ['is empty: its first row must name the columns'] },
      'The file is empty: its first row must name the columns, e.g. name,email. Nothing was imported.',
    );
  }
  await settle();
  if (importId !== undefined && !dryRun) await endImport(db, importId, 'done');
  failed.sort((a, b) => a.row - b.row);
  return {
    ...(importId !== undefined && !dryRun ? { import_id: importId } : {}),
    ...counts,
    failed,
    ...(counts.failed > failed.length ? { failed_truncated: counts.failed - failed.length } : {}),
    columns,
    encoding: file.encoding,
    delimiter: file.delimiter,
  };
}

/** What the wizard shows to map a file's columns: how it was read, each column's field, its first rows. */
export interface Inspection {
  encoding: Encoding;
  delimiter: Delimiter;
  columns: ColumnMapping[];
  /** Up to SAMPLE_ROWS rows under the header. */
  samples: string[][];
}

const SAMPLE_ROWS = 3;

/**
 * Reads a file's header and first rows and maps the columns as an import would (the mapping given, the headers,
 * what was chosen before); a mapping that cannot stand (two columns filling one field) is shown as it is, for the
 * user to correct, and refused only when imported.
 */
export async function inspectCsv(
  ctx: Context,
  resource: Resource,
  input: Readable,
  mapping?: unknown,
): Promise<Inspection> {
  authorize(ctx, resource, 'import');
  const given = readMapping(resource, mapping);
  const file = await openCsv(input, { maxBytes: Number.POSITIVE_INFINITY });
  const remembered = await rememberedMappings(ctx.database.db, resource);
  let columns: ColumnMapping[] | undefined;
  const samples: string[][] = [];
  for await (const item of file.rows) {
    if (item.malformed) throw malformedCsv(item.malformed);
    if (!columns) {
      try {
        columns = mapColumns(resource, item.record!, given, remembered);
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        columns = item.record!.map((header) => ({ header: header.trim(), field: given[header.trim()] ?? null }));
      }
      continue;
    }
    samples.push(item.record!);
    if (samples.length >= SAMPLE_ROWS) break;
  }
  if (!columns)
    throw validationFailed({ file: ['is empty: its first row must name the columns'] }, 'The file is empty.');
  return { encoding: file.encoding, delimiter: file.delimiter, columns, samples };
}

/** A JSON.stringify replacer: 64-bit integers as their digits. */
export const bigintsAsDigits = (_k: string, v: unknown) => (typeof v === 'bigint' ? String(v) : v);

function soFarNote(counts: { created: number; updated: number; failed: number }): string {
  const { created, updated, failed } = counts;
  return created || updated || failed
    ? ` The rows before it were imported: ${created} created, ${updated} updated, ${failed} failed; ` +
        'nothing after it was.'
    : ' Nothing was imported.';
}

// ---------------------------------------------------------------- the imports table

/** Starts the record of an import (status running). */
export async function beginImport(
  ctx: Context,
  resource: Resource,
  options: { filename?: string; upsertBy?: string; file?: Uint8Array },
  status: 'running' | 'uploaded' = 'running',
): Promise<bigint> {
  const at = new Date().toISOString();
  const row = await ctx.database.db
    .insertInto('imports')
    .values({
      resource: resource.name,
      actor_id: ctx.actor && ctx.actor.id > 0n ? ctx.actor.id : null,
      via: ctx.via === 'cli' ? 'cli' : (ctx.via ?? 'api'),
      status,
      filename: options.filename?.slice(0, 255) ?? null,
      file: options.file ?? null,
      size: options.file?.length ?? null,
      upsert_by: options.upsertBy ?? null,
      started_at: at,
      heartbeat_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return BigInt(row.id);
}

async function describeImport(
  db: Executor,
  id: bigint,
  file: { encoding: string; delimiter: string },
  columns: ColumnMapping[],
) {
  await db
    .updateTable('imports')
    .set({ encoding: file.encoding, delimiter: file.delimiter, columns: JSON.stringify(columns), status: 'running' })
    .where('id', '=', id)
    .execute();
}

/** After each batch: the counts so far, a heartbeat (a stale one is an import whose process died), the failures. */
async function recordProgress(db: Executor, id: bigint, progress: Progress, failures: ImportFailure[]) {
  const { bytes, ...counts } = progress;
  await db
    .updateTable('imports')
    .set({ ...counts, bytes_read: bytes, heartbeat_at: new Date().toISOString() })
    .where('id', '=', id)
    .execute();
  for (let start = 0; start < failures.length; start += 500)
    await db
      .insertInto('import_failures')
      .values(
        failures.slice(start, start + 500).map((f) => ({
          import_id: id,
          row_number: f.row,
          line: f.line,
          cells: JSON.stringify(f.cells),
          errors: JSON.stringify(f.errors),
        })),
      )
      .execute();
}

async function endImport(db: Executor, id: bigint, status: 'done' | 'failed', error?: string) {
  const at = new Date().toISOString();
  await db
    .updateTable('imports')
    .set({ status, error: error ?? null, finished_at: at, heartbeat_at: at, file: null })
    .where('id', '=', id)
    .execute();
}
