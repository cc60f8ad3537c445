// Runs the PHP scripts beside this file, which build and read the original Laravel service's database
// with Laravel's own code, and makes a fresh database for them on SQLite or MariaDB per test run.
// PHP's answers are parsed with integers beyond 2^53 kept as BigInt, so ticket numbers and 64-bit
// ids compare exactly with what Leadbook reads.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isInteger, isSafeNumber, parse } from 'lossless-json';
import { createConnection } from 'mysql2/promise';

export type LaravelDriver = 'sqlite' | 'mysql';

/** Where fixture.php writes and inspect.php reads: a SQLite file, or a database on the MariaDB server. */
export interface LaravelTarget {
  driver: LaravelDriver;
  /** The SQLite file's path, or the MariaDB database's name. */
  database: string;
}

export interface LaravelUser {
  id: number;
  name: string;
  email: string;
  password: string;
  /** Plain-text two-factor data, or null for a user who never enabled it. */
  two_factor: { secret: string; recovery_codes: string[] } | null;
  /** False for a user who enabled two-factor but never confirmed it with a code. */
  confirmed: boolean;
  email_verified: boolean;
  remember_token: string | null;
}

export interface LaravelToken {
  id: number;
  /** `{id}|{secret}`, as Sanctum showed it once to the user. */
  plain: string;
  user_id: number;
  name: string;
  abilities: string[];
  expired: boolean;
}

/** fixture.php's answer: what was made, with the secrets in plain text. */
export interface LaravelManifest {
  app_key: string;
  timezone: string;
  seed: number;
  foreign: boolean;
  users: LaravelUser[];
  tokens: LaravelToken[];
  migrations: string[];
  counts: Record<string, number>;
}

export interface FixtureOptions {
  seed?: number;
  contacts?: number;
  inquiries?: number;
  /** `base64:...`; fixture.php makes one with Laravel's Encrypter::generateKey when absent. */
  appKey?: string;
  timezone?: string;
  /** Make contacts.budget a decimal(12,2), a type the takeover check should refuse. */
  foreign?: boolean;
}

export type TokenCheck =
  | { found: false }
  | {
      found: true;
      id: number;
      tokenable_type: string;
      tokenable_id: number;
      abilities: string[];
      expired: boolean;
      valid: boolean;
    };

/** The MariaDB server the tests use (TEST_MARIADB_URL, else root on 127.0.0.1:3306). */
export const MARIADB_URL = new URL(process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306');

const SCRIPTS = import.meta.dirname;
const server = {
  host: MARIADB_URL.hostname,
  port: Number(MARIADB_URL.port || 3306),
  user: decodeURIComponent(MARIADB_URL.username) || 'root',
  password: decodeURIComponent(MARIADB_URL.password),
};

function targetFlags(target: LaravelTarget): string[] {
  const flags = [`--driver=${target.driver}`, `--database=${target.database}`];
  if (target.driver === 'mysql') {
    flags.push(`--db-host=${server.host}`, `--db-port=${server.port}`, `--db-user=${server.user}`);
    flags.push(`--db-password=${server.password}`);
  }
  return flags;
}

/** Integers PHP printed beyond 2^53 become BigInt; every other number stays a number. */
function parsePhpJson(text: string): unknown {
  return parse(text, null, (value) => {
    if (!isInteger(value)) return Number.parseFloat(value);
    return isSafeNumber(value) ? Number(value) : BigInt(value);
  });
}

/** Runs `php SCRIPT ARGS` and parses its one JSON document; a failing script rejects with its stderr. */
export function runPhp(script: 'fixture.php' | 'inspect.php', args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      'php',
      [path.join(SCRIPTS, script), ...args],
      { maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`php ${script} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(parsePhpJson(stdout));
      },
    );
  });
}

/** Builds the original database in `target` (which must be empty) and returns its manifest. */
export async function buildFixture(target: LaravelTarget, options: FixtureOptions = {}): Promise<LaravelManifest> {
  const args = targetFlags(target);
  if (options.seed !== undefined) args.push(`--seed=${options.seed}`);
  if (options.contacts !== undefined) args.push(`--contacts=${options.contacts}`);
  if (options.inquiries !== undefined) args.push(`--inquiries=${options.inquiries}`);
  if (options.appKey !== undefined) args.push(`--app-key=${options.appKey}`);
  if (options.timezone !== undefined) args.push(`--timezone=${options.timezone}`);
  if (options.foreign) args.push('--foreign');
  return (await runPhp('fixture.php', args)) as LaravelManifest;
}

/** PHP's reading of a built database, with the app key and timezone its manifest gives. */
export function phpReader(target: LaravelTarget, manifest: Pick<LaravelManifest, 'app_key' | 'timezone'>) {
  const inspect = (command: string, flags: Record<string, string>) =>
    runPhp('inspect.php', [
      command,
      ...targetFlags(target),
      `--app-key=${manifest.app_key}`,
      `--timezone=${manifest.timezone}`,
      ...Object.entries(flags).map(([name, value]) => `--${name}=${value}`),
    ]);
  return {
    /** Every row in id order as the query builder gives it, or through the model's casts with `eloquent`. */
    rows: async (table: string, eloquent = false): Promise<Record<string, unknown>[]> =>
      (await runPhp('inspect.php', [
        'rows',
        ...targetFlags(target),
        `--timezone=${manifest.timezone}`,
        `--table=${table}`,
        ...(eloquent ? ['--eloquent'] : []),
      ])) as Record<string, unknown>[],
    hashCheck: async (email: string, password: string) =>
      ((await inspect('hash-check', { email, password })) as { valid: boolean }).valid,
    decryptSecret: async (email: string) =>
      ((await inspect('decrypt-secret', { email })) as { secret: string | null }).secret,
    recoveryCodes: async (email: string) => ((await inspect('recovery-codes', { email })) as { codes: string[] }).codes,
    recoveryCheck: async (email: string, code: string) =>
      ((await inspect('recovery-check', { email, code })) as { valid: boolean }).valid,
    tokenCheck: async (token: string) => (await inspect('token-check', { token })) as TokenCheck,
  };
}

export type PhpReader = ReturnType<typeof phpReader>;

/** A mysql2 connection to the MariaDB server (to `database` when given), with 64-bit integers as exact strings. */
export function mariadbConnection(database?: string) {
  return createConnection({
    ...server,
    database,
    connectTimeout: 2000,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
}

/** Whether the MariaDB server answers a query; tests skip their MariaDB part when it does not. */
export async function mariadbAnswers(): Promise<boolean> {
  try {
    const connection = await mariadbConnection();
    try {
      await connection.query('select 1');
      return true;
    } finally {
      await connection.end();
    }
  } catch {
    return false;
  }
}

export interface FreshLaravelDatabase {
  target: LaravelTarget;
  /** DATABASE_URL for Leadbook: the MariaDB database, or null for SQLite (whose file is `target.database`). */
  databaseUrl: string | null;
  drop(): Promise<void>;
}

/**
 * An empty place for one fixture: a SQLite file in a new temporary directory, or a new MariaDB database
 * `leadbook_laravel_<pid>_<random>` in Laravel's default charset and collation, dropped by `drop()`.
 */
export async function freshLaravelDatabase(driver: LaravelDriver): Promise<FreshLaravelDatabase> {
  if (driver === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-laravel-'));
    return {
      target: { driver, database: path.join(dir, 'database.sqlite') },
      databaseUrl: null,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `leadbook_laravel_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const connection = await mariadbConnection();
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };
  await admin(`create database \`${name}\` character set utf8mb4 collate utf8mb4_unicode_ci`);
  const url = new URL(MARIADB_URL);
  url.pathname = `/${name}`;
  return {
    target: { driver, database: name },
    databaseUrl: url.toString(),
    drop: () => admin(`drop database if exists \`${name}\``),
  };
}
