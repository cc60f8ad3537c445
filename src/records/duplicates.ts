// Duplicates of contacts (CONTRACT.md, "Import preview, rollback, duplicates"): found by the keys the write path
// keeps beside each contact, merged into one, and the merge undone from the change log.
//
// How groups are found, never by comparing contacts pair by pair: for each key, one
// `GROUP BY key HAVING count(*) > 1` over the key's index gives the values several contacts share (with how many and
// the smallest id); the members of the values a page needs are then read with `WHERE key IN (...)`. Groups with the
// same members, found by several keys, are one group giving every reason.
//
// A merge is one `merged` entry on the kept contact (the fields it took over, as [before, after]); the references
// moved to it and the merged contacts' deletions are entries caused by it. All are exact (updated_at kept), so that
// the undo puts every row back as it was.
import { sql } from 'kysely';
import { asRecordTables, type Executor } from '../db/tables.ts';
import { AppError, FieldErrorBag, notFound } from '../errors.ts';
import { contact } from '../resources/index.ts';
import { MAX_ID } from '../schema/kinds.ts';
import type { Field } from '../schema/resource.ts';
import { entryOf, logChange, readCursor, storedValue } from './change-log.ts';
import type { Actor, Context } from './context.ts';
import {
  authorize,
  changesTo,
  checkReferences,
  moveRecords,
  parseId,
  prepare,
  removeRecord,
  stamp,
} from './operations.ts';
import { type Row, rowToRecord, selectById, selectByIds, updateRow } from './repository.ts';
import { rulesOf } from './rules.ts';
import { type EntryRow, putBack, relink, restoreValues } from './trash.ts';

/** The ways two contacts are the same person, each by the derived, indexed field that says so. */
export const DUPLICATE_KEYS = [
  { by: 'email', field: 'email_key' },
  { by: 'phone', field: 'phone_key' },
  { by: 'name_city', field: 'name_city_key' },
] as const;
export type DuplicateReason = (typeof DUPLICATE_KEYS)[number]['by'];

for (const key of DUPLICATE_KEYS)
  if (!contact.field(key.field)?.derive) throw new Error(`duplicates: contacts has no derived field ${key.field}`);

/** Most contacts merged into one at once. */
export const MERGE_MAX = 10;
export const DUPLICATES_PER_PAGE = { default: 25, max: 100 } as const;

/** Whether a resource's duplicates are found and merged here. */
export const offersMerge = (resource: { name: string }) => resource.name === contact.name;

export interface DuplicateGroup {
  reasons: { by: DuplicateReason; value: string }[];
  contacts: Row[];
}

/** A group as found, with the smallest id of its members: where it sorts and pages. */
type Found = DuplicateGroup & { first: bigint };

/** A value several contacts share under one key: how many, and the smallest of their ids (where its group sorts). */
interface Shared {
  key: (typeof DUPLICATE_KEYS)[number];
  value: string;
  first: bigint;
}

const PK = contact.primaryKey.name;
const idOf = (record: Row) => BigInt(record[PK] as bigint);
const invalid = (errors: Record<string, string[]>) =>
  new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);
// A name-and-city key joins its parts with U+0001, which no one reads: shown as "name, city".
const shownValue = (value: string) => value.replaceAll('\u0001', ', ');

/** The values of one key that more than one contact holds: one GROUP BY over the key's index. */
async function sharedValues(db: Executor, key: Shared['key']): Promise<Shared[]> {
  const rows = await asRecordTables(db)
    .selectFrom(contact.table)
    .select([sql.ref<string>(key.field).as('value'), sql<string | number | bigint>`min(${sql.ref(PK)})`.as('first')])
    .where(key.field, 'is not', null)
    .groupBy(key.field)
    .having(sql`count(*)`, '>', 1)
    .execute();
  return rows.map((row) => ({ key, value: String(row.value), first: BigInt(row.first) }));
}

/** The contacts holding each of these values of their keys, by key and value: one `IN` per key. */
async function membersOf(db: Executor, shared: readonly Shared[]): Promise<Map<string, Row[]>> {
  const members = new Map<string, Row[]>();
  for (const key of DUPLICATE_KEYS) {
    const values = shared.filter((s) => s.key === key).map((s) => s.value);
    if (values.length === 0) continue;
    const rows = await asRecordTables(db)
      .selectFrom(contact.table)
      .select([...contact.visible.map((f) => f.name), `${key.field} as duplicate_key`])
      .where(key.field, 'in', values)
      .orderBy(PK)
      .execute();
    for (const row of rows) {
      const at = `${key.by}:${String(row.duplicate_key)}`;
      members.set(at, [...(members.get(at) ?? []), rowToRecord(contact, row)]);
    }
  }
  return members;
}

/** The groups these shared values make: one per set of members, with each key that found it. */
async function groupsOf(db: Executor, shared: readonly Shared[]): Promise<Found[]> {
  const members = await membersOf(db, shared);
  const groups = new Map<string, Found>();
  for (const s of shared) {
    const contacts = members.get(`${s.key.by}:${s.value}`) ?? [];
    // Merged or changed between the two reads: no longer a group.
    if (contacts.length < 2) continue;
    const signature = contacts.map((c) => String(idOf(c))).join(',');
    const group = groups.get(signature) ?? { reasons: [], contacts, first: idOf(contacts[0]!) };
    group.reasons.push({ by: s.key.by, value: shownValue(s.value) });
    groups.set(signature, group);
  }
  return [...groups.entries()]
    .sort(([a, x], [b, y]) => compareIds(x.first, y.first) || a.localeCompare(b))
    .map(([, g]) => g);
}

const compareIds = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** A page's size from the query: 1 to the most, else a 422 naming it. */
function perPageOf(raw: unknown): number {
  if (raw === undefined || raw === '') return DUPLICATES_PER_PAGE.default;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= DUPLICATES_PER_PAGE.max))
    throw invalid({ per_page: [`must be a whole number from 1 to ${DUPLICATES_PER_PAGE.max}`] });
  return n;
}

/**
 * One page of groups of contacts that look like the same person, ordered by their smallest contact id; `cursor` is
 * the smallest id of the last group of the page before (`meta.next_cursor`). Groups starting at the same contact
 * are never split across pages, so a page may hold more than `per_page` when they tie at its end.
 */
export async function findDuplicates(ctx: Context, query: Record<string, unknown>) {
  authorize(ctx, contact, 'read');
  const unknown = Object.keys(query).filter((name) => name !== 'cursor' && name !== 'per_page');
  if (unknown.length) throw invalid(Object.fromEntries(unknown.map((name) => [name, ['is not a parameter here']])));
  const perPage = perPageOf(query.per_page);
  const after = readCursor(query.cursor === undefined ? undefined : String(query.cursor));
  const { db } = ctx.database;
  const shared = (await Promise.all(DUPLICATE_KEYS.map((key) => sharedValues(db, key))))
    .flat()
    .filter((s) => after === undefined || s.first > after)
    .sort((a, b) => compareIds(a.first, b.first));
  const groups: Found[] = [];
  let read = 0;
  // In chunks that end where the smallest id changes: values with the same members (and so the same smallest id)
  // are read together, to be one group.
  while (read < shared.length && groups.length <= perPage) {
    let end = Math.min(read + perPage, shared.length);
    while (end < shared.length && shared[end]!.first === shared[end - 1]!.first) end++;
    groups.push(...(await groupsOf(db, shared.slice(read, end))));
    read = end;
  }
  const page = pageOf(groups, perPage);
  const more = page.length < groups.length || read < shared.length;
  return {
    data: page.map(({ reasons, contacts }) => ({ reasons, contacts })),
    meta: { per_page: perPage, next_cursor: more && page.length ? String(page.at(-1)!.first) : null },
  };
}

/** The first `perPage` groups, cut before the smallest id the next one starts at (all of them when they tie). */
function pageOf<G extends { first: bigint }>(groups: G[], perPage: number): G[] {
  if (groups.length <= perPage) return groups;
  const next = groups[perPage]!.first;
  const before = groups.filter((g) => g.first < next);
  return before.length ? before : groups.filter((g) => g.first === next);
}

/** The fields whose value a merge may take from another contact: those the actor may write. */
export const mergeableFields = (actor: Actor): Field[] =>
  contact.writable.filter((f) => actor.role === 'admin' || !(f.defaultActor || f.adminOnly));

export interface MergeInput {
  keep: bigint;
  merge: bigint[];
  /** For a field, the contact whose value the kept one takes. */
  fields: Record<string, bigint>;
}

/** An id as JSON or a form sends it: a positive integer, or its digits. */
function readIdValue(raw: unknown): bigint | null {
  const text = typeof raw === 'number' || typeof raw === 'bigint' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^[1-9]\d{0,18}$/.test(text.trim())) return null;
  const id = BigInt(text.trim());
  return id <= MAX_ID ? id : null;
}

/** Checks a merge's body, naming each bad field (`fields.city` for a field of `fields`). */
export function readMerge(body: unknown, actor: Actor): MergeInput {
  const bag = new FieldErrorBag();
  const sent = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Row) : {};
  for (const name of Object.keys(sent))
    if (!['keep', 'merge', 'fields'].includes(name)) bag.add(name, 'is not a field of a merge');
  const keep = readIdValue(sent.keep);
  if (keep === null) bag.add('keep', 'is required: the id of the contact to keep');
  const list = Array.isArray(sent.merge) ? sent.merge : sent.merge === undefined ? [] : [sent.merge];
  const merge = list.map(readIdValue);
  if (list.length === 0) bag.add('merge', 'is required: the ids of the contacts to merge into the kept one');
  else if (list.length > MERGE_MAX) bag.add('merge', `may name at most ${MERGE_MAX} contacts at once`);
  merge.forEach((id, i) => {
    if (id === null) bag.add('merge', `holds ${JSON.stringify(String(list[i]))}, which is not a contact id`);
    else if (id === keep) bag.add('merge', `names the kept contact #${id}: a contact is not merged into itself`);
    else if (merge.indexOf(id) !== i) bag.add('merge', `names #${id} twice`);
  });
  const fields = readFieldChoices(sent.fields, actor, [keep, ...merge], bag);
  bag.throwIfAny();
  return { keep: keep!, merge: merge as bigint[], fields };
}

/** `fields`: each a field the actor may write, naming the kept contact or a merged one. */
function readFieldChoices(raw: unknown, actor: Actor, ids: (bigint | null)[], bag: FieldErrorBag) {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    bag.add('fields', 'must map a field to the id of the contact whose value wins');
    return {};
  }
  const writable = mergeableFields(actor).map((f) => f.name);
  const fields: Record<string, bigint> = {};
  for (const [name, value] of Object.entries(raw as Row)) {
    const id = readIdValue(value);
    if (!writable.includes(name)) bag.add(`fields.${name}`, 'is not a field a merge can take from another contact');
    else if (id === null || !ids.includes(id))
      bag.add(`fields.${name}`, 'must name the kept contact or one of those merged');
    else fields[name] = id;
  }
  return fields;
}

/** The contacts a merge names, read locked; one missing is a 422 naming where it was named. */
async function mergedContacts(trx: Executor, input: MergeInput): Promise<Map<bigint, Row>> {
  const rows = await selectByIds(trx, contact, [input.keep, ...input.merge], true);
  const byId = new Map(rows.map((r) => [idOf(r), r]));
  const bag = new FieldErrorBag();
  if (!byId.has(input.keep)) bag.add('keep', `names no contact: there is no contact #${input.keep}`);
  for (const id of input.merge) if (!byId.has(id)) bag.add('merge', `names no contact: there is no contact #${id}`);
  bag.throwIfAny();
  return byId;
}

/**
 * Merges contacts into one, in one transaction: the kept contact takes the chosen fields' values, every record that
 * references a merged contact (as the resources declare it) is moved to the kept one, and the merged contacts go to
 * the trash. Answers the kept contact and the merge's entry, which its undo names.
 */
export async function mergeContacts(ctx: Context, body: unknown): Promise<{ record: Row; mergeId: bigint }> {
  // Merging deletes contacts: whoever may delete anyone's (managers, admins).
  const actor = authorize(ctx, contact, 'delete');
  const input = readMerge(body, actor);
  const exact: Context = { ...ctx, exact: true };
  return ctx.database.db.transaction().execute(async (trx) => {
    const byId = await mergedContacts(trx, input);
    const before = byId.get(input.keep)!;
    authorize(ctx, contact, 'update', before);
    for (const id of input.merge) authorize(ctx, contact, 'delete', byId.get(id));
    const taken = Object.fromEntries(Object.entries(input.fields).map(([name, id]) => [name, byId.get(id)![name]]));
    const changes = await changesTo(trx, exact, contact, actor, before, taken, await prepare(contact, taken));
    await checkReferences(trx, contact, changes);
    // Stamped even when no field changes: the contact took over others' records.
    const written = stamp(exact, contact, changes, before, new Date().toISOString(), actor);
    const entry = entryOf(exact, contact, 'merged', before, written);
    const mergeId = await updateRow(trx, contact, input.keep, written, entry);
    if (!mergeId) throw new Error('merging contacts needs the change log, which its undo reads');
    for (const id of input.merge) await mergeInto(trx, exact, byId.get(id)!, input.keep, mergeId);
    if (Object.keys(changes).length) await rulesOf(contact).afterUpdate?.(trx, exact, before, changes);
    return { record: (await selectById(trx, contact, input.keep))!, mergeId };
  });
}

/** Moves what references one merged contact to the kept one, then deletes it to the trash; caused by the merge. */
async function mergeInto(trx: Executor, ctx: Context, merged: Row, keep: bigint, mergeId: bigint): Promise<void> {
  for (const { resource, field } of contact.referencedBy)
    await moveRecords(trx, ctx, resource, field, [idOf(merged), keep], mergeId);
  await rulesOf(contact).beforeDelete?.(trx, ctx, merged, {});
  await removeRecord(trx, ctx, contact, merged, mergeId);
}

/** A merge's entry, or a 404 when the id names none. */
async function mergeEntry(trx: Executor, rawId: string) {
  const entry = await trx
    .selectFrom('change_log')
    .select(['id', 'record_id', 'changes'])
    .where('id', '=', parseId(rawId))
    .where('action', '=', 'merged')
    .where('resource', '=', contact.name)
    .executeTakeFirst();
  if (!entry) throw notFound('No merge has this id.');
  return { id: BigInt(entry.id), keep: BigInt(entry.record_id!), changes: entry.changes };
}

const alreadyUndone = () => new AppError(409, 'already_undone', 'This merge has been undone already.');

/**
 * Undoes a merge, in one transaction, newest entry first: the merged contacts come back from the trash with their
 * ids and values (one restored from the trash meanwhile is left as it is), the references moved to the kept contact
 * go back (where they still name it), and the kept contact's fields and updated_at are put back (where no one has
 * changed them since). Each is a `restored` entry caused by the entry it reverses. Answers the kept contact.
 */
export async function undoMerge(ctx: Context, rawMergeId: string): Promise<Row> {
  authorize(ctx, contact, 'delete');
  const exact: Context = { ...ctx, exact: true };
  return ctx.database.db.transaction().execute(async (trx) => {
    const merge = await mergeEntry(trx, rawMergeId);
    // Locked first: two undos of one merge take turns, and the second finds the first's entry.
    const kept = await selectById(trx, contact, merge.keep, true);
    if (!kept)
      throw new AppError(409, 'kept_deleted', `Contact #${merge.keep} is deleted: restore it from the trash first.`);
    authorize(ctx, contact, 'update', kept);
    if (await undoneAlready(trx, merge.id)) throw alreadyUndone();
    for (const entry of await causedBy(trx, merge.id)) await reverse(trx, exact, entry);
    await putKeptBack(trx, exact, kept, merge);
    return (await selectById(trx, contact, merge.keep))!;
  });
}

const undoneAlready = async (trx: Executor, mergeId: bigint) =>
  (await trx
    .selectFrom('change_log')
    .select('id')
    .where('cause_id', '=', mergeId)
    .where('action', '=', 'restored')
    .executeTakeFirst()) !== undefined;

/** The entries a merge caused (moves, deletions), newest first. */
const causedBy = (trx: Executor, mergeId: bigint): Promise<(EntryRow & { action: string })[]> =>
  trx
    .selectFrom('change_log')
    .select(['id', 'at', 'resource', 'record_id', 'changes', 'actor_id', 'action'])
    .where('cause_id', '=', mergeId)
    .where('action', 'in', ['deleted', 'updated'])
    .orderBy('id', 'desc')
    .execute();

/** Reverses one entry of a merge: a merged contact put back (unless it is back already), or a reference moved back. */
async function reverse(trx: Executor, ctx: Context, entry: EntryRow & { action: string }): Promise<void> {
  const resource = [contact, ...contact.referencedBy.map((r) => r.resource)].find((r) => r.name === entry.resource)!;
  if (entry.action === 'updated') return relink(trx, ctx, entry, resource);
  if (await selectById(trx, resource, BigInt(entry.record_id!))) return;
  if (!entry.changes)
    throw new AppError(410, 'purged', `Contact #${entry.record_id} was emptied from the trash: it cannot come back.`);
  await putBack(trx, ctx, entry, resource);
}

/** The kept contact's fields as they were before the merge, each where it still holds what the merge wrote. */
async function putKeptBack(
  trx: Executor,
  ctx: Context,
  kept: Row,
  merge: { id: bigint; keep: bigint; changes: string | null },
) {
  const changes = merge.changes ? (JSON.parse(merge.changes) as Record<string, [unknown, unknown]>) : {};
  const back = Object.fromEntries(
    Object.entries(changes)
      .map(
        ([name, [from, to]]) =>
          [contact.field(name)!, storedValue(contact.field(name), from), storedValue(contact.field(name), to)] as const,
      )
      .filter(([field, , to]) => String(kept[field.name] ?? null) === String(to ?? null))
      .map(([field, from]) => [field.name, from]),
  );
  if (Object.keys(back).length === 0) {
    await logChange(trx, ctx, contact, 'restored', merge.keep, kept, {}, merge.id);
    return;
  }
  await restoreValues(trx, ctx, contact, kept, back, merge.id);
}
