// leadbook seed: fills the database with deterministic fake contacts and
// inquiries (src/cli/fake-data.ts), created by and assigned to a team of 20
// agents, and naming 10 sources and 20 services, that it adds when they are
// missing. Rows are made in a worker thread (seed-rows.ts), a batch ahead of
// the writes, and go in through the repository's multi-row INSERT: into an empty
// table in one transaction, whose indexes (the search index too) are built once
// at its end; into a table that has rows, a transaction per batch, each with its
// search index rows written once at its end (src/db/bulk-load.ts). Either way
// the indexes hold what row-by-row writes would have left. What the server
// works out for a record written through the API (its match and sort keys, an
// inquiry's first stage) is worked out here too. The inquiries are not linked
// to contacts (the fake contacts and inquiries are separate streams), unless
// `--pipeline` asks for it: then each is linked to one of the contacts, and
// they are spread over the active stages and assigned to 8 agents
// (fake-data.ts), as the pipeline bench needs.
import { randomBytes } from 'node:crypto';
import { hashPassword } from '../accounts/passwords.ts';
import { findUserByEmail } from '../accounts/store.ts';
import type { Database } from '../db/connection.ts';
import { isEmpty, loadInOnePass } from '../db/bulk-load.ts';
import { asRecordTables } from '../db/tables.ts';
import { insertRows, loadRows } from '../records/repository.ts';
import { firstOpenStage } from '../resources/inquiry-rules.ts';
import { contact, service, source, user } from '../resources/index.ts';
import type { Resource } from '../schema/resource.ts';
import { AGENTS, type FakeLookups, type FakePipeline, type FakeRow, SERVICES, SOURCES } from './fake-data.ts';
import { withDatabase } from './database.ts';
import { progress } from './progress.ts';
import { type RowsWanted, rowsInWorker, SEEDED } from './seed-rows.ts';

/** Rows per transaction. */
const BATCH = 5_000;

export interface SeedOptions {
  contacts: number;
  inquiries: number;
  seed: number;
  /** Link each inquiry to a contact, spread them over the stages, assign them to a few agents (fake-data.ts). */
  pipeline?: boolean;
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

/** The ids of the rows of a lookup (sources, services) with these names, in their order, adding those missing. */
async function ensureNamed(database: Database, resource: Resource, names: readonly string[]): Promise<number[]> {
  const db = asRecordTables(database.db);
  const idsByName = async () => {
    const rows = await db.selectFrom(resource.table).select(['id', 'name']).execute();
    return new Map(rows.map((r) => [String(r.name).toLowerCase(), Number(r.id)]));
  };
  const found = await idsByName();
  const now = new Date().toISOString();
  const missing = names
    .filter((name) => !found.has(name.toLowerCase()))
    .map((name) => ({ name, active: true, created_at: now, updated_at: now }));
  if (missing.length === 0) return names.map((name) => found.get(name.toLowerCase())!);
  await database.db.transaction().execute((trx) => insertRows(trx, resource, missing));
  const all = await idsByName();
  return names.map((name) => all.get(name.toLowerCase())!);
}

/** The 10 sources and 20 services the fake records name (fake-data.ts), adding those that are missing. */
export async function ensureLookups(database: Database): Promise<FakeLookups> {
  return {
    sourceIds: await ensureNamed(database, source, SOURCES),
    serviceIds: await ensureNamed(database, service, SERVICES),
  };
}

async function insertAll(
  database: Database,
  count: number,
  wanted: Omit<RowsWanted, 'keys'>,
  told: { tick: (n: number) => void; indexing: (table: string) => void },
): Promise<number[]> {
  const { db } = database;
  const ids: number[] = [];
  if (count === 0) return ids;
  const took = (written: bigint[]) => {
    for (const id of written) ids.push(Number(id));
  };
  /** The rows in batches, each made in a worker thread while the one before is written; told when it was. */
  async function* batches() {
    const made = rowsInWorker({ ...wanted, keys: { defaultCountry: database.defaultCountry } });
    try {
      const batch = (done: number) => made.next(Math.min(BATCH, count - done));
      let coming = batch(0);
      for (let done = 0; done < count; done += BATCH) {
        const rows = await coming;
        if (done + BATCH < count) coming = batch(done + BATCH);
        yield rows;
        told.tick(rows.length);
      }
    } finally {
      await made.close();
    }
  }
  const resource = SEEDED[wanted.table];
  const table = resource.table;
  // Into an empty table, one transaction: its indexes are built once, at the end (src/db/bulk-load.ts).
  if (await isEmpty(db, table))
    await db.transaction().execute((trx) =>
      loadInOnePass(trx, table, async () => took(await loadRows(trx, resource, batches())), {
        fills: true,
        indexing: () => told.indexing(table),
      }),
    );
  // Into a table that has rows, a transaction per batch, so that the app's own writes go on between them.
  else
    for await (const rows of batches())
      took(await db.transaction().execute((trx) => loadInOnePass(trx, table, () => insertRows(trx, resource, rows))));
  return ids;
}

/** What a pipeline spreads inquiries over: the contacts just seeded (else every contact), the active stages. */
async function pipelineOf(database: Database, seeded: number[]): Promise<FakePipeline> {
  const db = asRecordTables(database.db);
  const contactIds = seeded.length
    ? seeded
    : (await db.selectFrom(contact.table).select('id').orderBy('id').execute()).map((r) => Number(r.id));
  const stages = await db.selectFrom('stages').select(['id', 'active']).orderBy('position').orderBy('id').execute();
  // true on PostgreSQL, 1 on SQLite.
  const stageIds = stages.filter((s) => Boolean(Number(s.active))).map((s) => Number(s.id));
  return { contactIds, stageIds };
}

export async function seed(
  database: Database,
  options: SeedOptions,
  onProgress: (rowsDone: number) => void = () => {},
  onIndexing: (table: string) => void = () => {},
): Promise<void> {
  const agents = await ensureAgents(database);
  const lookups = await ensureLookups(database);
  let done = 0;
  const told = {
    tick: (n: number) => {
      done += n;
      onProgress(done);
    },
    indexing: onIndexing,
  };
  const wanted = { seed: options.seed, agentIds: agents, lookups };
  const contactIds = await insertAll(database, options.contacts, { ...wanted, table: 'contacts' }, told);
  const pipeline = options.pipeline && options.inquiries ? await pipelineOf(database, contactIds) : undefined;
  const stage = options.inquiries && !pipeline ? await firstOpenStage(database.db) : null;
  const given: FakeRow = pipeline ? {} : { stage_id: stage };
  await insertAll(database, options.inquiries, { ...wanted, table: 'inquiries', pipeline, given }, told);
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
      await seed(database, opts, bar.tick, (table) => bar.say(`building the indexes of ${table}…`));
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
