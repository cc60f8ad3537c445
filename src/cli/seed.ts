// leadbook seed: fills the database with deterministic fake contacts and
// inquiries (src/cli/fake-data.ts), created by and assigned to a team of 20
// agents that it adds when they are missing. Rows go in through the
// repository's multi-row INSERT, a transaction per batch, so that every
// trigger (search index, row counters) stays in step as with any other write.
import { randomBytes } from 'node:crypto';
import { hashPassword } from '../accounts/passwords.ts';
import { findUserByEmail } from '../accounts/store.ts';
import type { Database } from '../db/connection.ts';
import { insertRows } from '../records/repository.ts';
import { contact, inquiry, user } from '../resources/index.ts';
import type { Resource } from '../schema/resource.ts';
import { AGENTS, ContactFaker, type FakeRow, InquiryFaker } from './fake-data.ts';
import { withDatabase } from './database.ts';
import { progress } from './progress.ts';

/** Rows per transaction. */
const BATCH = 5_000;

export interface SeedOptions {
  contacts: number;
  inquiries: number;
  seed: number;
}

/** The ids of the 20 team agents, adding those that are missing (with an unusable random password). */
export async function ensureAgents(database: Database): Promise<number[]> {
  const { db } = database;
  const missing = [];
  for (const agent of AGENTS) if (!(await findUserByEmail(db, agent.email))) missing.push(agent);
  if (missing.length) {
    // One argon2 hash of a password nobody knows, shared by every agent: nobody can sign in as them.
    const password = await hashPassword(randomBytes(32).toString('base64url'));
    const now = new Date().toISOString();
    const rows = missing.map((a) => ({
      ...a,
      password,
      role: 'agent',
      email_verified_at: now,
      created_at: now,
      updated_at: now,
    }));
    await db.transaction().execute((trx) => insertRows(trx, user, rows));
  }
  const ids: number[] = [];
  for (const agent of AGENTS) ids.push(Number((await findUserByEmail(db, agent.email))!.id));
  return ids;
}

async function insertAll(
  database: Database,
  resource: Resource,
  count: number,
  faker: { next(): FakeRow },
  tick: (n: number) => void,
): Promise<void> {
  const { db } = database;
  for (let done = 0; done < count; ) {
    const size = Math.min(BATCH, count - done);
    const rows: FakeRow[] = new Array(size);
    for (let i = 0; i < size; i++) rows[i] = faker.next();
    await db.transaction().execute((trx) => insertRows(trx, resource, rows));
    done += size;
    tick(size);
  }
}

export async function seed(
  database: Database,
  options: SeedOptions,
  onProgress: (rowsDone: number) => void = () => {},
): Promise<void> {
  const agents = await ensureAgents(database);
  let done = 0;
  const tick = (n: number) => {
    done += n;
    onProgress(done);
  };
  await insertAll(database, contact, options.contacts, new ContactFaker(options.seed, agents), tick);
  await insertAll(database, inquiry, options.inquiries, new InquiryFaker(options.seed, agents), tick);
}

function count(name: string) {
  return (raw: string): number => {
    if (!/^\d{1,9}$/.test(raw)) throw new Error(`${name} must be a whole number from 0, not ${raw}`);
    return Number(raw);
  };
}

export const seedOptionParsers = {
  contacts: count('--contacts'),
  inquiries: count('--inquiries'),
  seed: count('--seed'),
};

export async function seedCommand(opts: SeedOptions): Promise<void> {
  await withDatabase(async (database) => {
    const total = opts.contacts + opts.inquiries;
    const bar = progress('seeding', total, 'rows');
    const started = performance.now();
    try {
      await seed(database, opts, bar.tick);
    } finally {
      bar.stop();
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(total / seconds) : total;
    const n = (x: number) => x.toLocaleString('en-US');
    console.log(
      `Seeded ${n(opts.contacts)} contacts and ${n(opts.inquiries)} inquiries ` +
        `(seed ${opts.seed}) in ${seconds.toFixed(1)} s: ${n(rate)} rows/s.`,
    );
  });
}
