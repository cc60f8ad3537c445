// Webhook events are read from the change log (DESIGN.md, "One change log"),
// so an event exists exactly when its change committed. The dispatcher reads
// the entries after its cursor, in id order, and turns each into the events it
// means (an inquiry's update that sets its assignee is also `inquiry.assigned`)
// and each event into a delivery per endpoint that asked for it, with its body
// fixed there; the deliveries and the cursor's advance commit together, so an
// event is queued once, whatever crashes.
//
// Ids are taken when a transaction writes and become visible when it commits,
// which on PostgreSQL may be out of order: an id below the newest one read may
// still be on its way. Such an id is remembered as a gap and looked for again on
// each read until it shows up (delivered late, still in order for its record,
// whose later changes wait on its row lock) or GAP_WAIT_MS passes (the
// transaction was rolled back, or took its id and never wrote).
import { stringify } from 'lossless-json';
import type { Executor } from '../db/tables.ts';
import { storedValue } from '../records/change-log.ts';
import { selectByIds, type Row } from '../records/repository.ts';
import type { Resource } from '../schema/resource.ts';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../resources/webhook.ts';

const CURSOR = 'webhooks';
/** Entries one read takes at most. */
export const ENTRIES_PER_READ = 500;
const GAP_WAIT_MS = 10 * 60_000;
const MAX_GAPS = 10_000;

/** The resources whose changes are events, by the name events give them. */
const EVENT_NAMES: Readonly<Record<string, string>> = {
  contacts: 'contact',
  inquiries: 'inquiry',
  notes: 'note',
  tasks: 'task',
};

interface LogEntry {
  id: bigint | string | number;
  at: string | Date;
  action: string;
  via: string;
  resource: string | null;
  record_id: bigint | string | number | null;
  changes: string | null;
}

type Changes = Record<string, [unknown, unknown]>;

const isEvent = (name: string): name is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(name);
const toIso = (at: string | Date) => (at instanceof Date ? at : new Date(at)).toISOString();

/** The events one entry means, given its record's assignee when it was created (`assignedAtCreation`). */
function eventsOf(entry: LogEntry, changes: Changes | null, assignedAtCreation: unknown): WebhookEvent[] {
  const name = entry.resource ? EVENT_NAMES[entry.resource] : undefined;
  if (!name) return [];
  // A restore with no changes brought a deleted record back; one with changes undid a change.
  const action =
    entry.action === 'restored'
      ? changes
        ? 'updated'
        : 'created'
      : entry.action === 'merged'
        ? 'updated'
        : entry.action;
  const events = [`${name}.${action}`];
  if (name === 'inquiry' && action === 'created' && entry.via === 'intake') events.push('intake.received');
  const assigned =
    action === 'created' ? assignedAtCreation : action === 'updated' ? changes?.assigned_to?.[1] : undefined;
  if (name === 'inquiry' && assigned !== null && assigned !== undefined) events.push('inquiry.assigned');
  const done = changes?.done_at;
  if (name === 'task' && action === 'updated' && done && done[0] === null && done[1] !== null) events.push('task.done');
  return events.filter(isEvent);
}

/** A deleted record as its deletion entry kept it (its visible fields' last values). */
function lastValues(resource: Resource, id: bigint, changes: Changes | null): Row {
  const values: Row = { [resource.primaryKey.name]: id };
  for (const [name, [before]] of Object.entries(changes ?? {})) {
    const field = resource.field(name);
    if (field && !field.hidden) values[name] = storedValue(field, before);
  }
  return values;
}

/** An update's changes with their values read back through their fields' kinds. */
function typedChanges(resource: Resource, changes: Changes): Changes {
  return Object.fromEntries(
    Object.entries(changes).map(([name, [from, to]]) => {
      const field = resource.field(name);
      return [name, [storedValue(field, from), storedValue(field, to)]];
    }),
  );
}

interface Endpoint {
  id: bigint;
  events: Set<string>;
  since: number;
}

/**
 * Reads the entries after the cursor (and the gaps below it) and queues their events for the active endpoints that
 * asked for them, in one transaction with the cursor's advance; answers how many entries it read.
 */
export async function collectEvents(db: Executor, resources: readonly Resource[]): Promise<number> {
  // A look without a transaction first: most turns find nothing new, and on SQLite a transaction holds the one
  // connection that every request shares.
  const peek = await db
    .selectFrom('webhook_cursor')
    .select(['last_id', 'gaps'])
    .where('name', '=', CURSOR)
    .executeTakeFirst();
  if (!peek) return 0;
  if (peek.gaps === '[]') {
    // In id order, so that it is read along the primary key whatever the planner knows of the table: unordered, a
    // change log PostgreSQL had not analyzed (autovacuum off) was scanned whole on every turn, to find nothing new.
    const newer = await db
      .selectFrom('change_log')
      .select('id')
      .where('id', '>', BigInt(peek.last_id))
      .orderBy('id')
      .limit(1)
      .execute();
    if (newer.length === 0) return 0;
  }
  return db.transaction().execute(async (trx) => {
    const cursor = await trx.selectFrom('webhook_cursor').selectAll().where('name', '=', CURSOR).executeTakeFirst();
    if (!cursor) return 0;
    const last = BigInt(cursor.last_id);
    const now = Date.now();
    const gaps = new Map((JSON.parse(cursor.gaps) as [string, number][]).map(([id, at]) => [id, at]));
    const entries = (await trx
      .selectFrom('change_log')
      .select(['id', 'at', 'action', 'via', 'resource', 'record_id', 'changes'])
      .where((eb) =>
        gaps.size ? eb.or([eb('id', '>', last), eb('id', 'in', [...gaps.keys()].map(BigInt))]) : eb('id', '>', last),
      )
      .orderBy('id')
      .limit(ENTRIES_PER_READ)
      .execute()) as LogEntry[];

    // The new cursor: past the newest id read, with the ids below it not seen yet remembered.
    let next = last;
    for (const entry of entries) {
      const id = BigInt(entry.id);
      gaps.delete(String(id));
      for (let missing = next + 1n; missing < id; missing++) gaps.set(String(missing), now);
      if (id > next) next = id;
    }
    const kept = [...gaps].filter(([, at]) => now - at < GAP_WAIT_MS).slice(-MAX_GAPS);
    // Nothing new and no gap given up: the cursor stays as it is (no write).
    if (entries.length === 0 && kept.length === gaps.size) return 0;
    const advanced = await trx
      .updateTable('webhook_cursor')
      .set({ last_id: next, gaps: JSON.stringify(kept) })
      .where('name', '=', CURSOR)
      .where('last_id', '=', last)
      .where('gaps', '=', cursor.gaps)
      .executeTakeFirst();
    // Another process read the same entries meanwhile (it took the scheduler over): this read is its to queue.
    if (Number(advanced.numUpdatedRows) !== 1) throw new Error('the webhook cursor moved under this read');
    if (entries.length === 0) return 0;
    await queueEvents(trx, resources, entries);
    return entries.length;
  });
}

/**
 * Whom each inquiry created among `entries` was assigned to when it was created: its assignee now, unless a later
 * change moved it, whose `before` it then is.
 */
async function assigneesAtCreation(trx: Executor, entries: LogEntry[], records: Map<string, Row>) {
  const created = entries.filter((e) => e.resource === 'inquiries' && e.action === 'created' && e.record_id !== null);
  const found = new Map<string, unknown>();
  if (created.length === 0) return found;
  const later = await trx
    .selectFrom('change_log')
    .select(['record_id', 'changes'])
    .where('resource', '=', 'inquiries')
    .where(
      'record_id',
      'in',
      created.map((e) => BigInt(e.record_id!)),
    )
    .where('id', '>', BigInt(created[0]!.id))
    .where('changes', 'like', '%"assigned_to"%')
    .orderBy('id')
    .execute();
  for (const e of created) {
    const key = `inquiries:${String(e.record_id)}`;
    const moved = later.find((l) => String(l.record_id) === String(e.record_id));
    found.set(key, moved ? (JSON.parse(moved.changes!) as Changes).assigned_to?.[0] : records.get(key)?.assigned_to);
  }
  return found;
}

async function queueEvents(trx: Executor, resources: readonly Resource[], entries: LogEntry[]): Promise<void> {
  const endpoints: Endpoint[] = (
    await trx.selectFrom('webhooks').select(['id', 'events', 'created_at']).where('active', '=', true).execute()
  ).map((w) => ({
    id: BigInt(w.id),
    events: new Set(JSON.parse(String(w.events)) as string[]),
    since: new Date(w.created_at ?? 0).getTime(),
  }));
  if (endpoints.length === 0) return;

  // The records as they are now, a query per resource.
  const records = new Map<string, Row>();
  for (const resource of resources.filter((r) => r.name in EVENT_NAMES)) {
    const ids = entries.filter((e) => e.resource === resource.name && e.record_id !== null);
    const found = await selectByIds(trx, resource, [...new Set(ids.map((e) => BigInt(e.record_id!)))]);
    for (const record of found) records.set(`${resource.name}:${String(record[resource.primaryKey.name])}`, record);
  }

  const assignedAtCreation = await assigneesAtCreation(trx, entries, records);
  const at = new Date().toISOString();
  const rows = [];
  for (const entry of entries) {
    const resource = resources.find((r) => r.name === entry.resource);
    if (!resource || entry.record_id === null) continue;
    const id = BigInt(entry.record_id);
    const queue = `${resource.name}:${String(id)}`;
    const changes = entry.changes ? (JSON.parse(entry.changes) as Changes) : null;
    const record = records.get(queue);
    const timestamp = toIso(entry.at);
    for (const type of eventsOf(entry, changes, assignedAtCreation.get(queue))) {
      const wanted = endpoints.filter((e) => e.events.has(type) && e.since <= new Date(timestamp).getTime());
      if (wanted.length === 0) continue;
      const deleted = type.endsWith('.deleted');
      const data = deleted ? lastValues(resource, id, changes) : (record ?? { [resource.primaryKey.name]: id });
      const body = {
        type,
        timestamp,
        data,
        ...(changes && !deleted && entry.action !== 'created' ? { changes: typedChanges(resource, changes) } : {}),
      };
      const payload = stringify(body)!;
      for (const endpoint of wanted)
        rows.push({
          webhook_id: endpoint.id,
          change_id: BigInt(entry.id),
          event: type,
          queue,
          payload,
          status: 'pending' as const,
          next_attempt_at: at,
          created_at: at,
        });
    }
  }
  // Ten parameters a row, under SQLite's limit; ids follow the rows' order, which keeps each record's in order.
  for (let start = 0; start < rows.length; start += 1000)
    await trx
      .insertInto('webhook_deliveries')
      .values(rows.slice(start, start + 1000))
      .execute();
}
