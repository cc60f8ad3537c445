// The webhook dispatcher (CONTRACT.md, "Webhooks"): a loop that runs on the
// scheduler's lease holder only (DESIGN.md, "One scheduler"). Each turn it
// queues the change log's new events (events.ts), then sends the deliveries
// that are due, at most `concurrency` at a time, each record's one after
// another (a delivery waits while an earlier one of its record to the same
// endpoint is pending). A delivery is claimed in the database before it is sent,
// for longer than a send may take, so that a holder that stalled past its lease
// and the next holder never send one at the same time; a process killed
// mid-send leaves its claim to run out, and the delivery is sent again under
// the same webhook-id (at least once).
//
// A 2xx within the timeout is success. Anything else is tried again after a
// delay that doubles from `retryBaseMs` (capped at an hour, plus up to 20%
// jitter) until the delays add up to `retryForMs` (24 h by default); then the
// delivery is `failed` and may be resent. `410 Gone` turns the endpoint off at
// once; an endpoint failing for 3 days is turned off too; either way the
// admins are told.
import { randomUUID } from 'node:crypto';
import { sql, type Updateable } from 'kysely';
import type { Database, WebhookSettings } from '../db/connection.ts';
import type { Executor, WebhookDeliveriesTable } from '../db/tables.ts';
import { entryOf } from '../records/change-log.ts';
import type { Context } from '../records/context.ts';
import { notify } from '../records/notifications.ts';
import { selectById, updateRow } from '../records/repository.ts';
import { webhook } from '../resources/webhook.ts';
import type { Resource } from '../schema/resource.ts';
import type { Job } from '../scheduler.ts';
import { collectEvents, ENTRIES_PER_READ } from './events.ts';
import { postJson } from './egress.ts';
import { signatureHeader } from './signing.ts';

/** Where the dispatcher says what went wrong (the app's logger). */
export interface Log {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface DispatcherOptions {
  settings: WebhookSettings;
  /** Requests in flight at most; 0: nothing is sent (events still queue). */
  concurrency: number;
  /** The first retry's delay; each next one doubles. */
  retryBaseMs: number;
  /** How long a delivery is retried before it counts as failed. */
  retryForMs: number;
  timeoutMs: number;
  /** How long the loop waits when nothing is due. */
  idleMs?: number;
  /** Counts each attempt's outcome (metrics). */
  counted?: (outcome: 'success' | 'failure') => void;
}

const MAX_DELAY_MS = 60 * 60 * 1000;
const FAILING_DAYS = 3;
/** How often the loop renews the lease (and stops when another process holds it). */
const HELD_EVERY_MS = 2000;
/**
 * How long after a send ends the loop takes its next turn: the sends that end meanwhile are written down, and their
 * slots refilled, in that one turn. A turn writes in up to three transactions, which on SQLite cost about what a
 * record write does; turn by send, delivering cost the app more than the writes it delivered.
 */
const GATHER_MS = 10;

/** Who turns an endpoint off: the system, for nobody signed in. */
const SYSTEM = (database: Database): Context => ({ database, via: 'system' });

const delayOf = (base: number, attempt: number) => Math.min(base * 2 ** (attempt - 1), MAX_DELAY_MS);

/** Whether a delivery that has failed `attempts` times has been retried for `retryForMs` (jitter only adds). */
function givenUp(options: DispatcherOptions, attempts: number): boolean {
  let waited = 0;
  for (let n = 1; n < attempts; n++) waited += delayOf(options.retryBaseMs, n);
  return waited >= options.retryForMs;
}

interface Claimed {
  id: bigint | string | number;
  webhook_id: bigint | string | number;
  payload: string;
  attempts: number;
  /** The claim it was sent under: its outcome is written only while the claim is still this one. */
  claimed_by: string | null;
  url: string;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_until: string | Date | null;
}

export interface Dispatcher {
  /** The scheduler's job: starts the loop on the lease holder (it runs until the lease is lost or stop()). */
  job: Job;
  stop(): Promise<void>;
}

export function webhookDispatcher(
  database: Database,
  resources: readonly Resource[],
  log: Log,
  options: DispatcherOptions,
): Dispatcher {
  const { db } = database;
  const idleMs = options.idleMs ?? 200;
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let gathering = false;
  const wakeSoon = () => {
    if (gathering) return;
    gathering = true;
    setTimeout(() => {
      gathering = false;
      wake?.();
    }, GATHER_MS).unref();
  };
  /** When the soonest retry this process scheduled is due: the loop wakes for it rather than at the next poll. */
  let soonest = Number.POSITIVE_INFINITY;

  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      // Never what keeps the process alive: the server is, while it runs.
      const timer = setTimeout(done, ms).unref();
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  /** Claims up to `room` due deliveries, each the oldest pending one of its record for its endpoint. */
  async function claim(room: number): Promise<Claimed[]> {
    const now = new Date();
    const at = now.toISOString();
    const due = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select('d.id')
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', at)
      // No pending delivery is due before the first pending one: a bound that changes nothing but where the walk of the
      // index (status, next_attempt_at, id) starts. Below it lie only the entries of deliveries that were pending once
      // and are done now, until PostgreSQL vacuums them away (autovacuum off, they stay: 7,500 of them made a claim
      // take 25 ms). The first pending one is found along the same index, which skips them once it has seen them.
      .where('d.next_attempt_at', '>=', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select((f) => f.fn.min('next_attempt_at').as('first'))
          .where('status', '=', 'pending'),
      )
      .where('w.active', '=', true)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', at)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries as e')
              .select(sql`1`.as('one'))
              .whereRef('e.webhook_id', '=', 'd.webhook_id')
              .whereRef('e.queue', '=', 'd.queue')
              .where('e.status', '=', 'pending')
              .whereRef('e.id', '<', 'd.id'),
          ),
        ),
      )
      // Longest due first, along the index (status, next_attempt_at, id): the walk stops at `room`, however many wait.
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .limit(room)
      .execute();
    if (due.length === 0) return [];
    const token = randomUUID();
    // A claim outlives the longest send, so a delivery is never sent twice at once.
    const until = new Date(now.getTime() + options.timeoutMs + 5000).toISOString();
    const ids = due.map((d) => BigInt(d.id));
    await db
      .updateTable('webhook_deliveries')
      .set({ claimed_by: token, claimed_until: until })
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at)]))
      .execute();
    const claimed = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select([
        'd.id',
        'd.webhook_id',
        'd.payload',
        'd.attempts',
        'd.claimed_by',
        'w.url',
        'w.secret',
        'w.previous_secret',
        'w.previous_secret_until',
      ])
      // What this claim took of the rows it tried, found by their ids: claimed_by has no index, and the table keeps
      // every delivery for days (a scan of it was 1.3 ms a turn at 20,000 rows on SQLite, on the one thread).
      .where('d.id', 'in', ids)
      .where('d.claimed_by', '=', token)
      .orderBy('d.id')
      .execute();
    return claimed.map((c) => ({ ...c, attempts: Number(c.attempts) }));
  }

  function secretsOf(c: Claimed): string[] {
    const open = (sealed: string | null) => (sealed ? options.settings.open(sealed) : null);
    const until = c.previous_secret_until ? new Date(c.previous_secret_until).getTime() : 0;
    return [open(c.secret), until > Date.now() ? open(c.previous_secret) : null].filter((s): s is string => !!s);
  }

  /** What an attempt changes in its delivery's row (null: not an attempt, the claim is just given back). */
  interface Finished {
    id: bigint;
    claim: string;
    webhookId: bigint;
    row: Updateable<WebhookDeliveriesTable> | null;
    ok: boolean;
    gone: boolean;
    at: Date;
  }
  /** Attempts that ended since the loop last wrote them down: written together, in one transaction. */
  const finished: Finished[] = [];

  async function send(c: Claimed): Promise<void> {
    const msgId = `msg_${String(c.id)}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': msgId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secretsOf(c), msgId, timestamp, c.payload),
    };
    const result = await postJson(c.url, headers, c.payload, {
      ...options.settings,
      timeoutMs: options.timeoutMs,
      signal: stopping.signal,
    });
    const done = { id: BigInt(c.id), claim: String(c.claimed_by), webhookId: BigInt(c.webhook_id), at: new Date() };
    if (stopping.signal.aborted) {
      // Shutting down: not an attempt; the next holder sends it.
      finished.push({ ...done, row: null, ok: false, gone: false });
      return;
    }
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = c.attempts + 1;
    const delay = delayOf(options.retryBaseMs, attempts) * (1 + Math.random() * 0.2);
    if (!ok) soonest = Math.min(soonest, done.at.getTime() + delay);
    options.counted?.(ok ? 'success' : 'failure');
    finished.push({
      ...done,
      ok,
      gone,
      row: {
        status: ok ? 'succeeded' : gone || givenUp(options, attempts) ? 'failed' : 'pending',
        attempts,
        next_attempt_at: new Date(done.at.getTime() + delay).toISOString(),
        last_attempt_at: done.at.toISOString(),
        last_status_code: result.status,
        last_error: result.error?.slice(0, 255) ?? null,
        latency_ms: Math.round(result.latencyMs),
        response_excerpt: result.excerpt,
      },
    });
  }

  /** Writes down the attempts that ended, and gives their claims back, in one transaction. */
  async function writeFinished(): Promise<void> {
    if (finished.length === 0) return;
    const batch = finished.splice(0);
    try {
      await db.transaction().execute(async (trx) => {
        // Each endpoint's health once per batch: failing (gone, if any answer said so), then working, if any did.
        const health = new Map<bigint, { ok: boolean; failed: boolean; gone: boolean; at: Date }>();
        for (const f of batch) {
          const written = await trx
            .updateTable('webhook_deliveries')
            .set({ ...f.row, claimed_by: null, claimed_until: null })
            .where('id', '=', f.id)
            .where('claimed_by', '=', f.claim)
            .executeTakeFirst();
          if (!f.row || Number(written.numUpdatedRows) !== 1) continue;
          const seen = health.get(f.webhookId) ?? { ok: false, failed: false, gone: false, at: f.at };
          health.set(f.webhookId, {
            ok: seen.ok || f.ok,
            failed: seen.failed || !f.ok,
            gone: seen.gone || f.gone,
            at: f.at,
          });
        }
        for (const [webhookId, { ok, failed, gone, at }] of health) {
          if (failed) await recordHealth(trx, webhookId, false, gone, at);
          if (ok) await recordHealth(trx, webhookId, true, false, at);
        }
      });
    } catch (error) {
      // Kept for the next turn; were the process to die first, the claims run out and the deliveries go again.
      finished.unshift(...batch);
      throw error;
    }
  }

  /** An endpoint's health after an attempt: failing since when, and off when gone or failing for too long. */
  async function recordHealth(trx: Executor, webhookId: bigint, ok: boolean, gone: boolean, now: Date) {
    const before = await selectById(trx, webhook, webhookId, true);
    if (!before) return;
    const at = now.toISOString();
    const since = before.failing_since ? new Date(before.failing_since as string).toISOString() : null;
    const cutoff = new Date(now.getTime() - FAILING_DAYS * 24 * 60 * 60 * 1000).toISOString();
    const turnedOff = !ok && Boolean(before.active) && (gone || (since ?? at) <= cutoff);
    // Nothing to say: still working, or still failing since the same time.
    if (ok ? since === null : since !== null && !turnedOff) return;
    const reason = gone
      ? 'The endpoint answered 410 Gone.'
      : `The endpoint has failed every delivery for ${FAILING_DAYS} days.`;
    const values = ok
      ? { failing_since: null }
      : turnedOff
        ? { failing_since: since ?? at, active: false, disabled_reason: reason }
        : { failing_since: at };
    // Each change of its health is an update by the system, in its activity, like an admin's.
    const written = { ...values, updated_at: at };
    await updateRow(trx, webhook, webhookId, written, entryOf(SYSTEM(database), webhook, 'updated', before, written));
    if (!turnedOff) return;
    log.warn({ webhook: String(webhookId), reason }, 'a webhook endpoint was turned off');
    const admins = await trx
      .selectFrom('users')
      .select('id')
      .where('role', '=', 'admin')
      .where('active', '=', true)
      .execute();
    await notify(
      trx,
      admins.map((a) => ({
        user_id: BigInt(a.id),
        kind: 'webhook_disabled' as const,
        resource: 'webhooks',
        record_id: webhookId,
      })),
    );
  }

  async function pump(held: () => Promise<boolean>): Promise<void> {
    let checked = Date.now();
    while (!stopping.signal.aborted) {
      if (Date.now() - checked >= HELD_EVERY_MS) {
        // The database away counts as the lease lost: the scheduler starts the loop again once it holds it.
        if (!(await held().catch(() => false))) break;
        checked = Date.now();
      }
      let read = 0;
      let started = 0;
      try {
        await writeFinished();
        read = await collectEvents(db, resources);
        const room = options.concurrency - inFlight.size;
        if (room > 0) {
          for (const c of await claim(room)) {
            const sending: Promise<void> = send(c)
              .catch((error: unknown) => log.error({ err: error, delivery: String(c.id) }, 'a webhook delivery failed'))
              .finally(() => {
                inFlight.delete(sending);
                wakeSoon();
              });
            inFlight.add(sending);
            started++;
          }
        }
      } catch (error) {
        log.warn({ err: error }, 'the webhook dispatcher could not reach the database; it tries again');
      }
      // More is waiting when a read or a claim came back full; otherwise wait for a send to end or the next poll.
      if (read < ENTRIES_PER_READ && (started === 0 || inFlight.size >= options.concurrency)) {
        await nap(Math.max(5, Math.min(idleMs, soonest - Date.now())));
        if (soonest <= Date.now()) soonest = Number.POSITIVE_INFINITY;
      }
    }
    // The lease is gone (or the app stops): what is under way ends, and is written down while the claims are ours.
    await Promise.allSettled([...inFlight]);
    await writeFinished().catch((error: unknown) =>
      log.warn({ err: error }, 'webhook attempts could not be written down; their deliveries will go again'),
    );
  }

  return {
    job: {
      name: 'deliver webhooks',
      everyMs: 0,
      async run(_db, held) {
        loop ??= pump(held)
          .catch((error: unknown) => log.error({ err: error }, 'the webhook dispatcher stopped; it starts again'))
          .finally(() => {
            loop = null;
          });
      },
    },
    async stop() {
      stopping.abort();
      wake?.();
      await loop;
    },
  };
}

/** How many deliveries wait to be sent or retried (the metrics' backlog). */
export async function webhookBacklog(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How long the delivery log keeps what was sent (or given up on). */
const KEEP_DELIVERIES_MS = 30 * 24 * 60 * 60 * 1000;

/** Deliveries forgotten per statement: requests go between the statements. */
const FORGET_BATCH = 2_000;

/**
 * The scheduler's job that forgets deliveries done for 30 days (pending ones are never forgotten). No index covers
 * `created_at` (each delivery would pay for one); deliveries are numbered as they are made, so they are walked by id
 * from the oldest, up to the first one made since then: the walk costs a step per delivery to forget, where a filter
 * on `created_at` alone read every delivery kept, each hour.
 */
export const forgetOldDeliveries: Job = {
  name: 'forget old webhook deliveries',
  everyMs: 60 * 60 * 1000,
  async run(db, held) {
    const before = new Date(Date.now() - KEEP_DELIVERIES_MS).toISOString();
    const kept = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('created_at', '>=', before)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    const old = db
      .selectFrom('webhook_deliveries')
      .where('status', '!=', 'pending')
      .where('created_at', '<', before)
      .$if(kept !== undefined, (q) => q.where('id', '<', kept!.id));
    for (let after: bigint | string | number = 0; ; ) {
      const batch = await old.select('id').where('id', '>', after).orderBy('id').limit(FORGET_BATCH).execute();
      if (batch.length === 0) return;
      const ids = batch.map((d) => d.id);
      await db.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
      if (batch.length < FORGET_BATCH || !(await held())) return;
      after = ids.at(-1)!;
    }
  },
};
