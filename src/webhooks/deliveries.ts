// What an admin does with a webhook beyond its fields (CONTRACT.md, "Webhooks"):
// reads its delivery log, resends a delivery, sends a test event, and rotates
// its secret (the old one keeps signing beside the new for a day, so that a
// receiver can switch without losing a message).
import { entryOf } from '../records/change-log.ts';
import type { Context } from '../records/context.ts';
import { authorize, parseId } from '../records/operations.ts';
import { type Row, selectById, updateRow } from '../records/repository.ts';
import { AppError } from '../errors.ts';
import { webhook } from '../resources/webhook.ts';
import { newSecret } from './signing.ts';

/** How long a rotated secret keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
const PER_PAGE = 50;

export interface Delivery {
  id: bigint;
  event: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  /** The body sent (the same bytes on each attempt). */
  payload: string;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const orNull = <T>(v: T | null | undefined, read: (v: T) => unknown) =>
  v === null || v === undefined ? null : read(v);

function toDelivery(row: Record<string, unknown>): Delivery {
  const status = row.status as Delivery['status'];
  return {
    id: BigInt(row.id as string),
    event: String(row.event),
    status,
    attempts: Number(row.attempts),
    created_at: iso(row.created_at)!,
    last_attempt_at: iso(row.last_attempt_at),
    next_attempt_at: status === 'pending' ? iso(row.next_attempt_at) : null,
    last_status_code: orNull(row.last_status_code, Number) as number | null,
    last_error: (row.last_error as string | null) ?? null,
    latency_ms: orNull(row.latency_ms, Number) as number | null,
    response_excerpt: (row.response_excerpt as string | null) ?? null,
    payload: String(row.payload),
  };
}

const notFound = (what: string) => new AppError(404, 'not_found', `There is no such ${what}.`);

/** The webhook an admin names, read (and, with `lock`, locked in `trx`). */
async function webhookOf(ctx: Context, rawId: string, trx = ctx.database.db, lock = false): Promise<Row> {
  authorize(ctx, webhook, 'read');
  const found = await selectById(trx, webhook, parseId(rawId), lock);
  if (!found) throw notFound('webhook');
  return found;
}

const DELIVERY_COLUMNS = [
  'id',
  'event',
  'status',
  'attempts',
  'created_at',
  'last_attempt_at',
  'next_attempt_at',
  'last_status_code',
  'last_error',
  'latency_ms',
  'response_excerpt',
  'payload',
] as const;

/** A webhook's deliveries, newest first, a page at a time after the delivery `cursor`. */
export async function listDeliveries(ctx: Context, rawId: string, query: { cursor?: string; status?: string }) {
  const found = await webhookOf(ctx, rawId);
  const status = query.status;
  if (status !== undefined && !['pending', 'succeeded', 'failed'].includes(status))
    throw new AppError(422, 'validation_failed', 'The request has invalid fields.', {
      status: ['must be pending, succeeded or failed'],
    });
  const cursor = query.cursor === undefined ? undefined : parseId(query.cursor);
  const rows = await ctx.database.db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('webhook_id', '=', BigInt(found.id as bigint))
    .$if(status !== undefined, (q) => q.where('status', '=', status as Delivery['status']))
    .$if(cursor !== undefined, (q) => q.where('id', '<', cursor!))
    .orderBy('id', 'desc')
    .limit(PER_PAGE + 1)
    .execute();
  const data = rows.slice(0, PER_PAGE).map(toDelivery);
  const next = rows.length > PER_PAGE ? String(data.at(-1)!.id) : null;
  return { data, meta: { next_cursor: next } };
}

/** Sends a delivery again, now (its earlier attempts stay counted in the log's latency and code until it goes). */
export async function resendDelivery(ctx: Context, rawId: string, rawDelivery: string): Promise<Delivery> {
  authorize(ctx, webhook, 'update');
  const found = await webhookOf(ctx, rawId);
  const id = parseId(rawDelivery);
  const now = new Date().toISOString();
  const changed = await ctx.database.db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, next_attempt_at: now, claimed_by: null, claimed_until: null })
    .where('id', '=', id)
    .where('webhook_id', '=', BigInt(found.id as bigint))
    .where('status', '!=', 'pending')
    .executeTakeFirst();
  const row = await ctx.database.db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('id', '=', id)
    .where('webhook_id', '=', BigInt(found.id as bigint))
    .executeTakeFirst();
  if (!row) throw notFound('delivery of this webhook');
  if (Number(changed.numUpdatedRows) === 0)
    throw new AppError(409, 'already_pending', 'This delivery is waiting to be sent already.');
  return toDelivery(row);
}

/** Queues a `webhook.test` event for the endpoint, sent like any other (signed, retried, logged). */
export async function sendTestEvent(ctx: Context, rawId: string): Promise<Delivery> {
  authorize(ctx, webhook, 'update');
  const found = await webhookOf(ctx, rawId);
  const id = BigInt(found.id as bigint);
  const now = new Date().toISOString();
  const payload = JSON.stringify({
    type: 'webhook.test',
    timestamp: now,
    data: { webhook_id: Number(id), message: 'A test event sent from Leadbook.' },
  });
  const row = await ctx.database.db
    .insertInto('webhook_deliveries')
    .values({
      webhook_id: id,
      event: 'webhook.test',
      queue: `webhooks:${String(id)}`,
      payload,
      status: 'pending',
      next_attempt_at: now,
      created_at: now,
    })
    .returning(DELIVERY_COLUMNS)
    .executeTakeFirstOrThrow();
  return toDelivery(row);
}

/** A new secret for the endpoint, answered once; the old one signs too for ROTATION_GRACE_MS. */
export async function rotateSecret(ctx: Context, rawId: string): Promise<{ secret: string; previous_until: string }> {
  authorize(ctx, webhook, 'update');
  const settings = ctx.database.webhooks;
  if (!settings) throw new Error('the webhooks settings are not set on the database (see app.ts)');
  const secret = newSecret();
  const until = new Date(Date.now() + ROTATION_GRACE_MS).toISOString();
  await ctx.database.db.transaction().execute(async (trx) => {
    const before = await webhookOf(ctx, rawId, trx, true);
    const stored = await trx
      .selectFrom('webhooks')
      .select('secret')
      .where('id', '=', BigInt(before.id as bigint))
      .executeTakeFirstOrThrow();
    const written = {
      secret: settings.seal(secret),
      previous_secret: stored.secret,
      previous_secret_until: until,
      updated_at: new Date().toISOString(),
    };
    const id = BigInt(before.id as bigint);
    await updateRow(trx, webhook, id, written, entryOf(ctx, webhook, 'updated', before, written));
  });
  return { secret, previous_until: until };
}
