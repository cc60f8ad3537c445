// One scheduler, one process at a time (DESIGN.md): every app process ticks, and
// the one that holds the lease row in the database does the timed work (see
// app.ts: reminders, overdue notices, the outbox's mails, the trash's purge,
// old idempotency keys). The holder renews the lease on each tick, and a job
// before each step that must not be done twice (`held`); when it dies, the
// lease runs out and another process takes it on its next tick, so a dead
// holder is replaced within lease + tick.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import type { Database } from './db/connection.ts';
import type { Executor } from './db/tables.ts';
import { noticeOverdue, remindDueTasks } from './records/notifications.ts';

export interface Job {
  name: string;
  /** How often it runs, at most. */
  everyMs: number;
  /**
   * `held` renews the lease and answers whether this process still holds it: a long job asks before each step that
   * must not be done twice (a mail), so that a holder that stalled past its lease stops where the next one begins.
   */
  run(db: Executor, held: () => Promise<boolean>): Promise<void>;
}

export interface SchedulerOptions {
  tickMs: number;
  leaseMs: number;
  /** The lease row's name: `scheduler`, the app's, unless given (a test's schedulers compete for one of their own). */
  lease?: string;
  /** Counts each job's runs by outcome (`ok`, `error`): the app's metrics. */
  runs?: Counter<'job' | 'outcome'>;
}

export interface Scheduler {
  /** This process's name in the lease row. */
  holder: string;
  /** One tick: take or renew the lease, then run what is due; answers whether this process held it. */
  tick(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Takes the lease if it is free, run out, or already ours; answers whether we hold it now. */
async function takeLease(db: Executor, name: string, holder: string, leaseMs: number): Promise<boolean> {
  const now = new Date();
  const until = new Date(now.getTime() + leaseMs).toISOString();
  await db
    .insertInto('leases')
    .values({ name, holder, expires_at: until })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const taken = await db
    .updateTable('leases')
    .set({ holder, expires_at: until })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('expires_at', '<', now.toISOString())]))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

export function startScheduler(
  database: Database,
  jobs: readonly Job[],
  log: FastifyBaseLogger,
  options: SchedulerOptions,
): Scheduler {
  const holder = randomUUID();
  const { lease = 'scheduler' } = options;
  const lastRun = new Map<string, number>();
  let running: Promise<boolean> | null = null;
  let stopped = false;

  const held = async () => !stopped && (await takeLease(database.db, lease, holder, options.leaseMs));
  const tick = async (): Promise<boolean> => {
    if (!(await takeLease(database.db, lease, holder, options.leaseMs))) return false;
    for (const job of jobs) {
      if (stopped) break;
      const now = Date.now();
      if (now - (lastRun.get(job.name) ?? 0) < job.everyMs) continue;
      lastRun.set(job.name, now);
      try {
        await job.run(database.db, held);
        options.runs?.inc({ job: job.name, outcome: 'ok' });
      } catch (error) {
        options.runs?.inc({ job: job.name, outcome: 'error' });
        log.error({ err: error, job: job.name }, 'a scheduled job failed; it runs again when next due');
      }
    }
    return true;
  };

  const guarded = () => {
    if (running || stopped) return;
    running = tick()
      .catch((error: unknown) => {
        log.warn({ err: error }, 'the scheduler could not reach the database; it tries again on the next tick');
        return false;
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(guarded, options.tickMs);
  timer.unref();
  guarded();

  return {
    holder,
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      // Let another process take over at once instead of after the lease runs out.
      await database.db
        .deleteFrom('leases')
        .where('name', '=', lease)
        .where('holder', '=', holder)
        .execute()
        .catch(() => undefined);
    },
  };
}

/** How far back a reminder run looks again: a change committed late (stamped before the last run) is still seen. */
const REMINDER_OVERLAP_MS = 60_000;
/** A process that takes the lease first looks a week back: reminders missed while no process ran are sent. */
const REMINDER_CATCH_UP_MS = 7 * 24 * 60 * 60 * 1000;

/** Tasks coming due and inquiries falling overdue tell their assignee, once per record and due time. */
export function remindersJob(): Job {
  let since = new Date(Date.now() - REMINDER_CATCH_UP_MS);
  return {
    name: 'remind of what is due',
    everyMs: 0,
    async run(db) {
      const now = new Date();
      await remindDueTasks(db, since, now);
      await noticeOverdue(db, since, now);
      since = new Date(now.getTime() - REMINDER_OVERLAP_MS);
    },
  };
}
