// Frozen in time: what a personal access token may do and until when. Null
// abilities mean all four (read, create, update, delete), so the tokens made
// before keep working as they did; a null expires_at means never.
// expiry_mailed_at records the one warning mail sent before the expiry.
// Never imports app code.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const ts = sqlite ? 'datetime' : 'timestamp(3) with time zone';
  const run = (text: string) => sql.raw(text).execute(db);
  await run('alter table personal_access_tokens add column abilities varchar(100)');
  await run(`alter table personal_access_tokens add column expires_at ${ts}`);
  await run(`alter table personal_access_tokens add column expiry_mailed_at ${ts}`);
  // The expiry mail job looks for tokens expiring soon that were not mailed yet.
  await run('create index personal_access_tokens_expires_at on personal_access_tokens (expires_at)');
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index personal_access_tokens_expires_at').execute(db);
  for (const column of ['expiry_mailed_at', 'expires_at', 'abilities']) {
    await db.schema.alterTable('personal_access_tokens').dropColumn(column).execute();
  }
}
