import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { DB } from './tables.ts';

/**
 * Every file in migrations/ named `YYYY-MM-DDTNNNN-what.ts` (`.js` once compiled) is a migration, run in name order.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** MariaDB's and MySQL's first migration, which stands for every migration up to its own name (see its head). */
const MYSQL_BASELINE = fileURLToPath(new URL('./migrations/mysql/', import.meta.url));

const provider = (folder: string) => new FileMigrationProvider({ fs, path, migrationFolder: folder });

/** The migrations of a MariaDB or MySQL database: its baseline, then those written after it. */
async function mysqlMigrations(): Promise<Record<string, Migration>> {
  const baseline = await provider(MYSQL_BASELINE).getMigrations();
  const [[name, migration]] = Object.entries(baseline) as [[string, Migration]];
  const stamp = (n: string) => n.slice(0, 'YYYY-MM-DDTNNNN'.length);
  const since = Object.entries(await provider(MIGRATIONS_DIR).getMigrations()).filter(([n]) => stamp(n) > stamp(name));
  return { [`${stamp(name)}-mysql-baseline`]: migration, ...Object.fromEntries(since) };
}

export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: dialectOf(db) === 'mysql' ? { getMigrations: mysqlMigrations } : provider(MIGRATIONS_DIR),
    migrationTableName: 'leadbook_migrations',
    migrationLockTableName: 'leadbook_migrations_lock',
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
