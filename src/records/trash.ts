// The trash is read from the change log: a deleted record's last values are its
// `deleted` entry, and what its deletion took along (notes deleted with it, an
// inquiry's link cleared) are the entries that name it as their cause. Restoring
// writes them back with their ids, as `restored` entries in one transaction.
// The contacts a merge deleted wait here too (their cause is the `merged` entry).
// After TRASH_DAYS the scheduler empties the values (purgeTrash).
import { sql } from 'kysely';
import type { Executor } from '../db/tables.ts';
import { AppError, notFound } from '../errors.ts';
import { resources } from '../resources/index.ts';
import type { KeyOptions } from '../schema/keys.ts';
import type { Resource } from '../schema/resource.ts';
import { kinds } from '../schema/kinds.ts';
import { atLeast } from '../schema/roles.ts';
import { entryOf, logChange, readCursor, storedValue } from './change-log.ts';
import type { Context } from './context.ts';
import { authorize, parseId } from './operations.ts';
import { insertRow, recordExists, type Row, selectById, updateRow } from './repository.ts';

const DAY = 24 * 60 * 60 * 1000;
const PER_PAGE = 50;

const byName = (name: string | null) => resources.find((r) => r.name === name);
const trashable = () => resources.filter((r) => r.trash).map((r) => r.name);
const cutoff = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const instant = (stored: unknown) => kinds.dateTime.fromDb(stored) as string;

export interface EntryRow {
  id: bigint | number | string;
  at: unknown;
  resource: string | null;
  record_id: bigint | number | string | null;
  changes: string | null;
  actor_id: bigint | number | string | null;
}

/**
 * The keys a record's fields derive (a normalised email, a sort key), worked out again from them: the log keeps only
 * their sources, and a record put back without them would no longer be matched or sorted.
 */
export function withDerived(resource: Resource, values: Row, options: KeyOptions): Row {
  const derived = resource.fields.filter((f) => f.derive).map((f) => [f.name, f.derive!.value(values, options)]);
  return { ...values, ...Object.fromEntries(derived) };
}

/**
 * Writes values a record had before (updated_at too, when given) back over it, its derived keys worked out again, as
 * a `restored` entry caused by `cause`: the undo of a merge, and the rollback of an import.
 */
export async function restoreValues(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  current: Row,
  values: Row,
  cause: bigint,
): Promise<void> {
  const id = BigInt(current[resource.primaryKey.name] as bigint);
  const derived = withDerived(resource, { ...current, ...values }, ctx.database);
  const sources = resource.fields.filter((f) => f.derive?.from.some((name) => name in values));
  const written = { ...values, ...Object.fromEntries(sources.map((f) => [f.name, derived[f.name]])) };
  await updateRow(trx, resource, id, written, entryOf(ctx, resource, 'restored', current, written, cause));
}

/** A deleted record's values, as its entry kept them (the fields it left out were empty). */
function valuesOf(resource: Resource, changes: string): Row {
  const kept = JSON.parse(changes) as Record<string, [unknown, unknown]>;
  return Object.fromEntries(
    resource.fields
      .filter((f) => !f.primary && !f.hidden)
      .map((f) => [f.name, f.name in kept ? storedValue(f, kept[f.name]![0]) : null]),
  );
}

export interface TrashItem {
  change_id: bigint;
  resource: string;
  id: bigint;
  title: string;
  deleted_at: string;
  deleted_by: { id: bigint; name: string } | null;
  /** What its deletion took along, by resource: `{notes: 3}`. */
  with: Record<string, number>;
}

/**
 * What the caller may restore, newest deletion first: managers and admins everything in the trash, an agent what
 * they deleted (they may delete only their own records), a viewer nothing.
 */
export async function listTrash(ctx: Context, trashDays: number, cursor?: string) {
  if (!ctx.actor) throw new AppError(401, 'unauthenticated', 'Sign in first.');
  const actor = ctx.actor;
  if (actor.role === 'viewer') return { data: [], meta: { next_cursor: null } };
  const after = readCursor(cursor);
  const rows = await ctx.database.db
    .selectFrom('change_log as d')
    .leftJoin('users', 'users.id', 'd.actor_id')
    .select(['d.id', 'd.at', 'd.resource', 'd.record_id', 'd.changes', 'd.actor_id', 'users.name as actor_name'])
    .select((eb) =>
      eb
        .selectFrom('change_log as c')
        .select(sql<string>`count(*)`.as('n'))
        .whereRef('c.cause_id', '=', 'd.id')
        .where('c.action', '=', 'deleted')
        .as('taken'),
    )
    // Written out, not a parameter: SQLite uses the partial index of deletions only for the literal.
    .where(sql<boolean>`d.action = 'deleted'`)
    // A deletion on its own, or one of a merge's (the contacts merged into another): never what a deletion took along.
    .where((eb) =>
      eb.or([
        eb('d.cause_id', 'is', null),
        eb.exists(
          eb
            .selectFrom('change_log as m')
            .select('m.id')
            .whereRef('m.id', '=', 'd.cause_id')
            .where('m.action', '=', 'merged'),
        ),
      ]),
    )
    .where('d.changes', 'is not', null)
    .where('d.resource', 'in', trashable())
    .where('d.at', '>=', cutoff(trashDays))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('change_log as r')
            .select('r.id')
            .whereRef('r.cause_id', '=', 'd.id')
            .where('r.action', '=', 'restored'),
        ),
      ),
    )
    .$if(!atLeast(actor.role, 'manager'), (q) => q.where('d.actor_id', '=', actor.id))
    .$if(after !== undefined, (q) => q.where('d.id', '<', after!))
    .orderBy('d.id', 'desc')
    .limit(PER_PAGE + 1)
    .execute();
  const page = rows.slice(0, PER_PAGE);
  const taken = await takenAlong(
    ctx.database.db,
    page.filter((r) => Number(r.taken) > 0).map((r) => BigInt(r.id)),
  );
  const data = page.map((row): TrashItem => {
    const resource = byName(row.resource)!;
    const values = valuesOf(resource, row.changes!);
    return {
      change_id: BigInt(row.id),
      resource: resource.name,
      id: BigInt(row.record_id!),
      title: String(values[resource.title.name] ?? `${resource.label} #${String(row.record_id)}`),
      deleted_at: instant(row.at),
      deleted_by: row.actor_id === null ? null : { id: BigInt(row.actor_id), name: row.actor_name ?? '' },
      with: taken.get(String(row.id)) ?? {},
    };
  });
  return { data, meta: { next_cursor: rows.length > PER_PAGE ? String(page.at(-1)!.id) : null } };
}

/** Per deletion, how many records of each resource it took along. */
async function takenAlong(db: Executor, ids: bigint[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('change_log')
    .select(['cause_id', 'resource', sql<string>`count(*)`.as('n')])
    .where('cause_id', 'in', ids)
    .where('action', '=', 'deleted')
    .groupBy(['cause_id', 'resource'])
    .execute();
  for (const row of rows) {
    const counts = out.get(String(row.cause_id)) ?? {};
    counts[row.resource!] = Number(row.n);
    out.set(String(row.cause_id), counts);
  }
  return out;
}

/**
 * Brings back a deleted record from the trash with its id, and everything its deletion took along (its notes, the
 * links to it that were cleared), in one transaction; each is a `restored` entry. Answers the record.
 */
export async function restoreFromTrash(ctx: Context, rawChangeId: string, trashDays: number) {
  const changeId = parseId(rawChangeId);
  return ctx.database.db.transaction().execute(async (trx) => {
    const entry = await trx
      .selectFrom('change_log')
      .select(['id', 'at', 'resource', 'record_id', 'changes', 'actor_id', 'action', 'cause_id'])
      .where('id', '=', changeId)
      .executeTakeFirst();
    const resource = byName(entry?.resource ?? null);
    if (!entry || !resource?.trash || entry.action !== 'deleted') throw notFound();
    if (entry.cause_id !== null && !(await isMerge(trx, BigInt(entry.cause_id)))) throw notFound();
    const gone = () =>
      new AppError(410, 'purged', `This ${resource.singular} was emptied from the trash after ${trashDays} days.`);
    if (!entry.changes || instant(entry.at) < cutoff(trashDays)) throw gone();
    const values = valuesOf(resource, entry.changes);
    // Whoever may delete the record may bring it back.
    authorize(ctx, resource, 'delete', values);
    await putBack(trx, ctx, entry, resource);
    return { resource, record: (await selectById(trx, resource, BigInt(entry.record_id!)))! };
  });
}

/** Whether an entry is a merge's, whose deleted contacts wait in the trash as deletions of their own do. */
async function isMerge(trx: Executor, id: bigint): Promise<boolean> {
  const entry = await trx.selectFrom('change_log').select('action').where('id', '=', id).executeTakeFirst();
  return entry?.action === 'merged';
}

/** Writes a deleted record back, then what its deletion took along (in the order it was taken). */
export async function putBack(trx: Executor, ctx: Context, entry: EntryRow, resource: Resource): Promise<void> {
  const id = BigInt(entry.record_id!);
  if (await recordExists(trx, resource, id))
    throw new AppError(409, 'already_restored', `This ${resource.singular} is back already.`);
  const values = valuesOf(resource, entry.changes!);
  await dropMissingReferences(trx, resource, values);
  await insertRow(trx, resource, { ...withDerived(resource, values, ctx.database), [resource.primaryKey.name]: id });
  await logChange(trx, ctx, resource, 'restored', id, null, null, BigInt(entry.id));
  const taken = await trx
    .selectFrom('change_log')
    .select(['id', 'at', 'resource', 'record_id', 'changes', 'actor_id', 'action'])
    .where('cause_id', '=', BigInt(entry.id))
    .where('action', 'in', ['deleted', 'updated'])
    .orderBy('id')
    .execute();
  for (const child of taken) {
    const other = byName(child.resource)!;
    if (child.action === 'deleted') await putBack(trx, ctx, child, other);
    else await relink(trx, ctx, child, other);
  }
}

const sameValue = (a: unknown, b: unknown) => ((a ?? null) === null ? (b ?? null) === null : String(a) === String(b));

/**
 * Sets a moved reference back (one cleared by a deletion, or moved to the contact another was merged into), unless
 * the record is gone or has been linked elsewhere since.
 */
export async function relink(trx: Executor, ctx: Context, entry: EntryRow, resource: Resource): Promise<void> {
  const id = BigInt(entry.record_id!);
  const current = await selectById(trx, resource, id, true);
  if (!current) return;
  const [[name, [value, moved]]] = Object.entries(JSON.parse(entry.changes!) as Record<string, [unknown, unknown]>) as [
    [string, [unknown, unknown]],
  ];
  const field = resource.field(name);
  if (!sameValue(current[name], storedValue(field, moved))) return;
  const restored = { [name]: storedValue(field, value) };
  await updateRow(trx, resource, id, restored);
  await logChange(trx, ctx, resource, 'restored', id, current, restored, BigInt(entry.id));
}

/**
 * A reference whose record has gone since (the user who created it deleted) comes back empty when the field may be
 * empty; otherwise the restore is refused, naming what to bring back first.
 */
async function dropMissingReferences(trx: Executor, resource: Resource, values: Row): Promise<void> {
  for (const field of resource.fields) {
    const value = values[field.name];
    if (!field.target || value === null || value === undefined) continue;
    if (await recordExists(trx, field.target, BigInt(value as number))) continue;
    if (field.onDelete === 'set null') values[field.name] = null;
    else
      throw new AppError(
        409,
        'still_deleted',
        `Its ${field.target.singular} #${String(value)} is deleted: restore that first.`,
      );
  }
}

/** Empties the values of deletions older than `trashDays`: what the scheduler runs. Answers how many. */
export async function purgeTrash(db: Executor, trashDays: number): Promise<number> {
  const result = await db
    .updateTable('change_log')
    .set({ changes: null })
    .where(sql<boolean>`action = 'deleted'`)
    .where('changes', 'is not', null)
    .where('at', '<', cutoff(trashDays))
    .where('resource', 'in', trashable())
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
