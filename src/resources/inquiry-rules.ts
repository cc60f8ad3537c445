// An inquiry's rules on the write path (CONTRACT.md, "Inquiries, contacts and the
// pipeline"): a new inquiry starts in the first open stage, and one that names no
// contact is linked to the contact with the same address or number (compared by
// their keys: trimmed and lower-cased, E.164), else to a contact made from its
// contact fields. Many at once (an import) cost one query for the stage, one per
// thousand keys to find the contacts, and a multi-row insert of the new ones with
// their change-log entries, whatever their number.
import type { Executor } from '../db/tables.ts';
import type { Context } from '../records/context.ts';
import { entryOf, logCreated } from '../records/change-log.ts';
import { insertRows, selectById, updateRow } from '../records/repository.ts';
import type { Row } from '../records/repository.ts';
import { assignmentFor } from './assignment.ts';
import { inquiry } from './inquiry.ts';
import type { RecordHooks } from '../records/rules.ts';
import { contact } from './contact.ts';

/** The first open stage that is not archived, by position: where a new inquiry starts. */
export async function firstOpenStage(db: Executor): Promise<number | null> {
  const row = await db
    .selectFrom('stages')
    .select('id')
    .where('kind', '=', 'open')
    .where('active', '=', true)
    .orderBy('position')
    .orderBy('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

const KEYS = ['email_key', 'phone_key'] as const;
type Key = (typeof KEYS)[number];
const CHUNK = 1000;
const present = (v: unknown) => v !== null && v !== undefined && !(typeof v === 'string' && v.trim() === '');
/** What an inquiry hands the contact made for it: its contact fields, keys and timestamps (prepared already). */
const CONTACT_FIELDS = contact.fields.filter((f) => !f.primary).map((f) => f.name);

/** The contacts holding any of the keys, oldest first: key → contact id, for each of the two keys. */
async function contactsByKey(db: Executor, rows: readonly Row[]) {
  const found = { email_key: new Map<string, number>(), phone_key: new Map<string, number>() };
  for (const key of KEYS) {
    const wanted = [...new Set(rows.map((r) => r[key]).filter(present))] as string[];
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const matches = await db
        .selectFrom('contacts')
        .select(['id', key])
        .where(key, 'in', wanted.slice(i, i + CHUNK))
        .orderBy('id', 'desc')
        .execute();
      for (const m of matches) found[key].set(String(m[key]), Number(m.id));
    }
  }
  return found;
}

/** Gives each new inquiry its stage and its contact (see the top of the file); `rows` are changed in place. */
async function placeInquiries(trx: Executor, ctx: Context, rows: Row[]): Promise<void> {
  if (rows.some((r) => !present(r.stage_id))) {
    const stage = await firstOpenStage(trx);
    for (const r of rows) if (!present(r.stage_id)) r.stage_id = stage;
  }
  const unlinked = rows.filter((r) => !present(r.contact_id));
  const found: Record<Key, Map<string, number | Row>> = await contactsByKey(trx, unlinked);
  // A contact made here is its values until it is written (in one go, whatever their number): a later row with one
  // of its keys links to it.
  const made: Row[] = [];
  const linked = new Map<Row, Row>();
  for (const r of unlinked) {
    let match = KEYS.map((k) => (present(r[k]) ? found[k].get(String(r[k])) : undefined)).find((x) => x !== undefined);
    if (match === undefined && KEYS.some((k) => present(r[k]) || present(r.name))) {
      match = Object.fromEntries(CONTACT_FIELDS.filter((f) => f in r).map((f) => [f, r[f]]));
      made.push(match);
      for (const k of KEYS) if (present(r[k])) found[k].set(String(r[k]), match);
    }
    if (typeof match === 'object') linked.set(r, match);
    else r.contact_id = match ?? null;
  }
  // A field a row lacks is written NULL, which a contact's columns default to anyway.
  const ids = await insertRows(trx, contact, made);
  await logCreated(trx, ctx, contact, ids);
  const idOf = new Map(made.map((values, i) => [values, Number(ids[i])]));
  for (const [r, values] of linked) r.contact_id = idOf.get(values)!;
}

/** A new inquiry that names no assignee goes where the assignment rules say, due when its rule says. */
async function assignByRule(trx: Executor, values: Row): Promise<void> {
  if (present(values.assigned_to)) return;
  const now = new Date();
  const assignment = await assignmentFor(trx, values, now, true);
  if (!assignment) return;
  if (assignment.user !== null) {
    values.assigned_to = Number(assignment.user);
    values.assigned_date ??= now.toISOString();
  }
  if (assignment.dueAt && !present(values.due_at)) values.due_at = assignment.dueAt;
}

/** Someone of the team acting on an inquiry, not the inquirer (a public form) nor a file brought in. */
const responds = (ctx: Context) =>
  Boolean(ctx.actor && ctx.actor.id > 0n) && ctx.via !== 'intake' && ctx.via !== 'import';

/**
 * Takes the row lock of the inquiry a response names, before the write that names it. That write's foreign-key check
 * takes a shared lock on the inquiry (MariaDB's S, PostgreSQL's key share), and two responses each holding one while
 * waiting to lock it in markResponded would deadlock.
 */
export async function lockResponded(trx: Executor, ctx: Context, id: unknown): Promise<void> {
  if (id !== null && id !== undefined && responds(ctx)) await selectById(trx, inquiry, BigInt(String(id)), true);
}

/**
 * The inquiry's first response, when this is it: a note on it or a task about it done (the stage's move is part of
 * the inquiry's own update). Logged as a change of the inquiry, in the caller's transaction.
 */
export async function markResponded(trx: Executor, ctx: Context, id: unknown): Promise<void> {
  if (id === null || id === undefined || !responds(ctx)) return;
  const before = await selectById(trx, inquiry, BigInt(String(id)), true);
  if (!before || before.first_response_at !== null) return;
  const values = { first_response_at: new Date().toISOString() };
  await updateRow(trx, inquiry, BigInt(String(id)), values, entryOf(ctx, inquiry, 'updated', before, values));
}

export const inquiryRules: RecordHooks = {
  async beforeCreate(trx, ctx, values) {
    await placeInquiries(trx, ctx, [values]);
    await assignByRule(trx, values);
  },
  // An import brings its own assignees: the rules are for arrivals one at a time.
  beforeCreateMany: placeInquiries,
  async beforeUpdate(_trx, ctx, before, changes) {
    if ('stage_id' in changes && before.first_response_at === null && responds(ctx))
      changes.first_response_at = new Date().toISOString();
  },
  filters: {
    // Open, past its due time, and nobody has responded yet.
    overdue: (eb) =>
      eb.and([
        eb('first_response_at', 'is', null),
        eb('due_at', 'is not', null),
        eb('due_at', '<', new Date().toISOString()),
        eb('stage_id', 'is not', null),
        eb('stage_id', 'in', eb.selectFrom('stages').select('id').where('kind', '=', 'open')),
      ]),
  },
};
