// Frozen in time: Idempotency-Key headers, kept 24 hours, per scope (an
// intake form's): the hash of the body they came with and the reference
// answered. Kept in the database so that a retry reaching another process is
// answered the same. Never imports app code.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const ts = sqlite ? 'datetime' : 'timestamp(3) with time zone';
  await sql
    .raw(`create table idempotency_keys (
    scope varchar(100) not null,
    key varchar(255) not null,
    body_hash varchar(64) not null,
    reference varchar(64) not null,
    created_at ${ts} not null,
    primary key (scope, key)
  )`)
    .execute(db);
  await sql.raw('create index idempotency_keys_created on idempotency_keys (created_at)').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
