// Group commit on SQLite: creates that arrive together share one transaction, each in a savepoint of its own, and
// each is answered once that transaction has committed. SQLite has one writer, and a commit (the WAL's pages, the
// search index's flush) costs more than a small create does; writes waiting their turn anyway pay it once per group.
// A create that fails rolls back to its savepoint alone. PostgreSQL has concurrent writers: each create is its own
// transaction there.
import { sql, type Transaction } from 'kysely';
import type { Database } from './connection.ts';
import type { DB } from './tables.ts';

interface Waiting {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** At most this many writes in one transaction: a long one would hold the others' answers. */
const GROUP = 64;
const queues = new WeakMap<Database, Waiting[]>();

/** Runs `work` in a transaction (see the top of the file): on SQLite, maybe with others that arrived with it. */
export function groupedTransaction<T>(database: Database, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  if (database.dialect !== 'sqlite') return database.db.transaction().execute(work);
  const starting = !queues.has(database);
  if (starting) queues.set(database, []);
  const queue = queues.get(database)!;
  const answer = new Promise<T>((resolve, reject) =>
    queue.push({ work, resolve: resolve as (value: unknown) => void, reject }),
  );
  // The first waiting write starts the writer, after the requests already received have had their turn to join.
  if (starting) setImmediate(() => void drain(database));
  return answer;
}

/** Writes waiting for their group (not those of the group being written): the metrics' view of the queue. */
export const waitingWrites = (database: Database): number => queues.get(database)?.length ?? 0;

async function drain(database: Database): Promise<void> {
  const queue = queues.get(database)!;
  while (queue.length > 0) {
    const group = queue.splice(0, GROUP);
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await database.db.transaction().execute(async (trx) => {
        for (const { work } of group) {
          await sql`savepoint grouped`.execute(trx);
          try {
            outcomes.push({ ok: true, value: await work(trx) });
            await sql`release savepoint grouped`.execute(trx);
          } catch (error) {
            await sql`rollback to savepoint grouped`.execute(trx);
            await sql`release savepoint grouped`.execute(trx);
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The commit itself failed (the disk, the database gone): nothing of the group was written.
      for (const { reject } of group) reject(error);
      continue;
    }
    group.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.error);
    });
    // Let the requests that came meanwhile join the next group.
    if (queue.length > 0) await new Promise((r) => setImmediate(r));
  }
  queues.delete(database);
}
