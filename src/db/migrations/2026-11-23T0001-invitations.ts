// Frozen in time: invitations. An admin who creates an account without a
// password invites its owner by mail; the link's token is kept only as its
// SHA-256, one open invitation per user. Never imports app code.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const ts = db.getExecutor().adapter instanceof SqliteAdapter ? 'datetime' : 'timestamp(3) with time zone';
  await sql.raw(`create table invitations (
    user_id bigint primary key references users (id) on delete cascade,
    token_hash varchar(64) not null,
    created_at ${ts} not null
  )`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invitations').execute();
}
