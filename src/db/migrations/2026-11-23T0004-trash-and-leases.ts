// Frozen in time: what trash, undo and the scheduler need. An entry may name
// the entry that caused it (a contact's deletion deletes its notes; a restore
// names the change it undid), and the timed work of any number of processes is
// done by whichever holds the lease. Never imports app code.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const ts = sqlite ? 'datetime' : 'timestamp(3) with time zone';
  await sql.raw('alter table change_log add column cause_id bigint').execute(db);
  // Partial: most entries have no cause and are no deletion, and an index they are not in costs their insert nothing.
  await sql.raw('create index change_log_cause on change_log (cause_id) where cause_id is not null').execute(db);
  // The trash: deletions, newest first.
  await sql.raw("create index change_log_deleted on change_log (id) where action = 'deleted'").execute(db);
  await sql
    .raw(`create table leases (
    name varchar(64) primary key,
    holder varchar(64) not null,
    expires_at ${ts} not null
  )`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leases').execute();
  await db.schema.dropIndex('change_log_deleted').execute();
  await db.schema.dropIndex('change_log_cause').execute();
  await db.schema.alterTable('change_log').dropColumn('cause_id').execute();
}
