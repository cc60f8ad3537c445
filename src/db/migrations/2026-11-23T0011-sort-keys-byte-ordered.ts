// Written by hand. Frozen: never edit it.
// Sort keys compare byte by byte (lists ORDER BY name_sort COLLATE "C"): on PostgreSQL the columns take that
// collation, so that their (name_sort, id) indexes serve those sorts. SQLite compares bytes already.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  for (const table of ['contacts', 'inquiries'])
    await sql`alter table ${sql.table(table)} alter column name_sort type varchar(255) collate "C"`.execute(db);
}
