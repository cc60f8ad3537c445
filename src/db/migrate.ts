import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import { dialectOf, mysqlServerRefusal } from './dialect.ts';
import { applyTakeover, holdsAnotherApp, type TakeoverResult } from './takeover.ts';
import type { DB } from './tables.ts';

/**
 * Every file in migrations/ named `YYYY-MM-DDTNNNN-what.ts` (`.js` once compiled) is a migration, run in name order.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** MariaDB's and MySQL's first migration, which stands for every migration up to its own name (see its head). */
const MYSQL_BASELINE = fileURLToPath(new URL('./migrations/mysql/', import.meta.url));

const provider = (folder: string) => new FileMigrationProvider({ fs, path, migrationFolder: folder });

/**
 * The migrations of a MariaDB or MySQL database: its baseline (or, moving into another app's database, the takeover
 * that brings it to the baseline's schema), then those written after it.
 */
async function mysqlMigrations(takeover?: Migration): Promise<Record<string, Migration>> {
  const baseline = await provider(MYSQL_BASELINE).getMigrations();
  const [[name, ownBaseline]] = Object.entries(baseline) as [[string, Migration]];
  const migration = takeover ?? ownBaseline;
  const stamp = (n: string) => n.slice(0, 'YYYY-MM-DDTNNNN'.length);
  const since = Object.entries(await provider(MIGRATIONS_DIR).getMigrations()).filter(([n]) => stamp(n) > stamp(name));
  return { [`${stamp(name)}-mysql-baseline`]: migration, ...Object.fromEntries(since) };
}

export class AnotherAppsDatabase extends Error {}
export class UnsupportedServer extends Error {}

export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  return migrate(db);
}

/**
 * Moves Leadbook into another app's MariaDB database (see takeover.ts), then migrates it to the latest version as
 * any other; answers what could not be kept.
 */
export async function takeOver(db: Kysely<DB>): Promise<TakeoverResult> {
  let result: TakeoverResult | undefined;
  await migrate(db, {
    up: async (trx) => {
      result = await applyTakeover(trx);
    },
  });
  return result ?? { unkeptForeignKeys: [] };
}

async function migrate(db: Kysely<DB>, takeover?: Migration): Promise<MigrationResultSet> {
  const mysql = dialectOf(db) === 'mysql';
  if (mysql) {
    const { rows } = await sql<{ version: string }>`select version() as version`.execute(db);
    const refusal = mysqlServerRefusal(rows[0]!.version);
    if (refusal) throw new UnsupportedServer(refusal);
  }
  if (mysql && !takeover && (await holdsAnotherApp(db)))
    throw new AnotherAppsDatabase(
      'this database holds another app’s tables (users, contacts…); run `leadbook takeover --check` to see what ' +
        'Leadbook would add to them, then `leadbook takeover`',
    );
  const migrator = new Migrator({
    db,
    provider: mysql ? { getMigrations: () => mysqlMigrations(takeover) } : provider(MIGRATIONS_DIR),
    migrationTableName: 'leadbook_migrations',
    migrationLockTableName: 'leadbook_migrations_lock',
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
