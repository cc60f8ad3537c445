// A store for @fastify/rate-limit that keeps its counters in the database, so
// every app process sees the same counts. One upsert per hit: the window
// restarts when it has run out.
import { sql } from 'kysely';
import type { Database } from '../db/connection.ts';
import { groupedTransaction } from '../db/group-commit.ts';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

export function databaseStore(database: Database) {
  let lastSweep = 0;
  const sweep = async (now: number) => {
    if (now - lastSweep < 60_000) return;
    lastSweep = now;
    await database.db.deleteFrom('rate_limits').where('reset_at', '<', now).execute();
  };

  async function hit(key: string, windowMs: number): Promise<{ current: number; ttl: number }> {
    const now = Date.now();
    await sweep(now);
    // A hit is a write: on SQLite it joins the group commit of the writes waiting with it.
    const restarts = sql<boolean>`rate_limits.reset_at <= ${now}`;
    const row = await groupedTransaction(database, (trx) =>
      trx
        .insertInto('rate_limits')
        .values({ key, hits: 1, reset_at: now + windowMs })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            hits: sql`case when ${restarts} then 1 else rate_limits.hits + 1 end`,
            reset_at: sql`case when ${restarts} then ${now + windowMs} else rate_limits.reset_at end`,
          }),
        )
        .returning(['hits', 'reset_at'])
        .executeTakeFirstOrThrow(),
    );
    return { current: Number(row.hits), ttl: Math.max(0, Number(row.reset_at) - now) };
  }

  async function peek(key: string): Promise<{ current: number; ttl: number }> {
    const now = Date.now();
    const row = await database.db
      .selectFrom('rate_limits')
      .select(['hits', 'reset_at'])
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row || Number(row.reset_at) <= now) return { current: 0, ttl: 0 };
    return { current: Number(row.hits), ttl: Number(row.reset_at) - now };
  }

  return class DatabaseRateLimitStore {
    constructor(readonly options: { timeWindow?: number } = {}) {}
    incr(key: string, callback: Callback, timeWindow: number) {
      hit(key, timeWindow).then(
        (r) => callback(null, r),
        (e: Error) => callback(e),
      );
    }
    read(key: string, callback: Callback) {
      peek(key).then(
        (r) => callback(null, r),
        (e: Error) => callback(e),
      );
    }
    child(routeOptions: object) {
      return new DatabaseRateLimitStore({ ...this.options, ...routeOptions });
    }
  };
}
