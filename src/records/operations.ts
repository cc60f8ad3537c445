// The operations on records. The JSON API and the web pages both call these;
// neither talks to the database directly. Each write runs in one transaction.
import { sql } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation } from '../db/dialect.ts';
import { loadInOnePass, updateInOnePass } from '../db/bulk-load.ts';
import { asRecordTables, type Executor } from '../db/tables.ts';
import { groupedTransaction } from '../db/group-commit.ts';
import { AppError, type FieldErrors, notFound } from '../errors.ts';
import { encodeCursor, parseListQuery, type ReadScope } from '../derive/list-query.ts';
import { countsOf, type Field, type Resource } from '../schema/resource.ts';
import { MAX_ID } from '../schema/kinds.ts';
import { type Ability, allows, atLeast } from '../schema/roles.ts';
import { type Actor, type Context, confirmEpoch, type RowContext } from './context.ts';
import { etagOf, ifMatchHolds } from './etag.ts';
import { changeBefore, entryOf, logChange, logCreated, logMoved, timeline } from './change-log.ts';
import { noticeAssignments } from './notifications.ts';
import { rulesOf } from './rules.ts';
import { readInput } from './input.ts';
import {
  countReferences,
  moveReferences,
  countRows,
  deleteRow,
  recordsExist,
  insertRow,
  loadRows,
  type Row,
  selectById,
  selectByIdWithEpoch,
  selectByIds,
  selectWithCounts,
  selectReferencing,
  selectCountedRows,
  selectRows,
  updateRow,
} from './repository.ts';

export type { Actor, Context } from './context.ts';

const unauthenticated = () =>
  new AppError(401, 'unauthenticated', 'Sign in, or send a personal access token as Authorization: Bearer <token>.');

const WORDS: Record<Ability, string> = {
  read: 'read',
  create: 'add',
  update: 'change',
  delete: 'delete',
  import: 'import',
  export: 'export',
};

/** Whether the record is the actor's own: one of its user references (creator, assignee) names them. */
const ownedBy = (resource: Resource, record: Row, actor: Actor) =>
  resource.owners.some(
    (f) => record[f.name] !== null && record[f.name] !== undefined && BigInt(record[f.name] as number) === actor.id,
  );

/**
 * Whether the actor may do `ability` with the resource; for update and delete, with this record (`true`: with a
 * record of their own, the least they could be allowed).
 */
export function may(actor: Actor | undefined, resource: Resource, ability: Ability, record?: Row | true): boolean {
  if (!actor) return false;
  const owned = record === true || (record !== undefined && ownedBy(resource, record, actor));
  return allows(actor.role, resource.access, ability, owned);
}

/**
 * Every record operation starts here: strangers get 401, and anyone whose role does not allow the work (CONTRACT.md,
 * "Roles") 403. Update and delete pass the record, which may be the actor's own.
 */
export function authorize(
  ctx: Pick<Context, 'actor'>,
  resource: Resource,
  ability: Ability = 'read',
  record?: Row | true,
): Actor {
  if (!ctx.actor) throw unauthenticated();
  if (!may(ctx.actor, resource, ability, record)) {
    const whose =
      record && record !== true && resource.owners.length
        ? ` ${resource.name} that are not yours`
        : ` ${resource.name}`;
    throw new AppError(403, 'forbidden', `Your role (${ctx.actor.role}) may not ${WORDS[ability]}${whose}.`);
  }
  return ctx.actor;
}

/**
 * Who may see the titles of a resource's records, to pick one in a reference: whoever may read the resource, or
 * read one that references it (an agent assigns inquiries to users without managing users).
 */
export function authorizePick(ctx: Context, resource: Resource): Actor {
  if (!ctx.actor) throw unauthenticated();
  if (resource.referencedBy.some((r) => may(ctx.actor, r.resource, 'read'))) return ctx.actor;
  return authorize(ctx, resource);
}

/**
 * Each reference in `values` that names no record (or work assigned to a deactivated user), as field errors. With
 * `ctx`, its auth epoch is confirmed by the same statement (confirmEpoch) before anything else is read.
 */
async function missingReferences(
  trx: Executor,
  resource: Resource,
  values: Row,
  ctx?: Context,
): Promise<FieldErrors | null> {
  const named = resource.fields.flatMap((field) => {
    const value = values[field.name];
    const target =
      field.listTarget && Array.isArray(value) ? field.listTarget : value == null ? undefined : field.target;
    if (!target) return [];
    const ids = (Array.isArray(value) ? value : [value]).map((id) => BigInt(id as number));
    // Work goes to someone who can still sign in: an assignee is read whole, to see that the account is active.
    return [{ field, target, ids, whole: Boolean(field.assignee && target.field('active')) }];
  });
  // The others are only looked for, all in one statement.
  const { found: exist, authEpoch } = await recordsExist(
    trx,
    named.filter((n) => !n.whole).flatMap((n) => n.ids.map((id) => ({ resource: n.target, id }))),
    { authEpoch: ctx?.authEpoch !== undefined },
  );
  if (ctx) confirmEpoch(ctx, authEpoch);
  const errors: FieldErrors = {};
  let next = 0;
  for (const { field, target, ids, whole } of named) {
    const found = whole ? await selectById(trx, target, ids[0]!) : undefined;
    if (found?.active === false)
      errors[field.name] = [`names a deactivated ${target.singular}: assign someone who can sign in`];
    const missing = whole ? (found ? [] : ids) : ids.filter(() => !exist[next++]);
    if (missing.length)
      errors[field.name] = [`names no ${target.singular}: there is no ${target.singular} #${missing.join(', #')}`];
  }
  return Object.keys(errors).length ? errors : null;
}

/** Refuses `values` naming no record (missingReferences); a create on trust confirms its sign-in here (`ctx`). */
export async function checkReferences(trx: Executor, resource: Resource, values: Row, ctx?: Context): Promise<void> {
  const errors = await missingReferences(trx, resource, values, ctx);
  if (errors) throw new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);
}

/** Deleting a record that others still reference under ON DELETE RESTRICT is refused, saying which and how many. */
async function checkNotReferenced(trx: Executor, resource: Resource, id: bigint): Promise<void> {
  for (const { resource: other, field } of resource.referencedBy) {
    if (field.onDelete !== 'restrict') continue;
    const n = await countReferences(trx, other, field, id);
    if (n > 0) {
      const what = n === 1 ? `1 ${other.singular}` : `${n.toLocaleString('en-US')} ${other.name}`;
      throw new AppError(
        409,
        'still_referenced',
        `This ${resource.singular} still has ${what} (${field.label}); delete or move them first.`,
      );
    }
  }
}

/**
 * Runs a write; a unique-index violation becomes a 422 naming the unique field it concerns, a foreign-key
 * violation (a referenced record deleted meanwhile) a 422 naming the reference.
 */
async function uniqueAsFieldError<T>(
  ctx: Context,
  resource: Resource,
  values: Row,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isForeignKeyViolation(error)) {
      const errors = await missingReferences(ctx.database.db, resource, values);
      throw errors ? new AppError(422, 'validation_failed', 'The request has invalid fields.', errors) : error;
    }
    if (!isUniqueViolation(error)) throw error;
    // The unique fields written whose value another record holds (compared as the unique indexes do: lower-cased).
    const written = resource.fields.filter((f) => f.unique && values[f.name] != null);
    const taken = [];
    for (const f of written) {
      const holder = await asRecordTables(ctx.database.db)
        .selectFrom(resource.table)
        .select(resource.primaryKey.name)
        .where(sql`lower(${sql.ref(f.name)})`, '=', String(values[f.name]).toLowerCase())
        .executeTakeFirst();
      if (holder) taken.push(f);
    }
    const fields = taken.length ? taken : written.slice(0, 1);
    if (fields.length === 0) throw new AppError(409, 'conflict', 'Another record already holds one of these values.');
    throw new AppError(
      422,
      'validation_failed',
      'The request has invalid fields.',
      Object.fromEntries(fields.map((f) => [f.name, ['is already taken']])),
    );
  }
}

/** Fields the server sets (the creator; a due time): only an admin may set them otherwise. */
export function checkServerSet(actor: Actor, resource: Resource, values: Row, before: Row | null): void {
  if (actor.role === 'admin') return;
  const serverValue = (f: Field) => (before ? before[f.name] : f.defaultActor ? actor.id : null);
  const changed = resource.fields.filter(
    (f) => (f.defaultActor || f.adminOnly) && f.name in values && String(values[f.name]) !== String(serverValue(f)),
  );
  if (changed.length === 0) return;
  throw new AppError(
    403,
    'forbidden',
    changed.every((f) => f.defaultActor)
      ? 'Only an admin may change who created a record.'
      : `Only an admin may set ${changed.map((f) => f.label).join(', ')}.`,
    Object.fromEntries(changed.map((f) => [f.name, ['is set by the server; only an admin may change it']])),
  );
}

/** Turns checked input into stored values: hashes a password, for instance. */
export async function prepare(resource: Resource, values: Row): Promise<Row> {
  const out = { ...values };
  for (const [name, value] of Object.entries(values)) {
    const kind = resource.field(name)!.kind;
    if (kind.beforeStore && value !== null) out[name] = await kind.beforeStore(value);
  }
  return out;
}

const holdsValue = (v: unknown) => v !== null && v !== undefined && !(typeof v === 'string' && v.trim() === '');

/**
 * A record that must hold one of some fields (a contact: name, email or phone) and holds none is refused, naming
 * each.
 */
export function checkNeedsOneOf(resource: Resource, record: Row): void {
  const fields = resource.needsOneOf;
  if (fields.length === 0 || fields.some((f) => holdsValue(record[f.name]))) return;
  const names = fields.map((f) => f.label.toLowerCase());
  const list = `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  const message = `is needed: give at least one of ${list}`;
  throw new AppError(
    422,
    'validation_failed',
    `A ${resource.singular} needs at least one of ${list}.`,
    Object.fromEntries(fields.map((f) => [f.name, [message]])),
  );
}

/**
 * Reads an update's body. A value sent back exactly as it is stored is no
 * change and is not checked again: an email stored before it had to be valid
 * (by the original service) must not stop edits of the record's other fields.
 */
async function readUpdate(ctx: Context, resource: Resource, id: bigint, body: unknown): Promise<Row> {
  try {
    return readInput(resource, body, 'update');
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors || typeof body !== 'object' || body === null) throw error;
    const before = await selectById(ctx.database.db, resource, id);
    const sent = body as Row;
    const unchanged = Object.keys(error.errors).filter(
      (k) => before && Object.hasOwn(sent, k) && typeof sent[k] === 'string' && sent[k] === before[k],
    );
    if (unchanged.length === 0) throw error;
    return readInput(
      resource,
      Object.fromEntries(Object.entries(sent).filter(([k]) => !unchanged.includes(k))),
      'update',
    );
  }
}

export interface ListResult {
  data: Row[];
  meta: { page?: number; per_page: number; total?: number; last_page?: number; next_cursor?: string | null };
}

export interface RecordResult {
  record: Row;
  etag: string;
  /**
   * The counts of the records that name it (a contact's `inquiries_count`), when the write read the record back with
   * them, in its transaction (they are not in the ETag).
   */
  counts?: Row;
  /** What the write did beyond the record, in words for the person who asked (an invitation was mailed). */
  notice?: string;
  /** The change-log entry of an update (to undo it); none when nothing changed or the log is off. */
  changeId?: bigint;
  /** Shown once in a create's answer, never again (a webhook's secret). */
  reveal?: Readonly<Record<string, string>>;
}

const ID = /^[1-9]\d{0,18}$/;

/** A path id that is not a positive 64-bit integer names no record. */
export function parseId(raw: string): bigint {
  if (!ID.test(raw)) throw notFound();
  const id = BigInt(raw);
  if (id > MAX_ID) throw notFound();
  return id;
}

function preconditionFailed(): AppError {
  return new AppError(
    412,
    'precondition_failed',
    'The record has changed since you read it (If-Match does ' +
      'not match its ETag). Read it again and reapply your change.',
  );
}

export interface ListOptions {
  /** Count the matches only up to one past this (meta.total is then at most countAtMost + 1), in the same statement. */
  countAtMost?: number;
  /** Read only these fields (a board's card shows a few): the records hold them alone, without computed fields. */
  fields?: readonly string[];
}

export async function listRecords(
  ctx: Context,
  resource: Resource,
  query: Record<string, unknown>,
  options: ListOptions = {},
): Promise<ListResult> {
  const actor = authorize(ctx, resource);
  const plan = { ...parseListQuery(resource, query), scope: readScopeOf(actor, resource) };
  const { db } = ctx.database;
  const { paging } = plan;
  const fields = options.fields ? resource.visible.filter((f) => options.fields!.includes(f.name)) : resource.visible;
  if (paging.mode === 'cursor') {
    const rows = await selectRows(db, resource, plan, paging.perPage + 1, 0, fields);
    const more = rows.length > paging.perPage;
    const data = more ? rows.slice(0, paging.perPage) : rows;
    return { data, meta: { per_page: paging.perPage, next_cursor: more ? encodeCursor(plan, data.at(-1)!) : null } };
  }
  const offset = (paging.page - 1) * paging.perPage;
  const { total, rows: data } =
    options.countAtMost === undefined
      ? await Promise.all([
          countRows(db, resource, plan),
          selectRows(db, resource, plan, paging.perPage, offset, fields),
        ]).then(([total, rows]) => ({ total, rows }))
      : await selectCountedRows(db, resource, plan, paging.perPage, offset, options.countAtMost, fields);
  return {
    data,
    meta: {
      page: paging.page,
      per_page: paging.perPage,
      total,
      last_page: Math.max(1, Math.ceil(total / paging.perPage)),
    },
  };
}

/**
 * A record just written or merged, with the counts of the records that name it (a contact's `inquiries_count`): those
 * the write read with it, else read as a read by id reads them (selectWithCounts).
 */
export async function withCounts(ctx: Context, resource: Resource, record: Row, counts?: Row): Promise<Row> {
  if (counts) return { ...record, ...counts };
  if (countsOf(resource).length === 0) return record;
  const id = BigInt(record[resource.primaryKey.name] as bigint);
  const found = await selectWithCounts(ctx.database.db, resource, id);
  return { ...record, ...found?.counts };
}

/** A record's timeline (it must exist), a page of entries newest first. */
export async function recordActivity(ctx: Context, resource: Resource, rawId: string, cursor?: string) {
  const { record } = await getRecord(ctx, resource, rawId);
  return timeline(ctx, resource, BigInt(record[resource.primaryKey.name] as bigint), cursor);
}

/**
 * Reads a record; `ability`: what the reader means to do with it (a page offering to edit it checks 'update').
 * `withCounts`: the counts of the records that name it too, read in the same statement (they are not in the ETag).
 */
export async function getRecord(
  ctx: Context,
  resource: Resource,
  rawId: string,
  ability: Ability = 'read',
  options: { withCounts?: boolean } = {},
): Promise<RecordResult & { counts?: Row }> {
  const actor = authorize(ctx, resource);
  const { db } = ctx.database;
  const id = parseId(rawId);
  const authEpoch = ctx.authEpoch !== undefined;
  const found: { record: Row; counts?: Row; authEpoch?: string } | undefined = options.withCounts
    ? await selectWithCounts(db, resource, id, { authEpoch })
    : await selectByIdWithEpoch(db, resource, id, false, authEpoch);
  if (found) confirmEpoch(ctx, found.authEpoch);
  if (!found || !visibleTo(actor, resource, found.record)) throw notFound();
  if (ability !== 'read') authorize(ctx, resource, ability, found.record);
  return { record: found.record, etag: etagOf(found.record), counts: found.counts };
}

/**
 * What the actor may read of a resource that keeps some records to their owners (ResourceDecl.readScope): undefined
 * when they see every record.
 */
export function readScopeOf(actor: Actor, resource: Resource): ReadScope | undefined {
  const scope = resource.readScope;
  if (!scope || atLeast(actor.role, scope.all)) return undefined;
  return { owners: resource.owners, actorId: actor.id, sharedWhen: scope.sharedWhen };
}

/**
 * Whether the actor sees the record at all: someone else's personal record (a saved view) is not there for them —
 * reading, changing or deleting it is a 404, as another user's token is.
 */
function visibleTo(actor: Actor, resource: Resource, record: Row): boolean {
  const scope = readScopeOf(actor, resource);
  if (!scope || ownedBy(resource, record, actor)) return true;
  return scope.sharedWhen !== undefined && record[scope.sharedWhen.name] === true;
}

/**
 * Fields the server fills: defaults, timestamps, dates that default to now when their trigger is set, and derived
 * fields whose sources are written.
 */
export function stamp(
  ctx: RowContext,
  resource: Resource,
  values: Row,
  before: Row | null,
  now: string,
  actor: Actor,
): Row {
  const out = { ...values };
  for (const f of resource.fields) {
    if (f.derive && (!before || f.derive.from.some((name) => name in values)))
      out[f.name] = f.derive.value({ ...before, ...values }, ctx.database);
  }
  for (const f of resource.fields) {
    if (!before && !(f.name in values)) {
      if (f.default !== undefined) out[f.name] = f.default;
      // The system acting for nobody (id 0: a public form) made it: no creator.
      if (f.defaultActor) out[f.name] = actor.id > 0n ? Number(actor.id) : null;
    }
    if (f.timestamp === 'create' && !before) out[f.name] = now;
    if (f.timestamp === 'update') out[f.name] = now;
    const trigger = f.defaultNowWhen;
    if (
      trigger &&
      !(f.name in values) &&
      trigger in values &&
      values[trigger] !== null &&
      values[trigger] !== before?.[trigger]
    ) {
      out[f.name] = now;
    }
  }
  return out;
}

/**
 * Everything a create does before it writes: checks the body, fills defaults,
 * timestamps and the creator, hashes a password. Throws the same 401/403/422
 * as createRecord. The CSV import prepares each row with it, then inserts
 * many at once with insertPreparedBatch.
 */
export async function prepareCreate(
  ctx: RowContext,
  resource: Resource,
  body: unknown,
  now = new Date().toISOString(),
): Promise<Row> {
  const actor = authorize(ctx, resource, 'create');
  const input = readInput(resource, body, 'create');
  checkServerSet(actor, resource, input, null);
  checkNeedsOneOf(resource, input);
  return prepare(resource, stamp(ctx, resource, input, null, now, actor));
}

/** Writes one row from prepareCreate, with its entry, inside the caller's transaction; answers its id. */
export function insertPrepared(trx: Executor, ctx: Context, resource: Resource, values: Row): Promise<bigint> {
  return insertRow(trx, resource, values, entryOf(ctx, resource, 'created', null, null));
}

/** `within`: more work in the create's transaction, once the record is written (an intake's idempotency key). */
export async function createRecord(
  ctx: Context,
  resource: Resource,
  body: unknown,
  within?: (trx: Executor, record: Row) => Promise<void>,
): Promise<RecordResult> {
  const values = await prepareCreate(ctx, resource, body);
  const hooks = rulesOf(resource);
  const { record, counts, after } = await uniqueAsFieldError(ctx, resource, values, () =>
    groupedTransaction(ctx.database, async (trx) => {
      await checkReferences(trx, resource, values, ctx);
      await hooks.beforeCreate?.(trx, ctx, values);
      const id = await insertPrepared(trx, ctx, resource, values);
      await noticeAssignments(trx, ctx, resource, [{ id, before: null, values }]);
      const { record, counts } = (await selectWithCounts(trx, resource, id))!;
      await within?.(trx, record);
      return { record, counts, after: await hooks.afterCreate?.(trx, ctx, record, body as Row) };
    }),
  );
  after?.afterCommit?.();
  return { record, counts, etag: etagOf(record), notice: after?.notice, reveal: after?.reveal };
}

/**
 * Inserts rows from prepareCreate in one transaction, with multi-row INSERTs
 * (a statement per row would flush the search index per row; MariaDB: one
 * LOAD DATA, repository.ts loadRows): all of them, or, when a
 * unique value turns out to be taken (by a stored record or an earlier row of
 * the batch), the batch is rolled back and each row is retried in its own
 * transaction so that only the rows at fault are refused. Answers, per row,
 * null when it was written or the AppError (422/409) that refused it. A row
 * is never half-written; any other failure (the database gone) is thrown.
 */
export async function insertPreparedBatch(
  ctx: Context,
  resource: Resource,
  rows: readonly Row[],
): Promise<(AppError | null)[]> {
  authorize(ctx, resource, 'create');
  const { db } = ctx.database;
  const hooks = rulesOf(resource);
  try {
    await db.transaction().execute(async (trx) => {
      // On copies: a batch rolled back leaves the rows as they came, for the retries one by one.
      const batch = rows.map((r) => ({ ...r }));
      if (hooks.beforeCreateMany) await hooks.beforeCreateMany(trx, ctx, batch);
      else for (const values of batch) await hooks.beforeCreate?.(trx, ctx, values);
      // The batch's search index rows are written once for it (src/db/bulk-load.ts).
      const ids = await loadInOnePass(trx, resource.table, () => loadRows(trx, resource, [batch]));
      await logCreated(trx, ctx, resource, ids);
      await noticeAssignments(
        trx,
        ctx,
        resource,
        ids.map((id, i) => ({ id, before: null, values: batch[i]! })),
      );
    });
    return rows.map(() => null);
  } catch (error) {
    if (!isUniqueViolation(error) && !isForeignKeyViolation(error)) throw error;
  }
  const outcomes: (AppError | null)[] = [];
  for (const values of rows) {
    try {
      await uniqueAsFieldError(ctx, resource, values, () =>
        db.transaction().execute(async (trx) => {
          const row = { ...values };
          await hooks.beforeCreate?.(trx, ctx, row);
          const id = await insertPrepared(trx, ctx, resource, row);
          await noticeAssignments(trx, ctx, resource, [{ id, before: null, values: row }]);
        }),
      );
      outcomes.push(null);
    } catch (error) {
      if (!(error instanceof AppError) || (error.status !== 422 && error.status !== 409)) throw error;
      outcomes.push(error);
    }
  }
  return outcomes;
}

export async function updateRecord(
  ctx: Context,
  resource: Resource,
  rawId: string,
  body: unknown,
  ifMatch?: string,
): Promise<RecordResult> {
  authorize(ctx, resource, 'update', true);
  const id = parseId(rawId);
  return writeUpdate(ctx, resource, id, await readUpdate(ctx, resource, id, body), ifMatch);
}

/**
 * What an update (`input`, `stored` as prepare() made it) changes in `before`: only what differs, checked against the
 * record (fields the server sets, needsOneOf, the resource's beforeUpdate rule); empty when nothing would change. The
 * single-record path and each record of a bulk update go through it.
 */
export async function changesTo(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  actor: Actor,
  before: Row,
  input: Row,
  stored: Row,
): Promise<Row> {
  // A hidden field (a password) is never read back, so sending one always counts as a change.
  const changes = Object.fromEntries(
    Object.entries(stored).filter(([k]) => resource.field(k)!.hidden || input[k] !== before[k]),
  );
  if (Object.keys(changes).length === 0) return changes;
  checkServerSet(actor, resource, changes, before);
  // Only a change to one of them can leave a record with none (a stored record may already hold none).
  if (resource.needsOneOf.some((f) => f.name in changes)) checkNeedsOneOf(resource, { ...before, ...changes });
  await rulesOf(resource).beforeUpdate?.(trx, ctx, before, changes);
  return changes;
}

/**
 * Writes checked input over a record, with its entry: an update, or a restore of the values before the change
 * `cause`.
 */
async function writeUpdate(
  ctx: Context,
  resource: Resource,
  id: bigint,
  input: Row,
  ifMatch: string | undefined,
  action: 'updated' | 'restored' = 'updated',
  cause: bigint | null = null,
): Promise<RecordResult> {
  const actor = authorize(ctx, resource, 'update', true);
  const stored = await prepare(resource, input);
  const { record, counts, changeId } = await uniqueAsFieldError(ctx, resource, input, () =>
    // Updates that arrive together share a transaction on SQLite, as creates do (src/db/group-commit.ts).
    groupedTransaction(ctx.database, async (trx) => {
      const read = await selectByIdWithEpoch(trx, resource, id, true, ctx.authEpoch !== undefined);
      if (read) confirmEpoch(ctx, read.authEpoch);
      const before = read?.record;
      if (!before || !visibleTo(actor, resource, before)) throw notFound();
      authorize(ctx, resource, 'update', before);
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etagOf(before))) throw preconditionFailed();
      const changeId = await applyUpdate(trx, ctx, resource, actor, before, input, stored, action, cause);
      if (changeId === undefined) return { record: before, counts: undefined, changeId };
      return { ...(await selectWithCounts(trx, resource, id))!, changeId };
    }),
  );
  return { record, counts, etag: etagOf(record), changeId };
}

/**
 * Writes what `input` changes in `before` (read locked), with its entry, inside the caller's transaction; answers the
 * entry's id, or undefined when nothing changed. An update, a restore, and each row an import updates.
 */
async function applyUpdate(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  actor: Actor,
  before: Row,
  input: Row,
  stored: Row,
  action: 'updated' | 'restored' = 'updated',
  cause: bigint | null = null,
): Promise<bigint | undefined> {
  const id = BigInt(before[resource.primaryKey.name] as bigint);
  const changes = await changesTo(trx, ctx, resource, actor, before, input, stored);
  if (Object.keys(changes).length === 0) return undefined;
  await checkReferences(trx, resource, changes);
  const written = stamp(ctx, resource, changes, before, new Date().toISOString(), actor);
  const changeId = await updateRow(trx, resource, id, written, entryOf(ctx, resource, action, before, written, cause));
  await noticeAssignments(trx, ctx, resource, [{ id, before, values: written }]);
  await rulesOf(resource).afterUpdate?.(trx, ctx, before, changes);
  return changeId;
}

/** An update an import prepared: the record it matched (as read) and the checked input for it. */
export interface PreparedUpdate {
  id: bigint;
  input: Row;
}

/**
 * Applies many updates in one transaction, each record read again under a lock and changed only where the input
 * differs; when one is refused (422, 409, a unique value taken) the batch is rolled back and each is retried in its
 * own transaction, so only those at fault are refused. Answers, per update: 'updated', 'unchanged', or the AppError
 * that refused it (a record gone meanwhile is a 404).
 */
export async function updatePreparedBatch(
  ctx: Context,
  resource: Resource,
  updates: readonly PreparedUpdate[],
): Promise<('updated' | 'unchanged' | AppError)[]> {
  const actor = authorize(ctx, resource, 'update', true);
  const stored = await Promise.all(updates.map((u) => prepare(resource, u.input)));
  /** `locked`: the records read and locked for the batch, by id; each is taken once (a second update reads again). */
  const one = async (trx: Executor, i: number, locked?: Map<string, Row>) => {
    const { id, input } = updates[i]!;
    const before = locked?.get(String(id)) ?? (await selectById(trx, resource, id, true));
    locked?.delete(String(id));
    if (!before) throw notFound();
    authorize(ctx, resource, 'update', before);
    return (await applyUpdate(trx, ctx, resource, actor, before, input, stored[i]!)) === undefined
      ? 'unchanged'
      : 'updated';
  };
  const refused = (error: unknown) =>
    error instanceof AppError && [404, 409, 422].includes(error.status) ? error : undefined;
  try {
    return await ctx.database.db.transaction().execute(async (trx) => {
      // The batch's records are read and locked in one statement, as a bulk update's are (records/bulk.ts).
      const ids = updates.map((u) => u.id);
      const pk = resource.primaryKey.name;
      const locked = new Map((await selectByIds(trx, resource, ids, true)).map((r) => [String(r[pk]), r]));
      // The columns the batch may write: those its rows give (and the timestamps the write sets; no index copies them).
      const columns = stored.flatMap((values) => Object.keys(values));
      return updateInOnePass(trx, resource.table, ids, columns, async () => {
        const out: ('updated' | 'unchanged')[] = [];
        for (let i = 0; i < updates.length; i++) out.push(await one(trx, i, locked));
        return out;
      });
    });
  } catch (error) {
    if (!refused(error) && !isUniqueViolation(error) && !isForeignKeyViolation(error)) throw error;
  }
  const outcomes: ('updated' | 'unchanged' | AppError)[] = [];
  for (let i = 0; i < updates.length; i++) {
    try {
      outcomes.push(
        await uniqueAsFieldError(ctx, resource, updates[i]!.input, () =>
          ctx.database.db.transaction().execute((trx) => one(trx, i)),
        ),
      );
    } catch (error) {
      const refusal = refused(error);
      if (!refusal) throw error;
      outcomes.push(refusal);
    }
  }
  return outcomes;
}

/**
 * Puts back the values a record's fields had before one of its changes (`{change_id}`): undo, itself an entry of the
 * timeline. A hidden field's value is never kept, so it cannot be put back.
 */
export async function restoreChange(
  ctx: Context,
  resource: Resource,
  rawId: string,
  body: unknown,
  ifMatch?: string,
): Promise<RecordResult> {
  // Whether the record may be changed by this actor is settled before the change is looked at.
  await getRecord(ctx, resource, rawId, 'update');
  const id = parseId(rawId);
  const raw = typeof body === 'object' && body !== null ? (body as Row).change_id : undefined;
  const invalidChange = (message: string) =>
    new AppError(422, 'validation_failed', 'The request has invalid fields.', { change_id: [message] });
  if (raw === undefined || raw === null || raw === '') throw invalidChange('is required: the id of a change to undo');
  const changeId = /^\d{1,19}$/.test(String(raw)) && BigInt(String(raw)) <= MAX_ID ? BigInt(String(raw)) : null;
  const before = changeId === null ? undefined : await changeBefore(ctx, resource, id, changeId);
  if (!before) throw invalidChange(`names no change of this ${resource.singular} (see its activity)`);
  if (Object.keys(before).length === 0) throw invalidChange('changed no field that can be put back');
  return writeUpdate(ctx, resource, id, readInput(resource, before, 'update'), ifMatch, 'restored', changeId);
}

/**
 * Makes the records whose reference `field` names one record name another (null: none), each with its entry;
 * `cause`: the entry this follows from. Answers how many moved.
 */
export async function moveRecords(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  field: Field,
  move: [bigint, bigint | null],
  cause: bigint | null,
): Promise<number> {
  const ids = await moveReferences(trx, resource, field, ...move);
  await logMoved(trx, ctx, resource, field, move, ids, cause);
  const [from, to] = move;
  await noticeAssignments(
    trx,
    ctx,
    resource,
    ids.map((id) => ({ id, before: { [field.name]: from }, values: { [field.name]: to } })),
  );
  return ids.length;
}

/** Deletes a record; `params` are the request's options for the resource's rules (a user's `reassign_to`). */
export async function deleteRecord(
  ctx: Context,
  resource: Resource,
  rawId: string,
  ifMatch?: string,
  params: Row = {},
): Promise<void> {
  const actor = authorize(ctx, resource, 'delete', true);
  const id = parseId(rawId);
  const { db } = ctx.database;
  await db
    .transaction()
    .execute(async (trx) => {
      const before = await selectById(trx, resource, id, true);
      if (!before || !visibleTo(actor, resource, before)) throw notFound();
      authorize(ctx, resource, 'delete', before);
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etagOf(before))) throw preconditionFailed();
      await rulesOf(resource).beforeDelete?.(trx, ctx, before, params);
      await removeRecord(trx, ctx, resource, before, null);
    })
    .catch((error: unknown) => {
      if (!isForeignKeyViolation(error)) throw error;
      throw new AppError(
        409,
        'still_referenced',
        `Other records still reference this ${resource.singular}; delete or move them first.`,
      );
    });
}

/**
 * Deletes a record and what its deletion takes along, as its references declare: records that cascade go too, a
 * reference that is set null is cleared; one entry each, caused by the record's own (`cause`: the deletion this one
 * follows from), so that the trash can put all of it back. Answers the record's entry.
 */
export async function removeRecord(trx: Executor, ctx: Context, resource: Resource, record: Row, cause: bigint | null) {
  const id = BigInt(record[resource.primaryKey.name] as bigint);
  await checkNotReferenced(trx, resource, id);
  const entry = await logChange(trx, ctx, resource, 'deleted', id, record, null, cause);
  for (const { resource: other, field } of resource.referencedBy) {
    if (field.onDelete === 'cascade') {
      for (const row of await selectReferencing(trx, other, field, id)) await removeRecord(trx, ctx, other, row, entry);
    } else if (field.onDelete === 'set null') await moveRecords(trx, ctx, other, field, [id, null], entry);
  }
  await deleteRow(trx, resource, id);
  return entry;
}
