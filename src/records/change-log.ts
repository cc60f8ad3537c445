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

/** What an entry says happened to a record. */
export const RECORD_ACTIONS = ['created', 'updated', 'deleted'] as const;
export type Action = (typeof RECORD_ACTIONS)[number];

export interface Entry {
  id: bigint;
  at: string;
  action: string;
  actor: { id: bigint; name: string } | null;
  via: string;
  /** In the audit log: the record the entry is about. */
  resource?: string | null;
  record_id?: bigint | null;
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
// Id 0 is the system acting for nobody signed in (a first account registering itself).
const actorId = (ctx: Context) => (ctx.actor && ctx.actor.id > 0n ? ctx.actor.id : null);

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

export interface Timeline {
  data: Entry[];
  meta: { next_cursor: string | null };
}

/** What a page of the log is narrowed to. */
interface Narrowing {
  resource?: string;
  recordId?: bigint;
  actorId?: bigint;
  action?: string;
  /** `at` from, to (inclusive), as instants. */
  from?: string;
  to?: string;
}

const invalid = (errors: Record<string, string[]>) =>
  new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);

const MAX_ID = 2n ** 63n - 1n;

/** An id from a query (a cursor, a user), or undefined when absent; out of any id's range is a 422 naming `name`. */
function readId(raw: unknown, name: string, message: string): bigint | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw) || BigInt(raw) > MAX_ID) throw invalid({ [name]: [message] });
  return BigInt(raw);
}

const readCursor = (cursor: string | undefined) =>
  readId(cursor, 'cursor', 'must be the next_cursor of an earlier page');

/**
 * A page of entries, newest first, after the entry `cursor`. `typed` reads a changed field's values back through its
 * kind (a timeline knows its resource); otherwise they are as stored (64-bit integers as digits).
 */
async function readLog(
  ctx: Context,
  narrowing: Narrowing,
  cursor: string | undefined,
  perPage: number,
  typed?: Resource,
): Promise<Timeline> {
  const after = readCursor(cursor);
  const { resource, recordId, actorId, action, from, to } = narrowing;
  const rows = await ctx.database.db
    .selectFrom('change_log')
    .leftJoin('users', 'users.id', 'change_log.actor_id')
    .select([
      'change_log.id',
      'change_log.at',
      'change_log.action',
      'change_log.via',
      'change_log.actor_id',
      'change_log.resource',
      'change_log.record_id',
      'change_log.changes',
      'change_log.hidden_changed',
      'users.name as actor_name',
    ])
    .$if(resource !== undefined, (q) => q.where('change_log.resource', '=', resource!))
    .$if(recordId !== undefined, (q) => q.where('change_log.record_id', '=', recordId!))
    .$if(actorId !== undefined, (q) => q.where('change_log.actor_id', '=', actorId!))
    .$if(action !== undefined, (q) => q.where('change_log.action', '=', action!))
    .$if(from !== undefined, (q) => q.where('change_log.at', '>=', from!))
    .$if(to !== undefined, (q) => q.where('change_log.at', '<=', to!))
    .$if(after !== undefined, (q) => q.where('change_log.id', '<', after!))
    .orderBy('change_log.id', 'desc')
    .limit(perPage + 1)
    .execute();
  const data = rows.slice(0, perPage).map((row): Entry => {
    const stored = row.changes ? (JSON.parse(row.changes) as Record<string, [unknown, unknown]>) : undefined;
    const changes =
      stored && typed
        ? Object.fromEntries(
            Object.entries(stored).map(([name, [before, after]]) => {
              const field = typed.field(name);
              return [name, [fromJson(field, before), fromJson(field, after)] as [unknown, unknown]];
            }),
          )
        : stored;
    return {
      id: BigInt(row.id),
      at: kinds.dateTime.fromDb(row.at) as string,
      action: row.action,
      actor: row.actor_id === null ? null : { id: BigInt(row.actor_id), name: row.actor_name ?? `#${row.actor_id}` },
      via: row.via,
      ...(typed ? {} : { resource: row.resource, record_id: row.record_id === null ? null : BigInt(row.record_id) }),
      ...(changes ? { changes } : {}),
      ...(row.hidden_changed ? { hidden_changed: JSON.parse(row.hidden_changed) as string[] } : {}),
    };
  });
  const last = data.at(-1);
  return { data, meta: { next_cursor: rows.length > perPage && last ? String(last.id) : null } };
}

/** A record's entries, newest first, `PER_PAGE` at a time after the entry `cursor` (an entry id). */
export function timeline(ctx: Context, resource: Resource, id: bigint, cursor?: string): Promise<Timeline> {
  return readLog(ctx, { resource: resource.name, recordId: id }, cursor, PER_PAGE, resource);
}

const AUDIT_PAGE = 50;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** An instant from a filter's bound: a bare date is its first (`gte`) or last (`lte`) millisecond, UTC. */
function bound(raw: unknown, end: boolean, name: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const text =
    typeof raw === 'string' && DATE_ONLY.test(raw) ? `${raw}T${end ? '23:59:59.999' : '00:00:00.000'}Z` : raw;
  const read = kinds.dateTime.fromJson(text, { primary: false });
  if (!read.ok) throw invalid({ [name]: [read.message] });
  return read.value as string;
}

/**
 * The audit log (admins): every entry, newest first, narrowed by `filter[actor]`, `filter[resource]`,
 * `filter[action]`, `filter[at][gte|lte]`.
 */
export function auditLog(ctx: Context, query: Record<string, unknown>, perPage = AUDIT_PAGE): Promise<Timeline> {
  if (!ctx.actor) throw new AppError(401, 'unauthenticated', 'Sign in first.');
  if (ctx.actor.role !== 'admin') throw new AppError(403, 'forbidden', 'Only admins may read the audit log.');
  const filter = (query.filter ?? {}) as Record<string, unknown>;
  const at = (filter.at ?? {}) as Record<string, unknown>;
  const text = (name: string) => {
    const value = filter[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || value.length > 64)
      throw invalid({ [`filter[${name}]`]: ['must be a short text'] });
    return value;
  };
  return readLog(
    ctx,
    {
      resource: text('resource'),
      action: text('action'),
      actorId: readId(filter.actor, 'filter[actor]', 'must be a user id'),
      from: bound(at.gte, false, 'filter[at][gte]'),
      to: bound(at.lte, true, 'filter[at][lte]'),
    },
    typeof query.cursor === 'string' ? query.cursor : undefined,
    perPage,
  );
}

/** The account events the audit log keeps beside the record changes. */
export const SECURITY_EVENTS = [
  'sign_in',
  'sign_in_failed',
  'locked',
  'two_factor_enabled',
  'two_factor_disabled',
  'password_changed',
  'token_created',
  'token_revoked',
  'role_changed',
] as const;
export type SecurityEvent = (typeof SECURITY_EVENTS)[number];

/** Every action an entry may name, for filters. */
export const ACTIONS: readonly string[] = [...RECORD_ACTIONS, ...SECURITY_EVENTS];

/** Appends a security event about a user's account (`user`), done by `actor` (null: nobody signed in). */
export async function logEvent(
  db: Executor,
  action: SecurityEvent,
  user: bigint | null,
  actor: bigint | null,
  via: Via = 'system',
): Promise<void> {
  await db
    .insertInto('change_log')
    .values({ at: new Date().toISOString(), actor_id: actor, via, action, resource: 'users', record_id: user })
    .execute();
}
