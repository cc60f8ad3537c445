// The change log: one table behind timelines (and, later, the audit log, undo
// and trash). Entries are written by the generic write path in the caller's
// transaction, so a change never commits without its entry nor an entry
// without its change. A changed field is kept as [before, after] in JSON; a
// hidden field (a password) only by name.
import type { Executor } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { kinds } from '../schema/kinds.ts';
import type { Field, Resource } from '../schema/resource.ts';
import type { Context, Via } from './context.ts';
import type { Row } from './repository.ts';

export type Action = 'created' | 'updated' | 'deleted';

export interface Entry {
  id: bigint;
  at: string;
  action: string;
  actor: { id: bigint; name: string } | null;
  via: string;
  changes?: Record<string, [unknown, unknown]>;
  hidden_changed?: string[];
}

// Values are stored as JSON; 64-bit integers as their digits (the field's kind reads them back).
const toJson = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

const fromJson = (field: Field | undefined, value: unknown): unknown => {
  if (value === null || !field) return value;
  const read = field.kind.fromJson(value, field);
  return read.ok ? read.value : value;
};

/**
 * The fields an update changed (`after` holds only what it writes), or all of a deleted record's (`after` null):
 * visible ones as [before, after], hidden ones by name.
 */
function diff(resource: Resource, before: Row, after: Row | null) {
  const changes: Record<string, [unknown, unknown]> = {};
  const hidden: string[] = [];
  for (const name of after ? Object.keys(after) : resource.fields.map((f) => f.name)) {
    const field = resource.field(name);
    if (!field || field.primary || field.timestamp) continue;
    if (field.hidden) {
      if (after) hidden.push(name);
      continue;
    }
    const [from, to] = [before[name] ?? null, after ? (after[name] ?? null) : null];
    if (toJson(from) !== toJson(to)) changes[name] = [from, to];
  }
  return { changes, hidden };
}

const via = (ctx: Context): Via => ctx.via ?? 'api';
const actorId = (ctx: Context) => ctx.actor?.id ?? null;

/**
 * Appends the entry of one write: a created record (`before` null; no values, they are the record's), the fields an
 * update changed (`after`: what it wrote), or a deleted record's last values (`after` null).
 */
export async function logChange(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  action: Action,
  id: bigint,
  before: Row | null,
  after: Row | null,
): Promise<void> {
  const { changes, hidden } = before ? diff(resource, before, after) : { changes: {}, hidden: [] };
  await trx
    .insertInto('change_log')
    .values({
      at: new Date().toISOString(),
      actor_id: actorId(ctx),
      via: via(ctx),
      action,
      resource: resource.name,
      record_id: id,
      changes: Object.keys(changes).length ? toJson(changes) : null,
      hidden_changed: hidden.length ? toJson(hidden) : null,
    })
    .execute();
}

/** Most rows one INSERT of entries carries (nine parameters each, under SQLite's limit). */
const ENTRIES_PER_STATEMENT = 3000;

/** The entries of many created records at once (an import's batch), in the caller's transaction. */
export async function logCreated(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  ids: readonly bigint[],
): Promise<void> {
  const at = new Date().toISOString();
  for (let start = 0; start < ids.length; start += ENTRIES_PER_STATEMENT) {
    const rows = ids.slice(start, start + ENTRIES_PER_STATEMENT).map((id) => ({
      at,
      actor_id: actorId(ctx),
      via: via(ctx),
      action: 'created',
      resource: resource.name,
      record_id: id,
    }));
    await trx.insertInto('change_log').values(rows).execute();
  }
}

const PER_PAGE = 25;

/** A record's entries, newest first, `PER_PAGE` at a time after the entry `cursor` (an entry id). */
export interface Timeline {
  data: Entry[];
  meta: { next_cursor: string | null };
}

export async function timeline(ctx: Context, resource: Resource, id: bigint, cursor?: string): Promise<Timeline> {
  if (cursor !== undefined && !/^\d{1,19}$/.test(cursor)) {
    throw new AppError(422, 'validation_failed', 'The request has invalid fields.', {
      cursor: ['must be the next_cursor of an earlier page'],
    });
  }
  const rows = await ctx.database.db
    .selectFrom('change_log')
    .leftJoin('users', 'users.id', 'change_log.actor_id')
    .select([
      'change_log.id',
      'change_log.at',
      'change_log.action',
      'change_log.via',
      'change_log.actor_id',
      'change_log.changes',
      'change_log.hidden_changed',
      'users.name as actor_name',
    ])
    .where('change_log.resource', '=', resource.name)
    .where('change_log.record_id', '=', id)
    .$if(cursor !== undefined, (q) => q.where('change_log.id', '<', BigInt(cursor!)))
    .orderBy('change_log.id', 'desc')
    .limit(PER_PAGE + 1)
    .execute();
  const data = rows.slice(0, PER_PAGE).map((row): Entry => {
    const stored = row.changes ? (JSON.parse(row.changes) as Record<string, [unknown, unknown]>) : undefined;
    const changes = stored
      ? Object.fromEntries(
          Object.entries(stored).map(([name, [from, to]]) => {
            const field = resource.field(name);
            return [name, [fromJson(field, from), fromJson(field, to)] as [unknown, unknown]];
          }),
        )
      : undefined;
    return {
      id: BigInt(row.id),
      at: kinds.dateTime.fromDb(row.at) as string,
      action: row.action,
      actor: row.actor_id === null ? null : { id: BigInt(row.actor_id), name: row.actor_name ?? `#${row.actor_id}` },
      via: row.via,
      ...(changes ? { changes } : {}),
      ...(row.hidden_changed ? { hidden_changed: JSON.parse(row.hidden_changed) as string[] } : {}),
    };
  });
  const last = data.at(-1);
  return { data, meta: { next_cursor: rows.length > PER_PAGE && last ? String(last.id) : null } };
}
