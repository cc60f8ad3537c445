import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import * as records from './migrations/2026-11-22T0001-records.ts';
import * as accounts from './migrations/2026-11-22T0002-accounts.ts';
import * as searchAndCounts from './migrations/2026-11-22T0003-search-and-counts.ts';
import * as invitations from './migrations/2026-11-23T0001-invitations.ts';

/** Every migration, by its sortable name. Listed here so that no file-system scan is needed. */
const migrations: Record<string, Migration> = {
  '2026-11-22T0001-records': records,
  '2026-11-22T0002-accounts': accounts,
  '2026-11-22T0003-search-and-counts': searchAndCounts,
  '2026-11-23T0001-invitations': invitations,
};

export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'leadbook_migrations',
    migrationLockTableName: 'leadbook_migrations_lock',
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
