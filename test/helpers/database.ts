// A fresh database for each test run, on each dialect: a temporary SQLite
// directory, or a new PostgreSQL or MariaDB database dropped afterwards. A
// migrated one is a copy of the run's template (test/helpers/templates.ts)
// when the runner made one: on MariaDB the migrations took 1.5 s on an idle
// machine and 10-16 s under CI's load, a copy 0.5 s and 2.3 s.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { sql } from 'kysely';
import { type DatabaseOptions, openDatabase } from '../../src/db/connection.ts';
import type { Dialect } from '../../src/db/dialect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/** LEADBOOK_TEST_DIALECTS=sqlite runs one dialect only (e.g. on a laptop without PostgreSQL or MariaDB). */
export const DIALECTS: Dialect[] = (process.env.LEADBOOK_TEST_DIALECTS ?? 'sqlite,postgres,mysql')
  .split(',')
  .map((d) => d.trim())
  .filter((d): d is Dialect => d === 'sqlite' || d === 'postgres' || d === 'mysql');

/** An admin connection to the PostgreSQL server; tests create their databases through it. */
export const PG_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** An admin connection to the MariaDB (or MySQL) server. */
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

async function mysqlAdminQuery(text: string): Promise<void> {
  const connection = await mysql.createConnection(MYSQL_ADMIN_URL);
  try {
    await connection.query(text);
  } finally {
    await connection.end();
  }
}

export interface FreshDatabase {
  options: DatabaseOptions;
  drop(): Promise<void>;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** An empty database (a SQLite folder without its file); or, given a template, a copy of that database. */
export async function freshDatabase(dialect: Dialect, template?: string): Promise<FreshDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-test-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (dialect === 'sqlite') {
    if (template) fs.copyFileSync(template, path.join(dataDir, SQLITE_FILE));
    return { options: { dataDir }, drop: async () => removeDir() };
  }
  const name = `leadbook_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'mysql') {
    await mysqlAdminQuery(`create database ${name} character set utf8mb4 collate utf8mb4_bin`);
    if (template) await copyMariadbSchema(template, name);
    const url = new URL(MYSQL_ADMIN_URL);
    url.pathname = `/${name}`;
    return {
      options: { dataDir, databaseUrl: url.toString() },
      drop: async () => {
        removeDir();
        await mysqlAdminQuery(`drop database if exists ${name}`);
      },
    };
  }
  await adminQuery(
    template
      ? `create database ${name} template ${template}`
      : `create database ${name} template template0 encoding 'UTF8' lc_collate 'C.UTF-8' lc_ctype 'C.UTF-8'`,
  );
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    options: { dataDir, databaseUrl: url.toString() },
    drop: async () => {
      removeDir();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** The app's SQLite file in its DATA_DIR. */
const SQLITE_FILE = 'leadbook.sqlite';

/** The run's migrated databases, by dialect: a SQLite file or a database's name (test/helpers/templates.ts). */
const TEMPLATES: Partial<Record<Dialect, string>> = JSON.parse(process.env.LEADBOOK_TEST_TEMPLATES ?? '{}');

/** A migrated database: a copy of the run's template where there is one, else migrated here. */
export async function migratedDatabase(dialect: Dialect): Promise<FreshDatabase> {
  const template = TEMPLATES[dialect];
  return template ? freshDatabase(dialect, template) : migrate(await freshDatabase(dialect));
}

/** Runs the migrations on a database; answers it. */
export async function migrate(fresh: FreshDatabase): Promise<FreshDatabase> {
  const database = openDatabase(fresh.options);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  return fresh;
}

/** Where a database is, as a template for freshDatabase: its SQLite file, or its name. */
export const templateOf = (fresh: FreshDatabase) =>
  fresh.options.databaseUrl
    ? new URL(fresh.options.databaseUrl).pathname.slice(1)
    : path.join(fresh.options.dataDir, SQLITE_FILE);

/**
 * MariaDB has no CREATE DATABASE … TEMPLATE: each table is made as SHOW CREATE TABLE gives it (its indexes, foreign
 * keys, checks, generated columns and next AUTO_INCREMENT value), its rows copied, and its triggers made in their order
 * with the SQL mode they were made with. A view, routine or event would not be copied: there is none, and a template
 * holding one is refused.
 */
async function copyMariadbSchema(template: string, name: string): Promise<void> {
  const connection = await mysql.createConnection(MYSQL_ADMIN_URL);
  type Rows = Record<string, string>[];
  const rows = async (text: string, values: unknown[] = []) => (await connection.query(text, values))[0] as Rows;
  try {
    const others = await rows(
      `select 'view' as kind from information_schema.views where table_schema = ?
       union all select 'routine' from information_schema.routines where routine_schema = ?
       union all select 'event' from information_schema.events where event_schema = ?`,
      [template, template, template],
    );
    if (others.length > 0) throw new Error(`template ${template} holds a ${others[0]!.kind}, which is not copied`);
    await connection.query(`use ${name}`);
    await connection.query('set foreign_key_checks = 0');
    const tables = await rows(
      `select table_name as t from information_schema.tables where table_schema = ? and table_type = 'BASE TABLE'`,
      [template],
    );
    for (const { t } of tables) {
      const [made] = await rows(`show create table ${template}.\`${t}\``);
      await connection.query(made!['Create Table']!);
      const columns = await rows(
        `select column_name as c from information_schema.columns
         where table_schema = ? and table_name = ? and is_generated = 'NEVER' order by ordinal_position`,
        [template, t],
      );
      const list = columns.map(({ c }) => `\`${c}\``).join(', ');
      await connection.query(`insert into \`${t}\` (${list}) select ${list} from ${template}.\`${t}\``);
    }
    const triggers = await rows(
      `select trigger_name as t from information_schema.triggers where trigger_schema = ?
       order by event_object_table, action_timing, event_manipulation, action_order`,
      [template],
    );
    for (const { t } of triggers) {
      const [made] = await rows(`show create trigger ${template}.\`${t}\``);
      await connection.query('set session sql_mode = ?', [made!.sql_mode]);
      await connection.query(made!['SQL Original Statement']!);
    }
  } finally {
    await connection.end();
  }
}

/**
 * The indexes and triggers, as the database describes them, and on SQLite the settings of its FTS5 indexes (a bulk load
 * builds some again and changes some for a while: src/db/bulk-load.ts).
 */
export async function indexesAndTriggers(fresh: FreshDatabase): Promise<string[]> {
  const database = openDatabase(fresh.options);
  const query = {
    sqlite: `select type || ' ' || name || ': ' || coalesce(sql, '') as d from sqlite_master
      where type in ('index', 'trigger') order by name`,
    postgres: `select indexname || ': ' || indexdef as d from pg_indexes where schemaname = current_schema()
      union all select tgname || ' on ' || tgrelid::regclass from pg_trigger where not tgisinternal order by 1`,
    mysql: `select concat(table_name, '.', index_name, ' ', seq_in_index, ' ', column_name) as d
      from information_schema.statistics where table_schema = database() order by 1`,
  }[database.dialect];
  const described = async (text: string) =>
    (await sql.raw<{ d: string }>(text).execute(database.db)).rows.map((r) => r.d);
  try {
    const found = await described(query);
    if (database.dialect !== 'sqlite') return found;
    // And the settings of each FTS5 index (a load changes one for its own writes): hashsize as FTS5 reads it.
    const fts5 = await described(
      `select name as d from sqlite_master where sql like 'create virtual table % using fts5%'`,
    );
    for (const name of fts5.sort()) {
      const settings = `"${name}_config"`;
      found.push(
        ...(await described(`select '${name}: ' || k || ' = ' || v as d from ${settings} where k <> 'hashsize'
          union all select '${name}: hashsize = ' || coalesce((select v from ${settings} where k = 'hashsize'), ${1 << 20})
          order by 1`)),
      );
    }
    return found;
  } finally {
    await database.close();
  }
}
