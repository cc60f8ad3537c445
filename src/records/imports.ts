// What happened to the imports, and undoing one. Each import is a row of
// `imports`; every change it made is a change-log entry carrying its id, so a
// rollback reads the log (DESIGN.md: one change log): it removes the records
// the import created and puts back the values of those it updated, exactly
// (the import's entries keep updated_at), all in one transaction, except the
// records changed since, or linked to since, which it lists and leaves alone.
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Executor, ImportsTable } from '../db/tables.ts';
import { AppError, notFound } from '../errors.ts';
import { recordResources } from '../resources/index.ts';
import { kinds } from '../schema/kinds.ts';
import type { Resource } from '../schema/resource.ts';
import { removeMany } from './bulk.ts';
import { ROLLED_BACK, readCursor, storedValue } from './change-log.ts';
import type { Context } from './context.ts';
import type { ColumnMapping } from './import-columns.ts';
import {
  beginImport,
  bigintsAsDigits,
  type ImportFailure,
  importCsv,
  type ImportOptions,
  type ImportReport,
} from './import.ts';
import { ROW_ERROR } from './import-rows.ts';
import { authorize, may, parseId } from './operations.ts';
import { restoreValues } from './trash.ts';
import { countReferencesMany, type Row, selectByIds } from './repository.ts';

const PER_PAGE = 50;
/** An import whose process has not said anything for this long has stopped (its process died). */
const STALE_MS = 60_000;
const instant = (v: unknown) => (v === null || v === undefined ? null : (kinds.dateTime.fromDb(v) as string));
const resourceNamed = (name: string) => recordResources.find((r) => r.name === name);

type ImportRow = { [K in keyof ImportsTable]: unknown } & { actor_name?: string | null };

export interface ImportSummary {
  id: bigint;
  resource: string;
  status: string;
  filename: string | null;
  by: { id: bigint; name: string } | null;
  via: string;
  started_at: string;
  finished_at: string | null;
  size: number | null;
  bytes_read: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  encoding: string | null;
  delimiter: string | null;
  columns: ColumnMapping[];
  upsert_by: string | null;
  error: string | null;
  rolled_back_at: string | null;
  rollback: RollbackReport | null;
}

function summaryOf(row: ImportRow): ImportSummary {
  const running = row.status === 'running' || row.status === 'uploaded';
  const beat = instant(row.heartbeat_at);
  // A run that stopped hearing from its process is shown as stopped: its process died (the rows written stay).
  const stopped = row.status === 'running' && beat !== null && Date.now() - Date.parse(beat) > STALE_MS;
  return {
    id: BigInt(row.id as bigint),
    resource: String(row.resource),
    status: stopped ? 'stopped' : String(row.status),
    filename: (row.filename as string | null) ?? null,
    by: row.actor_id === null ? null : { id: BigInt(row.actor_id as bigint), name: row.actor_name ?? '' },
    via: String(row.via),
    started_at: instant(row.started_at)!,
    finished_at: running ? null : instant(row.finished_at),
    size: row.size === null ? null : Number(row.size),
    bytes_read: Number(row.bytes_read),
    created: Number(row.created),
    updated: Number(row.updated),
    unchanged: Number(row.unchanged),
    failed: Number(row.failed),
    encoding: (row.encoding as string | null) ?? null,
    delimiter: (row.delimiter as string | null) ?? null,
    columns: row.columns ? (JSON.parse(String(row.columns)) as ColumnMapping[]) : [],
    upsert_by: (row.upsert_by as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    rolled_back_at: instant(row.rolled_back_at),
    rollback: row.rollback ? rollbackOf(String(row.rollback)) : null,
  };
}

/** A rollback's report as kept (ids as digits), with its ids exact again. */
function rollbackOf(json: string): RollbackReport {
  const kept = JSON.parse(json) as RollbackReport;
  return { ...kept, skipped: kept.skipped.map((s) => ({ ...s, id: BigInt(s.id) })) };
}

const SUMMARY_COLUMNS = [
  'imports.id',
  'imports.resource',
  'imports.actor_id',
  'imports.via',
  'imports.status',
  'imports.filename',
  'imports.size',
  'imports.encoding',
  'imports.delimiter',
  'imports.columns',
  'imports.upsert_by',
  'imports.bytes_read',
  'imports.created',
  'imports.updated',
  'imports.unchanged',
  'imports.failed',
  'imports.error',
  'imports.started_at',
  'imports.heartbeat_at',
  'imports.finished_at',
  'imports.rolled_back_at',
  'imports.rolled_back_by',
  'imports.rollback',
] as const;

/** The resources whose imports the caller may see: those they may import. */
const importable = (ctx: Context) => recordResources.filter((r) => may(ctx.actor, r, 'import'));

/** The imports of the resources the caller may import, newest first (not files uploaded and never imported). */
/** Whoever may import nothing may not look at imports either (403 before any id is looked up). */
function mayImportSome(ctx: Context): string[] {
  if (!ctx.actor) throw new AppError(401, 'unauthenticated', 'Sign in first.');
  const names = importable(ctx).map((r) => r.name);
  if (names.length === 0) throw new AppError(403, 'forbidden', `Your role (${ctx.actor.role}) may not import.`);
  return names;
}

export async function listImports(ctx: Context, cursor?: string) {
  const names = mayImportSome(ctx);
  const after = readCursor(cursor);
  const rows = await ctx.database.db
    .selectFrom('imports')
    .leftJoin('users', 'users.id', 'imports.actor_id')
    .select([...SUMMARY_COLUMNS, 'users.name as actor_name'])
    .where('imports.resource', 'in', names)
    .where('imports.status', '<>', 'uploaded')
    .$if(after !== undefined, (q) => q.where('imports.id', '<', after!))
    .orderBy('imports.id', 'desc')
    .limit(PER_PAGE + 1)
    .execute();
  const page = rows.slice(0, PER_PAGE);
  return {
    data: page.map((r) => summaryOf(r as ImportRow)),
    meta: { next_cursor: rows.length > PER_PAGE ? String(page.at(-1)!.id) : null },
  };
}

/** One import, if the caller may import its resource (else 404: another team member's file is not guessed at). */
export async function getImport(ctx: Context, rawId: string): Promise<{ summary: ImportSummary; resource: Resource }> {
  mayImportSome(ctx);
  const id = parseId(rawId);
  const row = await ctx.database.db
    .selectFrom('imports')
    .leftJoin('users', 'users.id', 'imports.actor_id')
    .select([...SUMMARY_COLUMNS, 'users.name as actor_name'])
    .where('imports.id', '=', id)
    .executeTakeFirst();
  const resource = row && resourceNamed(row.resource);
  if (!row || !resource) throw notFound('There is no such import.');
  authorize(ctx, resource, 'import');
  return { summary: summaryOf(row as ImportRow), resource };
}

/** A failed row's problems, one line each: the field and what was wrong with it. */
export const problemsOf = (errors: Record<string, string[]>): string[] =>
  Object.entries(errors).map(([name, messages]) => `${name === ROW_ERROR ? 'The row' : name} ${messages.join('; ')}`);

/** The failed rows an import kept, in row order, after row `after` (at most `limit`). */
export async function failedRows(ctx: Context, id: bigint, limit: number, after = -1): Promise<ImportFailure[]> {
  const rows = await ctx.database.db
    .selectFrom('import_failures')
    .select(['row_number', 'line', 'cells', 'errors'])
    .where('import_id', '=', id)
    .where('row_number', '>', after)
    .orderBy('row_number')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    row: Number(r.row_number),
    line: Number(r.line),
    cells: JSON.parse(r.cells) as string[],
    errors: JSON.parse(r.errors) as Record<string, string[]>,
  }));
}

/**
 * The rows an import could not take, as a CSV file to correct and import again: the file's own header and cells,
 * then a column saying what was wrong (left out when imported again: it names no field). Read a page at a time, as
 * fast as the download takes it.
 */
export async function failedRowsCsv(ctx: Context, rawId: string): Promise<Readable> {
  const { summary } = await getImport(ctx, rawId);
  const out = stringify({ bom: true, record_delimiter: 'windows' });
  const write = async () => {
    out.write([...summary.columns.map((c) => c.header), 'Import problems']);
    for (let after = -1; !out.destroyed; ) {
      const page = await failedRows(ctx, summary.id, 500, after);
      for (const f of page) if (!out.write([...f.cells, problemsOf(f.errors).join(' | ')])) await once(out, 'drain');
      if (page.length < 500) break;
      after = page.at(-1)!.row;
    }
    out.end();
  };
  write().catch((error: unknown) => out.destroy(error as Error));
  return out;
}

// ---------------------------------------------------------------- the wizard's uploads

/** Keeps an uploaded file for the wizard's next steps (mapping, preview, import): an import not yet run. */
export async function stageUpload(ctx: Context, resource: Resource, filename: string, file: Uint8Array) {
  authorize(ctx, resource, 'import');
  return beginImport(ctx, resource, { filename, file }, 'uploaded');
}

/** A staged upload of the caller's, with its file; 404 for anyone else's, 409 once it has run. */
export async function stagedUpload(ctx: Context, resource: Resource, rawId: string) {
  const id = parseId(rawId);
  const row = await ctx.database.db
    .selectFrom('imports')
    .select(['id', 'status', 'filename', 'file', 'actor_id'])
    .where('id', '=', id)
    .where('resource', '=', resource.name)
    .executeTakeFirst();
  authorize(ctx, resource, 'import');
  if (!row || row.actor_id === null || BigInt(row.actor_id) !== ctx.actor!.id)
    throw notFound('There is no such upload.');
  if (row.status !== 'uploaded' || !row.file)
    throw new AppError(409, 'already_imported', 'This file has been imported already: see the Imports page.');
  return { id, filename: row.filename ?? 'file.csv', file: Buffer.from(row.file) };
}

/**
 * A file held in memory, handed on a slice at a time: the parser then takes it as it goes, so the bytes read (the
 * progress bar) follow the rows imported instead of jumping to the end at once.
 */
export function* slices(file: Buffer, size = 64 * 1024): Generator<Buffer> {
  for (let start = 0; start < file.length; start += size) yield file.subarray(start, start + size);
}

/** A file uploaded to the wizard and never imported is dropped after a day: what the scheduler runs. */
export async function forgetAbandonedUploads(db: Executor): Promise<void> {
  const dayAgo = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
  await db.deleteFrom('imports').where('status', '=', 'uploaded').where('started_at', '<', dayAgo).execute();
}

/**
 * Runs the import of a staged upload (or its dry run) with the options chosen in the wizard. The run claims the
 * upload first, so a second click finds it taken (409); a run that fails before it has read the header is marked
 * failed, never left waiting.
 */
export async function importStaged(
  ctx: Context,
  resource: Resource,
  rawId: string,
  options: ImportOptions,
): Promise<ImportReport> {
  const staged = await stagedUpload(ctx, resource, rawId);
  const run = (importId?: bigint) =>
    importCsv(ctx, resource, Readable.from(slices(staged.file)), {
      ...options,
      filename: staged.filename,
      size: staged.file.length,
      importId,
    });
  if (options.dryRun) return run();
  const { db } = ctx.database;
  const claimed = await db
    .updateTable('imports')
    .set({ status: 'running', heartbeat_at: new Date().toISOString() })
    .where('id', '=', staged.id)
    .where('status', '=', 'uploaded')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1)
    throw new AppError(409, 'already_imported', 'This file is being imported already: see the Imports page.');
  try {
    return await run(staged.id);
  } catch (error) {
    const detail = error instanceof AppError ? error.detail : 'the import stopped';
    await db
      .updateTable('imports')
      .set({ status: 'failed', error: detail, finished_at: new Date().toISOString(), file: null })
      .where('id', '=', staged.id)
      .where('status', '=', 'running')
      .execute();
    throw error;
  }
}

// ---------------------------------------------------------------- rollback

export interface RollbackReport {
  removed: number;
  restored: number;
  /** Records left as they are, and why. */
  skipped: { resource: string; id: bigint; reason: string }[];
}

interface Touched {
  resource: Resource;
  id: bigint;
  created: boolean;
  /** The values before the import, by field (for an update). */
  before: Row;
  /** The import's first entry about it. */
  since: bigint;
}

/** What the import did, per record, from its entries. */
async function touchedBy(db: Executor, importId: bigint): Promise<Touched[]> {
  const byRecord = new Map<string, Touched>();
  let after = 0n;
  for (;;) {
    const entries = await db
      .selectFrom('change_log')
      .select(['id', 'action', 'resource', 'record_id', 'changes'])
      .where('import_id', '=', importId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(5000)
      .execute();
    for (const e of entries) {
      const resource = resourceNamed(e.resource ?? '');
      if (!resource || e.record_id === null) continue;
      const key = `${resource.name}:${String(e.record_id)}`;
      const touched = byRecord.get(key) ?? {
        resource,
        id: BigInt(e.record_id),
        created: e.action === 'created',
        before: {},
        since: BigInt(e.id),
      };
      // The earliest value of each field is the one from before the import.
      const changes = e.changes ? (JSON.parse(e.changes) as Record<string, [unknown, unknown]>) : {};
      for (const [name, [was]] of Object.entries(changes))
        if (!(name in touched.before)) touched.before[name] = storedValue(resource.field(name), was);
      byRecord.set(key, touched);
    }
    if (entries.length < 5000) break;
    after = BigInt(entries.at(-1)!.id);
  }
  return [...byRecord.values()];
}

/** The records among `touched` (one resource) that someone changed after the import, or linked other records to. */
async function changedSince(db: Executor, importId: bigint, resource: Resource, touched: Touched[]) {
  const reasons = new Map<string, string>();
  // The import's first entry about any of them (bigints: no Math.min).
  let since = touched[0]!.since;
  for (const t of touched) if (t.since < since) since = t.since;
  for (let start = 0; start < touched.length; start += 1000) {
    const ids = touched.slice(start, start + 1000).map((t) => t.id);
    const later = await db
      .selectFrom('change_log')
      .select(['record_id', 'action'])
      .where('resource', '=', resource.name)
      .where('record_id', 'in', ids)
      .where('id', '>', since)
      .where((eb) =>
        eb.and([
          eb.or([eb('import_id', 'is', null), eb('import_id', '<>', importId)]),
          // What a later import did and its own rollback undid is no change since: an import rolled back, then the
          // one before it, undo both.
          eb.or([
            eb('import_id', 'is', null),
            eb('import_id', 'not in', eb.selectFrom('imports').select('id').where('status', '=', 'rolled_back')),
          ]),
          eb.not(
            eb.exists(
              eb
                .selectFrom('change_log as r')
                .select('r.id')
                .whereRef('r.id', '=', 'change_log.cause_id')
                .where('r.action', '=', ROLLED_BACK),
            ),
          ),
        ]),
      )
      .execute();
    for (const e of later)
      reasons.set(
        String(e.record_id),
        e.action === 'deleted' ? 'deleted since the import' : 'changed since the import',
      );
    const created = touched
      .slice(start, start + 1000)
      .filter((t) => t.created)
      .map((t) => t.id);
    for (const { resource: other, field } of resource.referencedBy) {
      for (const [id, n] of await countReferencesMany(db, other, field, created))
        reasons.set(id, `${n} ${n === 1 ? other.singular : other.name} linked to it since the import`);
    }
  }
  return reasons;
}

/**
 * Rolls an import back, in one transaction: removes what it created, puts back the values (and updated_at) of what it
 * updated, except the records changed or linked to since (listed in `skipped`, untouched). The removed records'
 * entries follow from one `rolled_back` entry, so the trash is not flooded with them; the log keeps their values.
 */
export async function rollbackImport(ctx: Context, rawId: string): Promise<RollbackReport> {
  const { summary, resource } = await getImport(ctx, rawId);
  if (summary.status === 'rolled_back')
    throw new AppError(409, 'already_rolled_back', 'This import was rolled back already.');
  if (summary.status === 'running' || summary.status === 'uploaded')
    throw new AppError(409, 'still_running', 'This import has not finished; roll it back once it has.');
  const actor = authorize(ctx, resource, 'delete');
  const writer: Context = { ...ctx, importId: undefined, exact: true };
  const report: RollbackReport = await ctx.database.db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('imports')
      .set({ status: 'rolled_back', rolled_back_at: new Date().toISOString(), rolled_back_by: actor.id })
      .where('id', '=', summary.id)
      .where('status', '<>', 'rolled_back')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1)
      throw new AppError(409, 'already_rolled_back', 'This import was rolled back already.');
    const root = await logRollback(trx, ctx, resource, summary.id);
    const out: RollbackReport = { removed: 0, restored: 0, skipped: [] };
    const touched = await touchedBy(trx, summary.id);
    for (const other of new Set(touched.map((t) => t.resource))) {
      const mine = touched.filter((t) => t.resource === other);
      const reasons = await changedSince(trx, summary.id, other, mine);
      for (const t of mine) {
        const reason = reasons.get(String(t.id));
        if (reason) out.skipped.push({ resource: other.name, id: t.id, reason });
      }
      const free = mine.filter((t) => !reasons.has(String(t.id)));
      for (let start = 0; start < free.length; start += 500) {
        const slice = free.slice(start, start + 500);
        const rows = await selectByIds(
          trx,
          other,
          slice.map((t) => t.id),
          true,
        );
        const byId = new Map(rows.map((r) => [String(r[other.primaryKey.name]), r]));
        const gone = slice.filter((t) => t.created && byId.has(String(t.id)));
        await removeMany(
          trx,
          writer,
          other,
          gone.map((t) => byId.get(String(t.id))!),
          gone.map(() => root),
        );
        out.removed += gone.length;
        for (const t of slice.filter((t) => !t.created && byId.has(String(t.id)))) {
          await restoreValues(trx, writer, other, byId.get(String(t.id))!, kept(other, t.before), root);
          out.restored++;
        }
      }
    }
    await trx
      .updateTable('imports')
      .set({ rollback: JSON.stringify(out, bigintsAsDigits) })
      .where('id', '=', summary.id)
      .execute();
    return out;
  });
  return report;
}

/** Of the values before the import, those a rollback writes back: the writable fields, and updated_at. */
const kept = (resource: Resource, before: Row) =>
  Object.fromEntries(
    Object.entries(before).filter(([name]) => {
      const field = resource.field(name);
      return field?.fillable || field?.timestamp === 'update';
    }),
  );

/** The entry every change of a rollback follows from: about the import's resource, carrying the import's id. */
async function logRollback(trx: Executor, ctx: Context, resource: Resource, importId: bigint): Promise<bigint> {
  const entry = {
    at: new Date().toISOString(),
    actor_id: ctx.actor && ctx.actor.id > 0n ? ctx.actor.id : null,
    via: ctx.via ?? 'api',
    action: ROLLED_BACK,
    resource: resource.name,
    record_id: null,
    import_id: importId,
  };
  const row = await trx.insertInto('change_log').values(entry).returning('id').executeTakeFirstOrThrow();
  return BigInt(row.id);
}
