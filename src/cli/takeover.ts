// leadbook takeover [--check]: Leadbook moves into the original service's database (a Laravel app's, on MariaDB or
// MySQL) in place. `--check` reports what is there, what would be added and what cannot be taken, and changes
// nothing. Without it, the schema is added (db/takeover.ts), then the data Leadbook keeps beside the rows: lookup
// rows for every service and source id the records name, the first open stage for every inquiry, the derived match
// and sort keys, an admin. Every step looks at what is there first, so running it again finishes a cut-short run
// and changes nothing after a whole one. What it did is kept in `settings` (key `takeover`).
import { sql } from 'kysely';
import { loadConfig } from '../config.ts';
import { type Database, openDatabase } from '../db/connection.ts';
import { dialectOf } from '../db/dialect.ts';
import { takeOver } from '../db/migrate.ts';
import { planTakeover, type TakeoverPlan } from '../db/takeover.ts';
import type { Executor } from '../db/tables.ts';
import { entryOf } from '../records/change-log.ts';
import type { Context } from '../records/context.ts';
import { insertRow, updateRow } from '../records/repository.ts';
import { withDerived } from '../records/trash.ts';
import { resources, user as userResource } from '../resources/index.ts';

export interface TakeoverOptions {
  check?: boolean;
  /** The email of the user who becomes admin (default: the oldest account), when no user is admin yet. */
  admin?: string;
  json?: boolean;
}

/** A reference of the original records and how many rows name no record. */
interface Unlinked {
  table: string;
  column: string;
  target: string;
  rows: number;
  ids: string[];
}

export interface TakeoverReport {
  plan: TakeoverPlan;
  lookups: { table: string; ids: string[] }[];
  unlinked: Unlinked[];
  unkeptForeignKeys: { table: string; column: string; target: string; reason: string }[];
  admin: string | null;
  keysFilled: number;
}

const LOOKUPS = [
  { column: 'service_id', table: 'services', label: 'Service' },
  { column: 'source_id', table: 'sources', label: 'Source' },
] as const;

const USER_REFERENCES = [
  ['contacts', 'created_by'],
  ['inquiries', 'created_by'],
  ['inquiries', 'assigned_to'],
] as const;

/**
 * A lookup row named "Service 7" for each id the records name that has none, keeping the id; each is a create by the
 * command line with its change-log entry, in one transaction.
 */
async function addLookupRows(ctx: Context): Promise<TakeoverReport['lookups']> {
  const added: TakeoverReport['lookups'] = [];
  const now = new Date().toISOString();
  for (const { column, table, label } of LOOKUPS) {
    const resource = resources.find((r) => r.table === table)!;
    const { rows } = await sql<{ id: string | number }>`
      select distinct ${sql.ref(column)} as id from (
        select ${sql.ref(column)} from contacts union select ${sql.ref(column)} from inquiries) named
      where ${sql.ref(column)} is not null and ${sql.ref(column)} not in (select id from ${sql.table(table)})
      order by 1`.execute(ctx.database.db);
    const ids = rows.map((r) => String(r.id));
    await ctx.database.db.transaction().execute(async (trx) => {
      for (const id of ids) {
        const values = { id: BigInt(id), name: `${label} ${id}`, active: true, created_at: now, updated_at: now };
        await insertRow(trx, resource, values, entryOf(ctx, resource, 'created', null, values));
      }
    });
    if (ids.length) added.push({ table, ids });
  }
  return added;
}

/** References to users that name no user: kept as they are (the records read them as "nobody"), and listed. */
async function unlinkedUsers(db: Executor): Promise<Unlinked[]> {
  const found: Unlinked[] = [];
  for (const [table, column] of USER_REFERENCES) {
    const { rows } = await sql<{ id: string | number; n: string | number }>`
      select ${sql.ref(column)} as id, count(*) as n from ${sql.table(table)}
      where ${sql.ref(column)} is not null and ${sql.ref(column)} not in (select id from users)
      group by ${sql.ref(column)} order by 1`.execute(db);
    if (rows.length)
      found.push({
        table,
        column,
        target: 'users',
        rows: rows.reduce((sum, r) => sum + Number(r.n), 0),
        ids: rows.map((r) => String(r.id)),
      });
  }
  return found;
}

/** Works out each record's derived keys (email and phone match keys, sort keys) where they are not set yet. */
async function fillDerivedKeys(database: Database): Promise<number> {
  let filled = 0;
  for (const resource of resources) {
    const derived = resource.fields.filter((f) => f.derive);
    if (!derived.length) continue;
    const sources = [...new Set(derived.flatMap((f) => f.derive!.from))];
    const pk = resource.primaryKey.name;
    let after = 0n;
    for (;;) {
      const rows = await database.db
        .selectFrom(resource.table as 'contacts')
        .select([pk, ...sources] as never[])
        .where(pk as 'id', '>', after)
        .where((eb) => eb.or(derived.map((f) => eb(f.name as 'id', 'is', null))))
        .orderBy(pk as 'id')
        .limit(500)
        .execute();
      if (!rows.length) break;
      await database.db.transaction().execute(async (trx) => {
        for (const row of rows as Record<string, unknown>[]) {
          const keys = withDerived(resource, row, database);
          const values = Object.fromEntries(derived.map((f) => [f.name, keys[f.name] ?? null]));
          await trx
            .updateTable(resource.table as 'contacts')
            .set(values)
            .where(pk as 'id', '=', row[pk] as never)
            .execute();
        }
      });
      filled += rows.length;
      after = BigInt(String((rows.at(-1) as Record<string, unknown>)[pk]));
      if (rows.length < 500) break;
    }
  }
  return filled;
}

/**
 * Every inquiry without a stage starts in the first open one, as on a new install. A backfill, as the pipeline's
 * migration (T0007) made it on the other databases: no entry per inquiry, which would fill every activity feed.
 */
async function placeInquiries(db: Executor): Promise<void> {
  const first = await db
    .selectFrom('stages')
    .select('id')
    .where('kind', '=', 'open')
    .orderBy('position')
    .orderBy('id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('inquiries')
    .set({ stage_id: BigInt(first.id) })
    .where('stage_id', 'is', null)
    .execute();
}

/**
 * Makes one user admin when none is: the one named, else the oldest account; an update by the command line with its
 * change-log entry. Answers the admin's email.
 */
async function ensureAdmin(ctx: Context, email?: string): Promise<string | null> {
  const { db } = ctx.database;
  const admin = await db.selectFrom('users').select('email').where('role', '=', 'admin').executeTakeFirst();
  if (admin) return admin.email;
  let query = db.selectFrom('users').select(['id', 'email', 'role']).orderBy('id').limit(1);
  if (email) query = query.where(sql`lower(email)`, '=', email.toLowerCase());
  const chosen = await query.executeTakeFirst();
  if (!chosen) {
    if (email) throw new Error(`no user has the email ${email}`);
    return null;
  }
  const values = { role: 'admin' };
  await db
    .transaction()
    .execute((trx) =>
      updateRow(trx, userResource, BigInt(chosen.id), values, entryOf(ctx, userResource, 'updated', chosen, values)),
    );
  return chosen.email;
}

function describePlan(plan: TakeoverPlan): string[] {
  const lines = [
    `Found: ${plan.found.map((t) => `${t.table} (${t.rows} rows)`).join(', ') || 'none of the original tables'}`,
  ];
  if (plan.absent.length) lines.push(`Not there: ${plan.absent.join(', ')}`);
  if (plan.takenOver)
    lines.push('Leadbook has moved into this database already; a takeover only brings it up to date.');
  if (plan.createTables.length)
    lines.push(`Would create ${plan.createTables.length} tables: ${plan.createTables.join(', ')}`);
  if (plan.addColumns.length)
    lines.push(
      `Would add ${plan.addColumns.length} columns (nullable, or with a default):`,
      ...plan.addColumns.map((c) => `  ${c.table}.${c.column} ${c.type}`),
    );
  if (plan.unused.length)
    lines.push(`Leaves alone (not read by Leadbook): ${plan.unused.map((c) => `${c.table}.${c.column}`).join(', ')}`);
  if (plan.problems.length) lines.push('Cannot take over:', ...plan.problems.map((p) => `  ${p.message}`));
  return lines;
}

export async function takeoverCommand(options: TakeoverOptions): Promise<void> {
  const config = loadConfig();
  const database = openDatabase(config);
  try {
    if (dialectOf(database.db) !== 'mysql')
      throw new Error('a takeover moves into a MariaDB or MySQL database: set DATABASE_URL=mysql://… to it');
    const plan = await planTakeover(database.db);
    const print = (lines: string[]) => {
      if (!options.json) console.log(lines.join('\n'));
    };
    print(describePlan(plan));
    if (options.check || plan.problems.length) {
      if (options.json) console.log(JSON.stringify({ plan }, null, 2));
      if (plan.problems.length) process.exitCode = 1;
      else print(['Nothing was changed. Run `leadbook takeover` to move in.']);
      return;
    }
    const result = await takeOver(database.db);
    const ctx: Context = { database, via: 'cli' };
    const report: TakeoverReport = {
      plan,
      lookups: await addLookupRows(ctx),
      unlinked: await unlinkedUsers(database.db),
      unkeptForeignKeys: result.unkeptForeignKeys,
      admin: await ensureAdmin(ctx, options.admin),
      keysFilled: 0,
    };
    await placeInquiries(database.db);
    report.keysFilled = await fillDerivedKeys(database);
    const now = new Date().toISOString();
    const value = JSON.stringify({ at: now, ...report });
    await database.db
      .insertInto('settings')
      .values({ key: 'takeover', value, updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
      .execute();
    if (options.json) console.log(JSON.stringify(report, null, 2));
    print([
      'Moved in.',
      ...report.lookups.map((l) => `Made ${l.table} rows for ids ${l.ids.join(', ')}`),
      ...report.unlinked.map(
        (u) => `${u.rows} ${u.table} rows have a ${u.column} naming no user (${u.ids.join(', ')}); kept as they are`,
      ),
      ...report.unkeptForeignKeys.map(
        (k) => `No foreign key on ${k.table}.${k.column} (${k.reason}); Leadbook checks it on every write`,
      ),
      `Filled the match and sort keys of ${report.keysFilled} records.`,
      report.admin ? `Admin: ${report.admin}` : 'No user yet: create an admin with leadbook user:create --admin',
    ]);
  } finally {
    await database.close();
  }
}
