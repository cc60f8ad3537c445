// The change log: one table behind timelines (and, later, the audit log, undo
// and trash). Entries are written by the generic write path in the caller's
// transaction, so a change never commits without its entry nor an entry
// without its change. A changed field is kept as [before, after] in JSON; a
// hidden field (a password) only by name.
import { sql } from 'kysely';
import type { EntryValues } from './entries.ts';
import { insertsArrays } from '../db/dialect.ts';
import { asRecordTables, type Executor } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { kinds, MAX_ID } from '../schema/kinds.ts';
import { annotationsOf, type Field, type Resource } from '../schema/resource.ts';
import type { Context, Via } from './context.ts';
import type { Row } from './repository.ts';

/**
 * What an entry says happened to a record (`restored`: back from the trash, or a change undone; `merged`: other
 * records merged into it, whose moves and deletions are the entries it causes).
 */
export const RECORD_ACTIONS = ['created', 'updated', 'deleted', 'restored', 'merged'] as const;
export type Action = (typeof RECORD_ACTIONS)[number];
/** What a timeline shows besides its record's own entries: a note added to it. */
export type TimelineAction = Action | 'note';

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
  /** A timeline's note entry: the note as it is now. */
  note?: { id: bigint; body: string };
  /** A timeline's merge entry: the ids of the records merged into this one. */
  merged?: bigint[];
}

// Values are stored as JSON; 64-bit integers as their digits (the field's kind reads them back).
const toJson = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

const fromJson = (field: Field | undefined, value: unknown): unknown => {
  if (value === null || !field) return value;
  const read = field.kind.fromJson(value, field);
  return read.ok ? read.value : value;
};

/**
 * The fields an update changed (`after` holds only what it writes), or all of a deleted record's (`after` null, its
 * timestamps too, for the trash to put back): visible ones as [before, after], hidden ones by name.
 */
function diff(resource: Resource, before: Row, after: Row | null, exact = false) {
  const changes: Record<string, [unknown, unknown]> = {};
  const hidden: string[] = [];
  for (const name of after ? Object.keys(after) : resource.fields.map((f) => f.name)) {
    const field = resource.field(name);
    // A derived field (a match key) follows its sources, which are logged.
    if (!field || field.primary || field.derive || (after && field.timestamp && !exact)) continue;
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
 * The entry of one write: a created record (`before` null; no values, they are the record's), the fields an update
 * or a restore changed (`after`: what it wrote), or a deleted record's last values (`after` null). `cause`: the entry
 * this one follows from.
 */
export function entryOf(
  ctx: Context,
  resource: Resource,
  action: Action,
  before: Row | null,
  after: Row | null,
  cause: bigint | null = null,
): EntryValues | null {
  if (ctx.database.logChanges === false) return null;
  const { changes, hidden } = before ? diff(resource, before, after, ctx.exact) : { changes: {}, hidden: [] };
  return {
    at: new Date().toISOString(),
    actor_id: actorId(ctx),
    via: via(ctx),
    action,
    resource: resource.name,
    changes: Object.keys(changes).length ? toJson(changes) : null,
    hidden_changed: hidden.length ? toJson(hidden) : null,
    cause_id: cause,
    import_id: ctx.importId ?? null,
  };
}

/** Appends the entry of one write (see entryOf) and answers its id. */
export async function logChange(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  action: Action,
  id: bigint,
  before: Row | null,
  after: Row | null,
  cause: bigint | null = null,
): Promise<bigint> {
  const entry = entryOf(ctx, resource, action, before, after, cause);
  if (!entry) return 0n;
  const row = await trx
    .insertInto('change_log')
    .values({ ...entry, record_id: id })
    .returning('id')
    .executeTakeFirstOrThrow();
  return BigInt(row.id);
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
  if (ctx.database.logChanges === false) return;
  const at = new Date().toISOString();
  if (insertsArrays(trx)) {
    // What the entries share once, and their records' ids as one array.
    const all = ids.map(String);
    await sql`insert into change_log (at, actor_id, via, action, resource, record_id, import_id)
      select ${at}::timestamptz, ${actorId(ctx)}::int8, ${via(ctx)}, 'created', ${resource.name}, id,
        ${ctx.importId ?? null}::int8
      from unnest(${all}::int8[]) as id`.execute(trx);
    return;
  }
  for (let start = 0; start < ids.length; start += ENTRIES_PER_STATEMENT) {
    const rows = ids.slice(start, start + ENTRIES_PER_STATEMENT).map((id) => ({
      at,
      actor_id: actorId(ctx),
      via: via(ctx),
      action: 'created',
      resource: resource.name,
      record_id: id,
      import_id: ctx.importId ?? null,
    }));
    await trx.insertInto('change_log').values(rows).execute();
  }
}

/**
 * The entries of a reference moved on many records at once, in the caller's transaction: cleared because the record
 * it named was deleted (`cause`), or moved to another (work reassigned).
 */
export async function logMoved(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  field: Field,
  [from, to]: [bigint, bigint | null],
  ids: readonly bigint[],
  cause: bigint | null,
): Promise<void> {
  const at = new Date().toISOString();
  const changes = toJson({ [field.name]: [from, to] });
  for (let start = 0; start < ids.length; start += ENTRIES_PER_STATEMENT) {
    const rows = ids.slice(start, start + ENTRIES_PER_STATEMENT).map((id) => ({
      at,
      actor_id: actorId(ctx),
      via: via(ctx),
      action: 'updated',
      resource: resource.name,
      record_id: id,
      changes,
      cause_id: cause,
      import_id: ctx.importId ?? null,
    }));
    await trx.insertInto('change_log').values(rows).execute();
  }
}

/**
 * The values a record's fields had before one of its changes (an update or a restore), read back through their
 * kinds; undefined when `changeId` is no such change of this record.
 */
export async function changeBefore(
  ctx: Context,
  resource: Resource,
  id: bigint,
  changeId: bigint,
): Promise<Row | undefined> {
  const entry = await ctx.database.db
    .selectFrom('change_log')
    .select(['changes'])
    .where('id', '=', changeId)
    .where('resource', '=', resource.name)
    .where('record_id', '=', id)
    .where('action', 'in', ['updated', 'restored'])
    .executeTakeFirst();
  if (!entry) return undefined;
  const changes = entry.changes ? (JSON.parse(entry.changes) as Record<string, [unknown, unknown]>) : {};
  return Object.fromEntries(
    Object.entries(changes)
      .filter(([name]) => resource.writable.some((f) => f.name === name))
      .map(([name, [before]]) => [name, fromJson(resource.field(name), before)]),
  );
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

/** An id from a query (a cursor, a user), or undefined when absent; out of any id's range is a 422 naming `name`. */
function readId(raw: unknown, name: string, message: string): bigint | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw) || BigInt(raw) > MAX_ID) throw invalid({ [name]: [message] });
  return BigInt(raw);
}

/** A page's cursor (an entry id), or undefined for the first page; another text is a 422 naming it. */
export const readCursor = (cursor: string | undefined) =>
  readId(cursor, 'cursor', 'must be the next_cursor of an earlier page');

/**
 * A page of entries, newest first, after the entry `cursor`. `typed` reads a changed field's values back through its
 * kind (a timeline knows its resource); otherwise they are as stored (64-bit integers as digits). A timeline also
 * shows the creation of the records that annotate its record (a note on a contact), with their text as it is now.
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
  const annotations = typed && recordId !== undefined ? annotationsOf(typed) : [];
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
    .$if(annotations.length === 0 && resource !== undefined, (q) => q.where('change_log.resource', '=', resource!))
    .$if(annotations.length === 0 && recordId !== undefined, (q) => q.where('change_log.record_id', '=', recordId!))
    .$if(annotations.length > 0, (q) =>
      q.where((eb) =>
        eb.or([
          eb.and([eb('change_log.resource', '=', resource!), eb('change_log.record_id', '=', recordId!)]),
          ...annotations.map(({ resource: other, field }) =>
            eb.and([
              eb('change_log.resource', '=', other.name),
              eb('change_log.action', '=', 'created'),
              sql<boolean>`change_log.record_id in (select ${sql.ref(other.primaryKey.name)} from ${sql.table(
                other.table,
              )} where ${sql.ref(field.name)} = ${recordId!})`,
            ]),
          ),
        ]),
      ),
    )
    .$if(actorId !== undefined, (q) => q.where('change_log.actor_id', '=', actorId!))
    .$if(action !== undefined, (q) => q.where('change_log.action', '=', action!))
    .$if(from !== undefined, (q) => q.where('change_log.at', '>=', from!))
    .$if(to !== undefined, (q) => q.where('change_log.at', '<=', to!))
    .$if(after !== undefined, (q) => q.where('change_log.id', '<', after!))
    .orderBy('change_log.id', 'desc')
    .limit(perPage + 1)
    .execute();
  const texts = await annotationTexts(ctx, annotations, rows);
  const merged = typed ? await mergedInto(ctx, rows) : new Map<string, bigint[]>();
  const data = rows.slice(0, perPage).flatMap((row): Entry[] => {
    const annotation = annotations.find((a) => a.resource.name === row.resource && row.resource !== resource);
    if (annotation) {
      const text = texts.get(`${row.resource}:${String(row.record_id)}`);
      if (text === undefined) return [];
      return [
        {
          ...entryHead(row),
          action: annotation.resource.decl.timelineAction!,
          [annotation.resource.singular]: { id: BigInt(row.record_id!), [annotation.resource.title.name]: text },
        },
      ];
    }
    const stored = row.changes ? (JSON.parse(row.changes) as Record<string, [unknown, unknown]>) : undefined;
    const changes =
      stored && typed
        ? Object.fromEntries(
            Object.entries(stored)
              // An exact entry (an import's, a merge's) keeps updated_at for its rollback; nobody changed it.
              .filter(([name]) => !typed.field(name)?.timestamp)
              .map(([name, [before, after]]) => {
                const field = typed.field(name);
                return [name, [fromJson(field, before), fromJson(field, after)] as [unknown, unknown]];
              }),
          )
        : stored;
    return [
      {
        ...entryHead(row),
        ...(typed ? {} : { resource: row.resource, record_id: row.record_id === null ? null : BigInt(row.record_id) }),
        ...(changes ? { changes } : {}),
        ...(row.hidden_changed ? { hidden_changed: JSON.parse(row.hidden_changed) as string[] } : {}),
        ...(merged.has(String(row.id)) ? { merged: merged.get(String(row.id)) } : {}),
      },
    ];
  });
  const last = rows.length > perPage ? rows[perPage - 1] : undefined;
  return { data, meta: { next_cursor: last ? String(last.id) : null } };
}

interface LogRow {
  id: bigint | number | string;
  at: unknown;
  action: string;
  via: string;
  actor_id: bigint | number | string | null;
  actor_name: string | null;
  resource: string | null;
  record_id: bigint | number | string | null;
}

const entryHead = (row: LogRow) => ({
  id: BigInt(row.id),
  at: kinds.dateTime.fromDb(row.at) as string,
  action: row.action,
  actor: row.actor_id === null ? null : { id: BigInt(row.actor_id), name: row.actor_name ?? `#${row.actor_id}` },
  via: row.via,
});

/** For each merge among the rows, the ids of the records it merged (deleted, with the merge as their cause). */
async function mergedInto(ctx: Context, rows: readonly LogRow[]): Promise<Map<string, bigint[]>> {
  const merges = rows.filter((r) => r.action === 'merged');
  const ids = new Map<string, bigint[]>(merges.map((r) => [String(r.id), []]));
  if (merges.length === 0) return ids;
  const deleted = await ctx.database.db
    .selectFrom('change_log')
    .select(['cause_id', 'record_id'])
    .where(
      'cause_id',
      'in',
      merges.map((r) => BigInt(r.id)),
    )
    .where('action', '=', 'deleted')
    .where('resource', '=', merges[0]!.resource)
    .orderBy('id')
    .execute();
  for (const row of deleted) ids.get(String(row.cause_id))?.push(BigInt(row.record_id!));
  return ids;
}

/** The current text of each annotation the rows name (none for one deleted since), by `resource:id`. */
async function annotationTexts(
  ctx: Context,
  annotations: ReturnType<typeof annotationsOf>,
  rows: readonly LogRow[],
): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const { resource } of annotations) {
    const ids = rows.filter((r) => r.resource === resource.name).map((r) => BigInt(r.record_id!));
    if (ids.length === 0) continue;
    const pk = resource.primaryKey.name;
    const title = resource.title.name;
    const found = await asRecordTables(ctx.database.db)
      .selectFrom(resource.table)
      .select([pk, title])
      .where(pk, 'in', ids)
      .execute();
    for (const row of found) texts.set(`${resource.name}:${String(row[pk])}`, String(row[title]));
  }
  return texts;
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
  'user_deactivated',
  'settings_changed',
  'columns_chosen',
] as const;
export type SecurityEvent = (typeof SECURITY_EVENTS)[number];

/** Every action an entry may name, for filters. */
/** An import rolled back: the entry its removals and restores follow from (records/imports.ts), about no record. */
export const ROLLED_BACK = 'rolled_back';

export const ACTIONS: readonly string[] = [...RECORD_ACTIONS, ROLLED_BACK, ...SECURITY_EVENTS];

/** A stored value read back through its field's kind (64-bit integers were kept as digits). */
export const storedValue = fromJson;

/**
 * Appends a security event about a user's account (`user`), done by `actor` (null: nobody signed in); or, with
 * `about`, an event about something that is not a record (the settings: `{resource: 'settings', changes}`).
 */
export async function logEvent(
  db: Executor,
  action: SecurityEvent,
  user: bigint | null,
  actor: bigint | null,
  via: Via = 'system',
  about?: { resource: string; changes: Record<string, [unknown, unknown]> },
): Promise<void> {
  await db
    .insertInto('change_log')
    .values({
      at: new Date().toISOString(),
      actor_id: actor,
      via,
      action,
      resource: about?.resource ?? 'users',
      record_id: user,
      ...(about ? { changes: JSON.stringify(about.changes) } : {}),
    })
    .execute();
}
