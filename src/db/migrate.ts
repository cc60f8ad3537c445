import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, type Kysely, type MigrationResultSet, Migrator } from 'kysely';
import type { DB } from './tables.ts';

/**
 * Every file in migrations/ named `YYYY-MM-DDTNNNN-what.ts` (`.js` once compiled) is a migration, run in name order.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
    migrationTableName: 'leadbook_migrations',
    migrationLockTableName: 'leadbook_migrations_lock',
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
