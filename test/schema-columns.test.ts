// The live database, migrated from the frozen migrations, must agree with the
// resource declarations: every field a column of the right type, length and
// nullability, and no column the declarations do not know.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/db/connection.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { resources } from '../src/resources/index.ts';
import type { Dialect } from '../src/db/dialect.ts';
import type { Field } from '../src/schema/resource.ts';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';

interface Column {
  type: string;
  length: number | null;
  notNull: boolean;
  primary: boolean;
}

/**
 * The column each field should have: the field kind's own column type for the
 * dialect (what the declarations say storage is), written the way the database
 * reports it back.
 */
function expected(field: Field, dialect: Dialect): Column {
  let declared = field.kind.column(field, dialect).replace(/ primary key.*$| generated .*$/, '');
  // InnoDB keys a foreign key only on a column of the referenced key's own type: MariaDB's baseline makes an integer
  // reference to a bigint id a bigint (the field kind does not say so yet).
  if (dialect === 'mysql' && field.references && declared === 'integer') declared = 'bigint';
  const varchar = /^varchar\((\d+)\)$/.exec(declared);
  const type =
    dialect === 'postgres'
      ? varchar
        ? 'character varying'
        : declared.replace(/^timestamp\(3\)/, 'timestamp')
      : declared;
  return {
    type,
    length: dialect === 'postgres' && varchar ? Number(varchar[1]) : null,
    // SQLite reports a rowid alias as nullable, though it can never hold NULL.
    notNull: field.primary ? dialect !== 'sqlite' : !field.nullable,
    primary: field.primary,
  };
}

async function liveColumns(database: Database, table: string): Promise<Map<string, Column>> {
  const columns = new Map<string, Column>();
  if (database.dialect === 'sqlite') {
    const rows = await sql<{
      name: string;
      type: string;
      notnull: bigint;
      pk: bigint;
    }>`select * from pragma_table_info(${table})`.execute(database.db);
    for (const r of rows.rows)
      columns.set(r.name, {
        type: r.type.toLowerCase(),
        length: null,
        notNull: r.notnull === 1n,
        primary: r.pk === 1n,
      });
    return columns;
  }
  if (database.dialect === 'mysql') {
    // MariaDB reports the type as it was written, with display widths (`bigint(20)`) and its names for `integer` and
    // `boolean`; an identity is an auto_increment key.
    const rows = await sql<{
      column_name: string;
      column_type: string;
      is_nullable: string;
      column_key: string;
      extra: string;
    }>`
      select column_name, column_type, is_nullable, column_key, extra from information_schema.columns
      where table_name = ${table} and table_schema = database()`.execute(database.db);
    const named: Record<string, string> = { 'int(11)': 'integer', 'tinyint(1)': 'boolean', 'bigint(20)': 'bigint' };
    for (const r of rows.rows) {
      const type = named[r.column_type] ?? r.column_type;
      columns.set(r.column_name, {
        type: /auto_increment/i.test(r.extra) ? `${type} auto_increment` : type,
        length: null,
        notNull: r.is_nullable === 'NO',
        primary: r.column_key === 'PRI',
      });
    }
    return columns;
  }
  const rows = await sql<{
    column_name: string;
    data_type: string;
    character_maximum_length: number | null;
    is_nullable: string;
    is_identity: string;
    pk: boolean;
  }>`
    select c.column_name, c.data_type, c.character_maximum_length, c.is_nullable, c.is_identity,
      exists (select 1 from information_schema.key_column_usage k join information_schema.table_constraints t using (constraint_name, table_name)
              where t.constraint_type = 'PRIMARY KEY' and k.table_name = c.table_name and k.column_name = c.column_name) as pk
    from information_schema.columns c where c.table_name = ${table} and c.table_schema = current_schema()`.execute(
    database.db,
  );
  for (const r of rows.rows) {
    columns.set(r.column_name, {
      type: r.data_type,
      length: r.character_maximum_length,
      notNull: r.is_nullable === 'NO',
      primary: r.pk,
    });
  }
  return columns;
}

for (const dialect of DIALECTS) {
  describe(`database columns match the declarations (${dialect})`, () => {
    let fresh: FreshDatabase;
    let database: Database;
    before(async () => {
      fresh = await freshDatabase(dialect);
      database = openDatabase(fresh.options);
      await migrateToLatest(database.db);
    });
    after(async () => {
      await database.close();
      await fresh.drop();
    });

    for (const resource of resources) {
      test(`${resource.table}: one column per field, typed as declared`, async () => {
        const live = await liveColumns(database, resource.table);
        // On PostgreSQL the search index reads a generated column (migration T0003), which no field declares; on
        // MariaDB too, and a field unique whatever its case is unique in a generated lower-cased column beside it.
        const generated = (name: string) =>
          (dialect !== 'sqlite' && name === 'search_text') ||
          (dialect === 'mysql' && name.endsWith('_lower') && resource.field(name.slice(0, -'_lower'.length)));
        const extra = [...live.keys()].filter((name) => !resource.field(name) && !generated(name));
        assert.deepEqual(extra, [], 'columns the declarations do not know');
        for (const field of resource.fields) {
          const column = live.get(field.name);
          assert.ok(column, `${resource.table}.${field.name} is missing`);
          assert.deepEqual(column, expected(field, dialect), `${resource.table}.${field.name}`);
        }
      });
    }

    test('ids are identities that never reuse a deleted id', async () => {
      if (dialect === 'postgres') {
        const rows = await sql<{ table_name: string; is_identity: string }>`
          select table_name, is_identity from information_schema.columns where column_name = 'id' and table_schema = current_schema()
            and table_name in ('contacts', 'inquiries', 'users')`.execute(database.db);
        assert.equal(rows.rows.length, 3);
        for (const r of rows.rows) assert.equal(r.is_identity, 'YES', r.table_name);
      } else if (dialect === 'mysql') {
        // InnoDB keeps a table's next auto_increment value across restarts (MariaDB 10.2 and later).
        const rows = await sql<{ table_name: string; extra: string; column_key: string }>`
          select table_name, extra, column_key from information_schema.columns where column_name = 'id'
            and table_schema = database() and table_name in ('contacts', 'inquiries', 'users')`.execute(database.db);
        assert.equal(rows.rows.length, 3);
        for (const r of rows.rows) assert.deepEqual([r.extra, r.column_key], ['auto_increment', 'PRI'], r.table_name);
      } else {
        const rows = await sql<{
          name: string;
          sql: string;
        }>`select name, sql from sqlite_master where type = 'table' and name in ('contacts', 'inquiries', 'users')`.execute(
          database.db,
        );
        assert.equal(rows.rows.length, 3);
        for (const r of rows.rows) assert.match(r.sql, /id integer primary key autoincrement/i, r.name);
      }
    });

    test('every sort the pages offer has an index on (field, id)', async () => {
      const indexed = new Set<string>();
      if (dialect === 'postgres') {
        const rows = await sql<{
          tablename: string;
          indexdef: string;
        }>`select tablename, indexdef from pg_indexes where schemaname = current_schema()`.execute(database.db);
        for (const r of rows.rows) {
          // A column named by a keyword (stages.position) is written quoted.
          const columns = /\((.*)\)$/
            .exec(r.indexdef)?.[1]
            ?.split(',')
            .map((c) =>
              c
                .trim()
                .split(' ')[0]!
                .replace(/^"(.*)"$/, '$1'),
            );
          if (columns?.length === 2 && columns[1] === 'id') indexed.add(`${r.tablename}.${columns[0]}`);
        }
      } else if (dialect === 'mysql') {
        const rows = await sql<{ table_name: string; index_name: string; columns: string }>`
          select table_name, index_name, group_concat(column_name order by seq_in_index) as columns
          from information_schema.statistics where table_schema = database()
          group by table_name, index_name`.execute(database.db);
        for (const r of rows.rows) {
          const columns = r.columns.split(',');
          if (columns.length === 2 && columns[1] === 'id') indexed.add(`${r.table_name}.${columns[0]}`);
        }
      } else {
        const rows = await sql<{ tbl: string; idx: string; col: string; seqno: bigint }>`
          select m.name as tbl, il.name as idx, ii.name as col, ii.seqno from sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii
          where m.type = 'table' order by il.name, ii.seqno`.execute(database.db);
        const byIndex = new Map<string, string[]>();
        for (const r of rows.rows)
          byIndex.set(`${r.tbl}.${r.idx}`, [...(byIndex.get(`${r.tbl}.${r.idx}`) ?? []), r.col]);
        for (const [key, cols] of byIndex)
          if (cols.length === 2 && cols[1] === 'id') indexed.add(`${key.split('.')[0]}.${cols[0]}`);
      }
      const sortable = resources.flatMap((r) => r.fields.filter((f) => f.sortable).map((f) => `${r.table}.${f.name}`));
      assert.ok(sortable.length >= 10, 'the declarations name sortable fields');
      for (const key of sortable)
        assert.ok(indexed.has(key), `${key} is sortable in the pages but has no (field, id) index`);
      assert.ok(indexed.has('contacts.created_at'), 'date filters have an index');
    });
  });
}
