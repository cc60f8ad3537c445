// Bulk actions (CONTRACT.md, "Bulk actions"): one update or one deletion over
// many records, named by their ids or by a list query. Each record is checked
// as a PATCH or a DELETE checks it (who may change it, what it must keep
// holding, the resource's rules) and gets its own change-log entry, in the
// transaction of its write. Records are written 500 to a transaction: the
// records of a batch that take the same values in one UPDATE, their entries
// in one INSERT, so that 10,000 records take seconds, not minutes. A record
// the caller may not change, or that is gone, is reported in `failed`; the
// rest are written. Should a batch meet a conflict only the database sees
// (a record deleted under it), it is undone and its records go one by one
// through the single-record path instead.
import qs from 'qs';
import { updateInOnePass } from '../db/bulk-load.ts';
import type { Executor } from '../db/tables.ts';
import { noticeAssignments } from './notifications.ts';
import { parseListQuery } from '../derive/list-query.ts';
import { AppError, type FieldErrors, FieldErrorBag } from '../errors.ts';
import { MAX_ID } from '../schema/kinds.ts';
import type { Resource } from '../schema/resource.ts';
import type { Ability } from '../schema/roles.ts';
import { entryOf } from './change-log.ts';
import type { Actor, Context } from './context.ts';
import { insertEntries } from './entries.ts';
import { readInput } from './input.ts';
import {
  authorize,
  checkReferences,
  changesTo,
  deleteRecord,
  may,
  prepare,
  readScopeOf,
  stamp,
  updateRecord,
} from './operations.ts';
import {
  clearReferences,
  countReferencesMany,
  deleteRows,
  type Row,
  selectByIds,
  selectIds,
  selectReferencingMany,
  updateRows,
} from './repository.ts';
import { rulesOf } from './rules.ts';

/** The most records one call may act on. */
export const BULK_MAX = 10_000;
/** Records per transaction. */
const BATCH = 500;
/** The resources that offer bulk actions. */
const BULK_RESOURCES = new Set(['contacts', 'inquiries']);
export const offersBulk = (resource: Resource) => BULK_RESOURCES.has(resource.name);

export type BulkAction = 'update' | 'delete';
const ACTIONS: readonly string[] = ['update', 'delete'];
const BODY_KEYS = new Set(['ids', 'query', 'action', 'changes']);
/** List parameters that page through a list: a bulk action covers every record the query matches. */
const PAGING = ['page', 'per_page', 'cursor'];
// Parsed as the list's own query string is (app.ts).
const QUERY_OPTIONS = { depth: 2, parameterLimit: 100, arrayLimit: 0, allowPrototypes: false, strictDepth: false };

/** A record that was not changed, and why: `errors` as a PATCH would answer them, `reason` in a few words. */
export interface BulkFailure {
  id: bigint;
  errors: FieldErrors;
  reason: string;
}

export interface BulkOutcome {
  action: BulkAction;
  /** How many records were updated (those already holding the values among them, which get no entry) or deleted. */
  done: number;
  failed: BulkFailure[];
}

const invalid = (errors: FieldErrors) =>
  new AppError(422, 'validation_failed', 'The bulk request has invalid fields.', errors);
const count = (n: number) => n.toLocaleString('en-US');
const ABILITY: Record<BulkAction, Ability> = { update: 'update', delete: 'delete' };

/** `ids` of a request: record ids (numbers or digit strings), each once, in the order given. */
function readIds(raw: unknown, bag: FieldErrorBag): bigint[] {
  if (!Array.isArray(raw)) {
    bag.add('ids', 'must be a list of record ids');
    return [];
  }
  if (raw.length === 0) bag.add('ids', 'must list at least one id');
  if (raw.length > BULK_MAX)
    bag.add('ids', `must list at most ${count(BULK_MAX)} ids (${count(raw.length)} given): split the work into calls`);
  const ids = new Map<string, bigint>();
  for (const [i, value] of raw.entries()) {
    const text =
      typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? String(value) : '';
    if (!/^[1-9]\d{0,18}$/.test(text) || BigInt(text) > MAX_ID) {
      bag.add('ids', `item ${i} is not a record id (a whole number from 1)`);
      break;
    }
    ids.set(text, BigInt(text));
  }
  return [...ids.values()];
}

/** `changes` of an update, read as a PATCH body is; a problem is named `changes.<field>`. */
function readChanges(resource: Resource, raw: unknown, action: unknown, bag: FieldErrorBag): Row {
  if (action !== 'update') {
    if (raw !== undefined && action === 'delete') bag.add('changes', 'is only for action update');
    return {};
  }
  if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    bag.add('changes', 'is required for action update: an object of the fields to set, as for a PATCH');
    return {};
  }
  try {
    const input = readInput(resource, raw, 'update');
    if (Object.keys(input).length === 0) bag.add('changes', 'must name at least one field you can write');
    return input;
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors) throw error;
    for (const [name, messages] of Object.entries(error.errors))
      for (const message of messages) bag.add(name ? `changes.${name}` : 'changes', message);
    return {};
  }
}

/** The ids of the records a list query string matches, in the list's order; more than BULK_MAX is a 422. */
async function idsOfQuery(ctx: Context, resource: Resource, actor: Actor, raw: string): Promise<bigint[]> {
  const params = qs.parse(raw.startsWith('?') ? raw.slice(1) : raw, QUERY_OPTIONS) as Record<string, unknown>;
  const paging = PAGING.filter((name) => name in params);
  if (paging.length)
    throw invalid({
      query: paging.map((name) => `${name} cannot be used: a bulk action covers every matching record`),
    });
  let plan: ReturnType<typeof parseListQuery>;
  try {
    plan = parseListQuery(resource, params);
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors) throw error;
    throw invalid({
      query: Object.entries(error.errors).flatMap(([name, messages]) => messages.map((m) => `${name} ${m}`)),
    });
  }
  const ids = await selectIds(
    ctx.database.db,
    resource,
    { ...plan, scope: readScopeOf(actor, resource) },
    BULK_MAX + 1,
  );
  if (ids.length > BULK_MAX)
    throw invalid({
      query: [`matches more than ${count(BULK_MAX)} ${resource.name}: narrow it, or split the work into calls`],
    });
  return ids;
}

const gone = (resource: Resource, id: bigint): BulkFailure => ({
  id,
  errors: { id: [`names no ${resource.singular}: it does not exist, or was deleted`] },
  reason: 'no longer exists',
});

const notYours = (resource: Resource, actor: Actor, id: bigint, action: BulkAction): BulkFailure => {
  const verb = action === 'update' ? 'change' : 'delete';
  const rule = `your role (${actor.role}) may ${verb} only the ${resource.name} you created or are assigned`;
  return { id, errors: { id: [`is not yours to ${verb}: ${rule}`] }, reason: 'not yours' };
};

/** A refusal of one record (a 403, 404, 409 or 422 of the single-record path) as a failure. */
function refusal(resource: Resource, id: bigint, error: AppError): BulkFailure {
  if (error.status === 404) return gone(resource, id);
  const generic = error.detail === 'The request has invalid fields.';
  const reason = generic
    ? Object.entries(error.errors ?? {})
        .map(([name, messages]) => `${resource.field(name)?.label ?? name} ${messages[0] ?? ''}`.trim())
        .join('; ')
    : error.detail.replace(/\.$/, '');
  return { id, errors: error.errors ?? { id: [error.detail] }, reason };
}

const refusable = (error: unknown): error is AppError => error instanceof AppError && error.status < 500;
const idOf = (resource: Resource, row: Row) => BigInt(row[resource.primaryKey.name] as bigint);

/** One batch of an update, in one transaction; answers how many records it updated, and adds the others to `failed`. */
async function updateBatch(
  ctx: Context,
  resource: Resource,
  actor: Actor,
  ids: readonly bigint[],
  input: Row,
  stored: Row,
  failed: BulkFailure[],
): Promise<number> {
  const hooks = rulesOf(resource);
  return ctx.database.db.transaction().execute(async (trx) => {
    const pk = resource.primaryKey.name;
    const found = new Map((await selectByIds(trx, resource, ids, true)).map((r) => [String(r[pk]), r]));
    const now = new Date().toISOString();
    // Records that take the same values are written by one UPDATE: usually the whole batch.
    const groups = new Map<string, { values: Row; ids: bigint[] }>();
    const entries = [];
    const written: [Row, Row][] = [];
    let updated = 0;
    for (const id of ids) {
      const before = found.get(String(id));
      if (!before) {
        failed.push(gone(resource, id));
        continue;
      }
      if (!may(actor, resource, 'update', before)) {
        failed.push(notYours(resource, actor, id, 'update'));
        continue;
      }
      let changes: Row;
      try {
        changes = await changesTo(trx, ctx, resource, actor, before, input, stored);
      } catch (error) {
        if (!refusable(error)) throw error;
        failed.push(refusal(resource, id, error));
        continue;
      }
      if (Object.keys(changes).length > 0) {
        const values = stamp(ctx, resource, changes, before, now, actor);
        const key = JSON.stringify(values, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
        const group = groups.get(key) ?? { values, ids: [] };
        group.ids.push(id);
        groups.set(key, group);
        const entry = entryOf(ctx, resource, 'updated', before, values);
        if (entry) entries.push({ ...entry, record_id: id });
        written.push([before, changes]);
      }
      updated++;
    }
    const changed = written.map(([before]) => idOf(resource, before));
    const columns = [...groups.values()].flatMap((g) => Object.keys(g.values));
    await updateInOnePass(trx, resource.table, changed, columns, async () => {
      for (const group of groups.values()) await updateRows(trx, resource, group.ids, group.values);
    });
    await insertEntries(trx, entries);
    await noticeAssignments(
      trx,
      ctx,
      resource,
      written.map(([before, changes]) => ({ id: idOf(resource, before), before, values: changes })),
    );
    for (const [before, changes] of written) await hooks.afterUpdate?.(trx, ctx, before, changes);
    return updated;
  });
}

/**
 * Deletes records and what their deletion takes along, as removeRecord (operations.ts) does for one, but a statement
 * per step for all of them: each record's entry (its last values, for the trash; `causes`: per record, the entry it
 * follows from), the records that cascade (with entries caused by their record's), the references that are set
 * null (an entry each), then the rows. A record still named through a reference that restricts its deletion is a
 * 409 (the caller has set its own records with such references aside; one met further down undoes the batch).
 */
export async function removeMany(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  rows: readonly Row[],
  causes: readonly (bigint | null)[],
): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((row) => idOf(resource, row));
  for (const { resource: other, field } of resource.referencedBy) {
    if (field.onDelete === 'restrict' && (await countReferencesMany(trx, other, field, ids)).size)
      throw new AppError(409, 'still_referenced', `Some ${resource.name} still have ${other.name} (${field.label}).`);
  }
  const entries = await insertEntries(
    trx,
    rows.flatMap((row, i) => {
      const entry = entryOf(ctx, resource, 'deleted', row, null, causes[i]);
      return entry ? [{ ...entry, record_id: ids[i] }] : [];
    }),
  );
  const causeOf = (id: unknown) => entries.get(String(id)) ?? null;
  for (const { resource: other, field } of resource.referencedBy) {
    if (field.onDelete === 'cascade') {
      const taken = await selectReferencingMany(trx, other, field, ids);
      await removeMany(
        trx,
        ctx,
        other,
        taken,
        taken.map((row) => causeOf(row[field.name])),
      );
    } else if (field.onDelete === 'set null') {
      const cleared = await selectReferencingMany(trx, other, field, ids);
      await clearReferences(trx, other, field, ids);
      await insertEntries(
        trx,
        cleared.flatMap((row) => {
          const entry = entryOf(ctx, other, 'updated', row, { [field.name]: null }, causeOf(row[field.name]));
          return entry ? [{ ...entry, record_id: idOf(other, row) }] : [];
        }),
      );
    }
  }
  await deleteRows(trx, resource, ids);
}

/** One batch of a deletion, in one transaction: each record to the trash with what its deletion takes along. */
async function deleteBatch(
  ctx: Context,
  resource: Resource,
  actor: Actor,
  ids: readonly bigint[],
  failed: BulkFailure[],
): Promise<number> {
  const hooks = rulesOf(resource);
  return ctx.database.db.transaction().execute(async (trx) => {
    const found = new Map((await selectByIds(trx, resource, ids, true)).map((r) => [String(idOf(resource, r)), r]));
    let doomed: Row[] = [];
    for (const id of ids) {
      const before = found.get(String(id));
      if (!before) {
        failed.push(gone(resource, id));
        continue;
      }
      if (!may(actor, resource, 'delete', before)) {
        failed.push(notYours(resource, actor, id, 'delete'));
        continue;
      }
      try {
        await hooks.beforeDelete?.(trx, ctx, before, {});
      } catch (error) {
        if (!refusable(error)) throw error;
        failed.push(refusal(resource, id, error));
        continue;
      }
      doomed.push(before);
    }
    // A record that others still name through a reference that restricts its deletion stays, as with DELETE.
    for (const { resource: other, field } of resource.referencedBy) {
      if (field.onDelete !== 'restrict' || doomed.length === 0) continue;
      const held = await countReferencesMany(
        trx,
        other,
        field,
        doomed.map((row) => idOf(resource, row)),
      );
      for (const row of doomed.filter((r) => held.has(String(idOf(resource, r))))) {
        const n = held.get(String(idOf(resource, row)))!;
        const what = n === 1 ? `1 ${other.singular}` : `${count(n)} ${other.name}`;
        failed.push({
          id: idOf(resource, row),
          errors: { id: [`still has ${what} (${field.label}); delete or move them first`] },
          reason: `still has ${what}`,
        });
      }
      doomed = doomed.filter((r) => !held.has(String(idOf(resource, r))));
    }
    await removeMany(
      trx,
      ctx,
      resource,
      doomed,
      doomed.map(() => null),
    );
    return doomed.length;
  });
}

/** A batch that could not be written at once, record by record through the single-record path. */
async function oneByOne(
  ctx: Context,
  resource: Resource,
  ids: readonly bigint[],
  action: BulkAction,
  changes: unknown,
  failed: BulkFailure[],
): Promise<number> {
  let done = 0;
  for (const id of ids) {
    try {
      if (action === 'update') await updateRecord(ctx, resource, String(id), changes);
      else await deleteRecord(ctx, resource, String(id));
      done++;
    } catch (error) {
      if (!refusable(error)) throw error;
      failed.push(refusal(resource, id, error));
    }
  }
  return done;
}

/**
 * Runs a bulk request, `{ids: [...] | query: "<list query string>", action: "update" | "delete", changes?}`: 401 for
 * a stranger, 403 for a role that may change (or delete) none of the resource's records, 422 for a malformed request
 * (naming `ids`, `query`, `action` or `changes.<field>`), nothing written then.
 */
export async function bulkRecords(ctx: Context, resource: Resource, body: unknown): Promise<BulkOutcome> {
  const request = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Row;
  const action = ACTIONS.includes(request.action as string) ? (request.action as BulkAction) : undefined;
  const actor = authorize(ctx, resource, ABILITY[action ?? 'update'], true);
  if (!offersBulk(resource)) throw new AppError(404, 'not_found', `There are no bulk actions on ${resource.name}.`);
  const bag = new FieldErrorBag();
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    bag.add('body', 'must be a JSON object: {ids | query, action, changes?}');
  for (const key of Object.keys(request)) if (!BODY_KEYS.has(key)) bag.add(key, 'is not a bulk parameter');
  if (!action) bag.add('action', 'must be update or delete');
  const hasIds = request.ids !== undefined;
  const hasQuery = request.query !== undefined;
  if (hasIds && hasQuery) {
    bag.add('ids', 'cannot be combined with query: name the records one way');
    bag.add('query', 'cannot be combined with ids: name the records one way');
  } else if (!hasIds && !hasQuery) {
    bag.add('ids', 'or query is required: the records to act on');
    bag.add('query', 'or ids is required: the records to act on');
  }
  const listed = hasIds ? readIds(request.ids, bag) : [];
  if (hasQuery && typeof request.query !== 'string')
    bag.add('query', 'must be a list query string, such as "search=acme&filter[country]=Belgium"');
  const input = readChanges(resource, request.changes, request.action, bag);
  bag.throwIfAny('The bulk request has invalid fields.');
  // Only an admin says who created records (a PATCH refuses it too); a reference must name a record, and work
  // someone who can sign in.
  const serverSet = resource.fields.filter((f) => f.defaultActor && f.name in input);
  if (actor.role !== 'admin' && serverSet.length)
    throw new AppError(
      403,
      'forbidden',
      'Only an admin may change who created a record.',
      Object.fromEntries(
        serverSet.map((f) => [`changes.${f.name}`, ['is set by the server; only an admin may change it']]),
      ),
    );
  try {
    await checkReferences(ctx.database.db, resource, input);
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors) throw error;
    throw invalid(Object.fromEntries(Object.entries(error.errors).map(([name, m]) => [`changes.${name}`, m])));
  }
  const ids = hasIds ? listed : await idsOfQuery(ctx, resource, actor, request.query as string);
  const stored = await prepare(resource, input);
  const failed: BulkFailure[] = [];
  let done = 0;
  for (let start = 0; start < ids.length; start += BATCH) {
    const batch = ids.slice(start, start + BATCH);
    const refused: BulkFailure[] = [];
    try {
      done +=
        action === 'update'
          ? await updateBatch(ctx, resource, actor, batch, input, stored, refused)
          : await deleteBatch(ctx, resource, actor, batch, refused);
    } catch {
      // Undone whole: a constraint only the database checks (a referenced record deleted meanwhile), or a refusal
      // of a record after others were written (a deletion that something still holds on to). Each record on its
      // own then; what fails for another reason (the database gone) fails there again, and is thrown.
      refused.length = 0;
      done += await oneByOne(ctx, resource, batch, action!, request.changes, refused);
    }
    failed.push(...refused);
  }
  return { action: action!, done, failed };
}

/**
 * The ids of the records a list query (the list page's own parameters, without paging) matches, for a page that
 * splits a bulk action into parts: at most BULK_MAX, else a 422 naming `query`.
 */
export async function bulkIds(ctx: Context, resource: Resource, query: Record<string, unknown>): Promise<bigint[]> {
  const actor = authorize(ctx, resource, 'update', true);
  const listQuery = Object.fromEntries(Object.entries(query).filter(([name]) => !PAGING.includes(name)));
  return idsOfQuery(ctx, resource, actor, qs.stringify(listQuery));
}
