// What the benches that drive the app as a server share (bench/run.ts, bench/pipeline.ts, bench/growth.ts): a fresh database to
// seed (a directory under bench/.data, or a new PostgreSQL or MariaDB database), seeding it and adding accounts
// through the `leadbook` command, and small HTTP and logging helpers.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { TIME_SPAN } from '../src/cli/fake-data.ts';
import type { Dialect } from '../src/db/dialect.ts';
import { leadbook, ROOT, stopAll } from './processes.ts';
import { PER_PAGE } from './scenarios.ts';

export const PG_ADMIN = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_ADMIN = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const DATA_ROOT = path.join(ROOT, 'bench/.data');

export const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ databases

export async function pgAdmin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export async function pgQuery<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Runs statements on the MariaDB database at `url`, one after the other, and answers the last one's rows. */
export async function mysqlQuery<T extends Record<string, unknown>>(url: string, ...texts: string[]): Promise<T[]> {
  const connection = await mysql.createConnection({ uri: url.replace(/^mariadb:/, 'mysql:'), supportBigNumbers: true });
  try {
    let rows: unknown = [];
    for (const text of texts) [rows] = await connection.query(text);
    return Array.isArray(rows) ? (rows as T[]) : [];
  } finally {
    await connection.end();
  }
}

export interface Place {
  dialect: Dialect;
  env: Record<string, string>;
  url?: string;
  drop(): Promise<void>;
}

/** Databases not yet dropped, for a Ctrl-C in the middle. */
const undropped = new Set<() => Promise<void>>();

/** Drops every database not yet dropped (on the way out, or on Ctrl-C). */
export const dropAll = () => Promise.allSettled([...undropped].map((drop) => drop()));

/** A fresh, empty database: a directory under bench/.data, or a new PostgreSQL or MariaDB database. */
export async function freshPlace(dialect: Dialect, name: string, appKey: string): Promise<Place> {
  const dataDir = path.join(DATA_ROOT, name);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const removeDir = async () => fs.rmSync(dataDir, { recursive: true, force: true });
  const env = { DATA_DIR: dataDir, APP_KEY: appKey, LOG_LEVEL: 'warn', DATABASE_URL: '' };
  if (dialect === 'sqlite') {
    const drop = async () => {
      undropped.delete(drop);
      await removeDir();
    };
    undropped.add(drop);
    return { dialect, env, drop };
  }
  const db = name.replace(/[^a-z0-9_]/g, '_');
  if (dialect === 'mysql') {
    // The collation the app's connection speaks: text compares and sorts byte by byte, as on the other two.
    await mysqlQuery(
      MYSQL_ADMIN,
      `drop database if exists ${db}`,
      `create database ${db} character set utf8mb4 collate utf8mb4_bin`,
    );
    const url = new URL(MYSQL_ADMIN);
    url.pathname = `/${db}`;
    const drop = async () => {
      undropped.delete(drop);
      await removeDir();
      await mysqlQuery(MYSQL_ADMIN, `drop database if exists ${db}`);
    };
    undropped.add(drop);
    return { dialect, env: { ...env, DATABASE_URL: url.toString() }, url: url.toString(), drop };
  }
  await pgAdmin(`drop database if exists ${db} with (force)`);
  await pgAdmin(`create database ${db}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${db}`;
  const drop = async () => {
    undropped.delete(drop);
    await removeDir();
    await pgAdmin(`drop database if exists ${db} with (force)`);
  };
  undropped.add(drop);
  return { dialect, env: { ...env, DATABASE_URL: url.toString() }, url: url.toString(), drop };
}

/** Rows of a read-only query on the place's database (PostgreSQL, MariaDB, or the SQLite file opened read-only). */
export async function readRows<T extends Record<string, unknown>>(place: Place, text: string): Promise<T[]> {
  if (place.dialect === 'postgres') return pgQuery<T>(place.url!, text);
  if (place.dialect === 'mysql') return mysqlQuery<T>(place.url!, text);
  const db = new SQLite(path.join(place.env.DATA_DIR!, 'leadbook.sqlite'), { readonly: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

/** The one number a query answers, in a column named `n` (`select count(*) as n …`). */
export const readCount = async (place: Place, text: string) =>
  Number((await readRows<{ n: unknown }>(place, text))[0]!.n);

export interface Seeded {
  rows: number;
  seconds: number;
  /** Rows per second, as `leadbook seed` reports it. */
  rate: number;
  /** What `leadbook seed` printed. */
  said: string;
}

/**
 * Seeds the place with `leadbook seed` (its progress bar shown; `pipeline`: inquiries linked to contacts, spread over
 * the stages, assigned to 8 agents); on PostgreSQL then gathers planner statistics and the visibility map, as
 * autovacuum would a minute after a bulk load, and on MariaDB the index statistics of the tables it filled, as
 * InnoDB's own recalculation would in the background.
 */
export async function seedPlace(
  place: Place,
  counts: { contacts: number; inquiries: number; seed: number; pipeline?: boolean },
) {
  const seeded = await leadbook(
    [
      'seed',
      '--contacts',
      String(counts.contacts),
      '--inquiries',
      String(counts.inquiries),
      '--seed',
      String(counts.seed),
      ...(counts.pipeline ? ['--pipeline'] : []),
    ],
    place.env,
    { showProgress: true },
  );
  if (seeded.code !== 0)
    throw new Error(
      `leadbook seed ${seeded.signal ? `was killed (${seeded.signal})` : `exited with ${seeded.code}`} after ` +
        `${seeded.seconds.toFixed(0)} s:\n${seeded.stderr.split('\n').slice(-5).join('\n')}`,
    );
  const rate = Number(/([\d,]+) rows\/s/.exec(seeded.stdout)?.[1]?.replaceAll(',', '') ?? NaN);
  if (place.dialect === 'postgres') await pgQuery(place.url!, 'vacuum (analyze)');
  if (place.dialect === 'mysql') await mysqlQuery(place.url!, 'analyze table contacts, inquiries');
  return {
    rows: counts.contacts + counts.inquiries,
    seconds: seeded.seconds,
    rate,
    said: seeded.stdout.trim(),
  } satisfies Seeded;
}

export interface Account {
  email: string;
  password: string;
  name: string;
  admin?: boolean;
}

/** Creates the accounts with `leadbook user:create` (the password on standard input), all at once. */
export async function createAccounts(place: Place, accounts: readonly Account[]): Promise<void> {
  const made = await Promise.all(
    accounts.map((a) =>
      leadbook(['user:create', '--email', a.email, ...(a.admin ? ['--admin'] : []), '--name', a.name], place.env, {
        input: `${a.password}\n`,
      }),
    ),
  );
  for (const m of made) if (m.code !== 0) throw new Error(`leadbook user:create failed:\n${m.stderr}`);
}

// ------------------------------------------------------------------ HTTP

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON answer, its fields checked at run time
export type Json = any;

export interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

/** A request with a JSON body (when given), its answer parsed as JSON when it is JSON, else kept as text. */
export async function request(
  method: string,
  url: string,
  options: { json?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

/** An answer as an error message says it: its status and the start of its body. */
export const brief = (a: Answer) =>
  `${a.status} ${(typeof a.body === 'string' ? a.body : JSON.stringify(a.body)).slice(0, 300)}`;

/** Throws, naming `what` and the answer, unless the answer's status is (one of) `status`. */
export function expectStatus(a: Answer, status: number | number[], what: string): void {
  if (![status].flat().includes(a.status)) throw new Error(`${what} answered ${brief(a)}`);
}

export const getJson = (url: string, token?: string) => request('GET', url, { token });
export const postJson = (url: string, json: unknown) => request('POST', url, { json });

/** On Ctrl-C or SIGTERM: stops the servers, then (once they let go of their connections) drops the databases. */
export function cleanUpOnSignal(): void {
  const onSignal = () => {
    stopAll();
    void new Promise((r) => setTimeout(r, 1000)).then(dropAll).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/** What the scenarios need to know about the data in the app at `appUrl`, read through its API. */
export async function dataParams(appUrl: string, token: string) {
  const first = await getJson(`${appUrl}/api/v1/contacts?sort=id&per_page=1`, token);
  const last = await getJson(`${appUrl}/api/v1/contacts?per_page=1`, token);
  if (first.status !== 200 || last.status !== 200)
    throw new Error(
      `listing contacts answered ${first.status}/${last.status}: ${JSON.stringify(first.body).slice(0, 300)}`,
    );
  const total = Number(last.body.meta.total);
  const idMin = Number(first.body.data[0].id);
  const idMax = Number(last.body.data[0].id);
  const deepPage = Math.floor((0.9 * total) / PER_PAGE) + 1;
  const before = await getJson(`${appUrl}/api/v1/contacts?page=${deepPage - 1}&per_page=${PER_PAGE}`, token);
  const cursorAfterId = Number(before.body.data.at(-1).id);
  const sampleId = idMin + Math.floor((idMax - idMin) / 2);
  const sample = await getJson(`${appUrl}/api/v1/contacts/${sampleId}`, token);
  const month = new Date(TIME_SPAN.start + (TIME_SPAN.end - TIME_SPAN.start) / 2);
  const monthStart = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1));
  const monthEnd = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
  return {
    total,
    sampleId,
    deepPage,
    cursorAfterId,
    idMin,
    idMax,
    city: String(sample.body.data.city),
    monthStart: monthStart.toISOString(),
    monthEnd: monthEnd.toISOString(),
  };
}
