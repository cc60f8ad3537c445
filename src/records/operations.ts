// The operations on records. The JSON API and the web pages both call these;
// neither talks to the database directly. Each write runs in one transaction.
import type { Database } from '../db/connection.ts';
import { AppError, notFound } from '../errors.ts';
import { encodeCursor, parseListQuery } from '../derive/list-query.ts';
import type { Resource } from '../schema/resource.ts';
import { etagOf, ifMatchHolds } from './etag.ts';
import { readInput } from './input.ts';
import { countRows, deleteRow, insertRow, type Row, selectById, selectRows, updateRow } from './repository.ts';

export interface Context {
  database: Database;
}

export interface ListResult {
  data: Row[];
  meta: { page?: number; per_page: number; total?: number; last_page?: number; next_cursor?: string | null };
}

export interface RecordResult {
  record: Row;
  etag: string;
}

const ID = /^[1-9]\d{0,18}$/;
const MAX_ID = 2n ** 63n - 1n;

/** A path id that is not a positive 64-bit integer names no record. */
export function parseId(raw: string): bigint {
  if (!ID.test(raw)) throw notFound();
  const id = BigInt(raw);
  if (id > MAX_ID) throw notFound();
  return id;
}

function preconditionFailed(): AppError {
  return new AppError(412, 'precondition_failed', 'The record has changed since you read it (If-Match does not match its ETag). Read it again and reapply your change.');
}

export async function listRecords(ctx: Context, resource: Resource, query: Record<string, unknown>): Promise<ListResult> {
  const plan = parseListQuery(resource, query);
  const { db, dialect } = ctx.database;
  const { paging } = plan;
  if (paging.mode === 'cursor') {
    const rows = await selectRows(db, dialect, resource, plan, paging.perPage + 1, 0);
    const more = rows.length > paging.perPage;
    const data = more ? rows.slice(0, paging.perPage) : rows;
    return { data, meta: { per_page: paging.perPage, next_cursor: more ? encodeCursor(plan.sort, data.at(-1)!) : null } };
  }
  const offset = (paging.page - 1) * paging.perPage;
  const [total, data] = await Promise.all([
    countRows(db, dialect, resource, plan),
    selectRows(db, dialect, resource, plan, paging.perPage, offset),
  ]);
  return {
    data,
    meta: { page: paging.page, per_page: paging.perPage, total, last_page: Math.max(1, Math.ceil(total / paging.perPage)) },
  };
}

export async function getRecord(ctx: Context, resource: Resource, rawId: string): Promise<RecordResult> {
  const { db, dialect } = ctx.database;
  const record = await selectById(db, dialect, resource, parseId(rawId));
  if (!record) throw notFound();
  return { record, etag: etagOf(record) };
}

/** Fields the server fills: timestamps, and dates that default to now when their trigger is set. */
function stamp(resource: Resource, values: Row, before: Row | null, now: string): Row {
  const out = { ...values };
  for (const f of resource.fields) {
    if (f.timestamp === 'create' && !before) out[f.name] = now;
    if (f.timestamp === 'update') out[f.name] = now;
    const trigger = f.defaultNowWhen;
    if (trigger && !(f.name in values) && trigger in values && values[trigger] !== null && values[trigger] !== before?.[trigger]) {
      out[f.name] = now;
    }
  }
  return out;
}

export async function createRecord(ctx: Context, resource: Resource, body: unknown): Promise<RecordResult> {
  const values = stamp(resource, readInput(resource, body, 'create'), null, new Date().toISOString());
  const { db, dialect } = ctx.database;
  const record = await db.transaction().execute(async (trx) => {
    const id = await insertRow(trx, dialect, resource, values);
    return selectById(trx, dialect, resource, id);
  });
  return { record: record!, etag: etagOf(record!) };
}

export async function updateRecord(ctx: Context, resource: Resource, rawId: string, body: unknown, ifMatch?: string): Promise<RecordResult> {
  const id = parseId(rawId);
  const input = readInput(resource, body, 'update');
  const { db, dialect } = ctx.database;
  const record = await db.transaction().execute(async (trx) => {
    const before = await selectById(trx, dialect, resource, id, true);
    if (!before) throw notFound();
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etagOf(before))) throw preconditionFailed();
    const changed = Object.keys(input).some((k) => input[k] !== before[k]);
    if (!changed) return before;
    await updateRow(trx, dialect, resource, id, stamp(resource, input, before, new Date().toISOString()));
    return (await selectById(trx, dialect, resource, id))!;
  });
  return { record, etag: etagOf(record) };
}

export async function deleteRecord(ctx: Context, resource: Resource, rawId: string, ifMatch?: string): Promise<void> {
  const id = parseId(rawId);
  const { db, dialect } = ctx.database;
  await db.transaction().execute(async (trx) => {
    const before = await selectById(trx, dialect, resource, id, true);
    if (!before) throw notFound();
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etagOf(before))) throw preconditionFailed();
    await deleteRow(trx, dialect, resource, id);
  });
}
