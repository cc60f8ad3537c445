// A fresh database for each test run, on each dialect: a temporary SQLite
// directory, or a new PostgreSQL or MariaDB database dropped afterwards.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { sql } from 'kysely';
import { type DatabaseOptions, openDatabase } from '../../src/db/connection.ts';
import type { Dialect } from '../../src/db/dialect.ts';

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

export async function freshDatabase(dialect: Dialect): Promise<FreshDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-test-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (dialect === 'sqlite') return { options: { dataDir }, drop: async () => removeDir() };
  const name = `leadbook_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'mysql') {
    await mysqlAdminQuery(`create database ${name} character set utf8mb4 collate utf8mb4_bin`);
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
    `create database ${name} template template0 encoding 'UTF8' lc_collate 'C.UTF-8' lc_ctype 'C.UTF-8'`,
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
