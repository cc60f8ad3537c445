// Frozen in time: search indexes and row counters. Never imports app code.
//
// Search: each record's searchable text, joined by newlines, is indexed by
// trigrams. A search word never holds whitespace, so a substring match on the
// joined text is a match inside one field, exactly as a scan of each field.
//   SQLite: an FTS5 table with the trigram tokenizer over the text folded to
//   lower case by lb_fold (the app's own Unicode folding), kept by triggers in
//   the transaction of every write. Contentless: the text is not stored twice.
//   PostgreSQL: a generated column of the lower-cased text with a pg_trgm GIN
//   index; LIKE uses it, and rechecks cheaply on text already lower-cased.
// Counts: record_counts holds each table's row count, kept by triggers, so an
// unfiltered list's total is exact without counting a million rows. On
// PostgreSQL each connection adds to its own shard (pid mod 16), so that
// concurrent writers do not queue on one counter row.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

const searchable: Record<string, string[]> = {
  contacts: ['name', 'email', 'phone', 'occupation', 'address', 'country', 'city', 'detail', 'budget'],
  inquiries: ['name', 'email', 'phone', 'occupation', 'address', 'country', 'city', 'detail', 'budget', 'inquiry_country'],
  users: ['name', 'frist_name', 'last_name', 'email', 'address', 'city', 'country', 'bio', 'image_name', 'phone'],
};

const SHARDS = 16;

const joined = (columns: string[], prefix = '') => columns.map((c) => `coalesce(${prefix}${c}, '')`).join(` || char(10) || `);

async function sqliteUp(db: Kysely<any>): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run('create table record_counts (table_name varchar(64) not null, shard integer not null, n bigint not null, primary key (table_name, shard))');
  for (const [table, columns] of Object.entries(searchable)) {
    const fts = `${table}_search`;
    const body = (prefix: string) => `lb_fold(${joined(columns, prefix)})`;
    await run(`create virtual table ${fts} using fts5(body, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`);
    await run(`insert into ${fts} (rowid, body) select id, ${body('')} from ${table}`);
    await run(`create trigger ${table}_search_insert after insert on ${table} begin
      insert into ${fts} (rowid, body) values (new.id, ${body('new.')}); end`);
    await run(`create trigger ${table}_search_update after update of ${columns.join(', ')} on ${table} begin
      delete from ${fts} where rowid = old.id;
      insert into ${fts} (rowid, body) values (new.id, ${body('new.')}); end`);
    await run(`create trigger ${table}_search_delete after delete on ${table} begin
      delete from ${fts} where rowid = old.id; end`);

    await run(`insert into record_counts (table_name, shard, n) select '${table}', 0, count(*) from ${table}`);
    await run(`create trigger ${table}_count_insert after insert on ${table} begin
      update record_counts set n = n + 1 where table_name = '${table}' and shard = 0; end`);
    await run(`create trigger ${table}_count_delete after delete on ${table} begin
      update record_counts set n = n - 1 where table_name = '${table}' and shard = 0; end`);
  }
}

async function postgresUp(db: Kysely<any>): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run('create extension if not exists pg_trgm');
  await run('create table record_counts (table_name varchar(64) not null, shard integer not null, n bigint not null, primary key (table_name, shard))');
  // Each statement adds its rows' count once (transition tables), not once per row.
  const countFunction = (name: string, delta: string) => run(`create function ${name}() returns trigger language plpgsql as $$
    begin
      insert into record_counts (table_name, shard, n) select TG_TABLE_NAME, pg_backend_pid() % ${SHARDS}, ${delta}
        on conflict (table_name, shard) do update set n = record_counts.n + excluded.n;
      return null;
    end $$`);
  await countFunction('lb_count_inserted', '(select count(*) from new_rows)');
  await countFunction('lb_count_deleted', '-(select count(*) from old_rows)');
  for (const [table, columns] of Object.entries(searchable)) {
    await run(`alter table ${table} add column search_text text generated always as (lower(${joined(columns).replaceAll('char(10)', 'chr(10)')})) stored`);
    await run(`create index ${table}_search_text on ${table} using gin (search_text gin_trgm_ops)`);
    await run(`insert into record_counts (table_name, shard, n) select '${table}', 0, count(*) from ${table}`);
    await run(`create trigger ${table}_count_insert after insert on ${table} referencing new table as new_rows for each statement execute function lb_count_inserted()`);
    await run(`create trigger ${table}_count_delete after delete on ${table} referencing old table as old_rows for each statement execute function lb_count_deleted()`);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) await sqliteUp(db);
  else await postgresUp(db);
  // The users list sorts by name and email too (the records' sort indexes came with T0001); neither holds NULL.
  for (const column of ['name', 'email']) await sql.raw(`create index users_${column}_id on users (${column}, id)`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  for (const column of ['name', 'email']) await sql.raw(`drop index users_${column}_id`).execute(db);
  for (const table of Object.keys(searchable)) {
    for (const trigger of ['search_insert', 'search_update', 'search_delete', 'count_insert', 'count_delete']) {
      await sql.raw(`drop trigger if exists ${table}_${trigger}${sqlite ? '' : ` on ${table}`}`).execute(db);
    }
    if (sqlite) await sql.raw(`drop table ${table}_search`).execute(db);
    else await sql.raw(`alter table ${table} drop column search_text`).execute(db);
  }
  if (!sqlite) await sql.raw('drop function lb_count_inserted, lb_count_deleted').execute(db);
  await sql.raw('drop table record_counts').execute(db);
}
