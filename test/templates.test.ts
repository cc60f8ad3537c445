// The apps of the other test files start from a copy of one migrated database
// (test/helpers/templates.ts). A copy must be that database: the same columns,
// indexes, keys, checks, triggers and functions as the database describes them,
// the same next ids and the same rows. MariaDB's copy is made table by table
// (it has no CREATE DATABASE … TEMPLATE), so it is the one this can catch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/connection.ts';
import { DIALECTS, type FreshDatabase, freshDatabase, migrate, templateOf } from './helpers/database.ts';

/** What the database says of its own schema, one line per thing, by dialect. */
const DESCRIBED = {
  sqlite: [`select type || ' ' || name || ' on ' || tbl_name || ': ' || coalesce(sql, '') as d from sqlite_master`],
  postgres: [
    `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
       coalesce(column_default, '') || ' ' || coalesce(generation_expression, '') as d
     from information_schema.columns where table_schema = current_schema()`,
    `select indexname || ': ' || indexdef as d from pg_indexes where schemaname = current_schema()`,
    `select conrelid::regclass || ' ' || conname || ': ' || pg_get_constraintdef(oid) as d from pg_constraint
     where connamespace = current_schema()::regnamespace`,
    `select pg_get_triggerdef(oid) as d from pg_trigger where not tgisinternal`,
    `select proname || ': ' || prosrc as d from pg_proc where pronamespace = current_schema()::regnamespace`,
    `select sequencename || ' ' || coalesce(last_value, 0) as d from pg_sequences where schemaname = current_schema()`,
  ],
  mysql: [
    `select concat_ws(' ', table_name, column_name, column_type, is_nullable, column_default, extra,
       generation_expression, collation_name) as d
     from information_schema.columns where table_schema = database()`,
    `select concat_ws(' ', table_name, index_name, non_unique, seq_in_index, column_name, sub_part) as d
     from information_schema.statistics where table_schema = database()`,
    `select concat_ws(' ', 'foreign key', r.table_name, r.constraint_name, k.column_name, r.referenced_table_name,
       k.referenced_column_name, r.update_rule, r.delete_rule) as d
     from information_schema.referential_constraints r join information_schema.key_column_usage k
       on k.constraint_schema = r.constraint_schema and k.constraint_name = r.constraint_name
       and k.table_name = r.table_name
     where r.constraint_schema = database()`,
    `select concat_ws(' ', 'check', table_name, constraint_name, check_clause) as d
     from information_schema.check_constraints where constraint_schema = database()`,
    `select concat_ws(' ', 'trigger', trigger_name, action_timing, event_manipulation, event_object_table,
       action_order, sql_mode, action_statement) as d
     from information_schema.triggers where trigger_schema = database()`,
    `select concat_ws(' ', 'table', table_name, engine, table_collation, auto_increment) as d
     from information_schema.tables where table_schema = database()`,
  ],
};

const TABLES = {
  sqlite: `select name as t from sqlite_master where type = 'table' and name not like 'sqlite_%'`,
  postgres: `select tablename as t from pg_tables where schemaname = current_schema()`,
  mysql: `select table_name as t from information_schema.tables where table_schema = database()`,
};

/** The schema's description and every table's rows, sorted. */
async function contentsOf(fresh: FreshDatabase) {
  const database = openDatabase(fresh.options);
  const lines = async (text: string) =>
    (await sql.raw<Record<string, unknown>>(text).execute(database.db)).rows.map((r) =>
      JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    );
  try {
    const schema = (await Promise.all(DESCRIBED[database.dialect].map(lines))).flat().sort();
    const tables = (await lines(TABLES[database.dialect])).map((t) => JSON.parse(t).t as string).sort();
    const rows: Record<string, string[]> = {};
    for (const table of tables) {
      // A SQLite FTS5 index's shadow tables hold its pages; they are copied with the file like any table.
      rows[table] = (await lines(`select * from ${table}`)).sort();
    }
    return { schema, rows };
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`a copy of the migrated database (${dialect})`, () => {
    let migrated: FreshDatabase;
    let copy: FreshDatabase;
    before(async () => {
      // Migrated here, not copied from the run's template.
      migrated = await migrate(await freshDatabase(dialect));
      copy = await freshDatabase(dialect, templateOf(migrated));
    });
    after(async () => {
      await copy?.drop();
      await migrated?.drop();
    });

    test('has the same schema and rows as the database it was copied from', async () => {
      const [original, copied] = await Promise.all([contentsOf(migrated), contentsOf(copy)]);
      // What there is to lose: foreign keys, triggers and rows (the migrations' own, their history among them).
      const keys = { sqlite: 'references', postgres: 'FOREIGN KEY', mysql: '"foreign key' };
      assert.ok(
        original.schema.some((line) => line.includes(keys[dialect])),
        'the schema has foreign keys',
      );
      assert.ok(
        original.schema.some((line) => /trigger/i.test(line)),
        'the schema has triggers',
      );
      assert.ok(
        Object.values(original.rows).some((rows) => rows.length > 0),
        'the migrations wrote rows',
      );
      assert.deepEqual(copied.schema, original.schema);
      assert.deepEqual(copied.rows, original.rows);
    });
  });
}
