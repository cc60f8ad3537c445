// leadbook backup FILE | restore FILE.
//
// A backup is a consistent snapshot taken while the app keeps serving:
// - SQLite: SQLite's online backup API (better-sqlite3's db.backup()), which
//   copies the pages of one read snapshot; a write by the app in the middle
//   makes it start over, so the copy never mixes two states. The result is a
//   plain SQLite file.
// - PostgreSQL: `pg_dump --format=custom`, which reads everything in one
//   repeatable-read transaction.
// - MariaDB: `mariadb-dump --single-transaction`, likewise one consistent
//   snapshot, as SQL text (binary values in hex).
// Both are written next to FILE first and renamed into place, so FILE is
// never half a backup. A restore checks that FILE is a Leadbook backup of the
// configured kind of database before it changes anything:
// - SQLite: refused while any process has the database open; the file is
//   swapped in atomically, and the previous one kept as leadbook.sqlite.before-restore.
// - PostgreSQL: `pg_restore --clean --if-exists --single-transaction`: all of it, or nothing.
// - MariaDB: the dump read by the `mariadb` client. MariaDB cannot undo a table's
//   drop or creation, so a dump is checked whole first (its own last line says it
//   was completed) and a restore that fails part-way must be run again.
//
// This file knows both dialects because a backup is a dialect's own tool.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import SQLite from 'better-sqlite3';
import { type Config, loadConfig } from '../config.ts';
import { openDatabase } from '../db/connection.ts';
import { asRecordTables } from '../db/tables.ts';
import { resources } from '../resources/index.ts';

const SQLITE_FILE = 'leadbook.sqlite';
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const PG_DUMP_MAGIC = Buffer.from('PGDMP', 'latin1');
/** How a mariadb-dump (or mysqldump) file begins: newer ones put a line that old clients refuse before their header. */
const MYSQL_DUMP_HEAD = /^(?:\/\*M!999999\\- enable the sandbox mode \*\/ ?\r?\n)?-- (?:MariaDB|MySQL) dump /;
/** Tables every Leadbook database has; a file without them is not ours. */
const COUNTED = resources.map((r) => r.table);
const LEADBOOK_TABLES = ['leadbook_migrations', ...COUNTED];

type Kind = 'sqlite' | 'postgres' | 'mysql' | 'other';

function kindOf(file: string): Kind {
  const head = Buffer.alloc(128);
  const fd = fs.openSync(file, 'r');
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return 'sqlite';
  if (head.subarray(0, PG_DUMP_MAGIC.length).equals(PG_DUMP_MAGIC)) return 'postgres';
  if (MYSQL_DUMP_HEAD.test(head.subarray(0, read).toString('latin1'))) return 'mysql';
  return 'other';
}

/** The server a DATABASE_URL names (the URL forms config.ts accepts). */
const serverOf = (databaseUrl: string): Kind => (/^(mysql|mariadb):/.test(databaseUrl) ? 'mysql' : 'postgres');
const SERVER_NAMES: Record<Kind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB', other: '' };

/** A file next to `file`, for writing before the rename that makes it appear whole. */
const besides = (file: string) =>
  path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);

/**
 * A dump written by `dump` next to FILE, checked by `check`, then made durable and renamed into place: FILE is never
 * half a backup, and a failed one leaves nothing behind.
 */
async function writeWhole(
  file: string,
  dump: (tmp: string) => Promise<unknown>,
  check: (tmp: string) => Promise<void>,
) {
  const tmp = besides(file);
  try {
    await dump(tmp);
    await check(tmp);
    fsyncFile(tmp);
    fs.renameSync(tmp, file);
    fsyncDir(path.dirname(file));
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
}

function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    /* not every file system lets a directory be synced */
  }
}

const plural = (n: number, word: string) => `${n} ${word}`;
const summary = (counts: Record<string, number>) => COUNTED.map((t) => plural(counts[t] ?? 0, t)).join(', ');

function readableFile(file: string): void {
  if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
  if (!fs.statSync(file).isFile()) throw new Error(`${file} is not a file`);
}

// ---------------------------------------------------------------- SQLite

const sqliteDatabasePath = (config: Config) => path.join(config.dataDir, SQLITE_FILE);

/**
 * Opens a file that claims to be an SQLite Leadbook database and checks it is one, whole. Answers its record counts.
 */
function checkSqliteBackup(file: string): Record<string, number> {
  let db: SQLite.Database;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`${file} is not a Leadbook backup: ${(error as Error).message}`);
  }
  try {
    const tables = new Set(
      (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const missing = LEADBOOK_TABLES.filter((t) => !tables.has(t));
    if (missing.length)
      throw new Error(
        `${file} is not a Leadbook backup: it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}`,
      );
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok')
      throw new Error(`${file} is damaged (SQLite quick_check: ${String(check)}); it cannot be restored`);
    return Object.fromEntries(
      COUNTED.map((t) => [t, Number((db.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n)]),
    );
  } finally {
    db.close();
  }
}

async function backupSqlite(config: Config, file: string): Promise<string> {
  const source = sqliteDatabasePath(config);
  if (!fs.existsSync(source))
    throw new Error(`there is no database at ${source} (set DATA_DIR, or DATABASE_URL for PostgreSQL)`);
  const tmp = besides(file);
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // After the first step, copy all that remains in one step: each step reads
    // one snapshot, and a write by the app between steps restarts the copy.
    await db.backup(tmp, { progress: ({ totalPages }) => Math.max(totalPages, 100) });
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  } finally {
    db.close();
  }
  try {
    // A backup is one self-contained file: no write-ahead log beside it.
    const copy = new SQLite(tmp);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    const counts = checkSqliteBackup(tmp);
    fsyncFile(tmp);
    fs.renameSync(tmp, file);
    fsyncDir(path.dirname(file));
    return `Backed up ${source} to ${file}: ${summary(counts)}.`;
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
}

function restoreSqlite(config: Config, file: string): string {
  const counts = checkSqliteBackup(file);
  const target = sqliteDatabasePath(config);
  fs.mkdirSync(config.dataDir, { recursive: true });
  let live: SQLite.Database | undefined;
  if (fs.existsSync(target)) {
    live = new SQLite(target, { fileMustExist: true });
    live.pragma('busy_timeout = 0');
    try {
      // Leaving WAL mode needs the database to itself: it fails while any
      // other connection, of any process, has it open. It also folds the WAL
      // into the file, so that nothing of the old database is left beside it.
      const mode = live.pragma('journal_mode = DELETE', { simple: true });
      if (mode !== 'delete')
        throw Object.assign(new Error(`journal mode stayed ${String(mode)}`), { code: 'SQLITE_BUSY' });
      // Held until the swap: an app starting meanwhile waits instead of reading.
      live.exec('begin exclusive');
    } catch (error) {
      live.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new Error(
          `the database ${target} is in use: stop every \`leadbook ` +
            `serve\` using DATA_DIR=${config.dataDir}, then restore`,
        );
      }
      throw error;
    }
  }
  const tmp = besides(target);
  try {
    fs.copyFileSync(file, tmp);
    fsyncFile(tmp);
    if (live) {
      // The previous database stays, under another name, until the next restore.
      fs.rmSync(`${target}.before-restore`, { force: true });
      fs.linkSync(target, `${target}.before-restore`);
    }
    fs.renameSync(tmp, target);
    fsyncDir(config.dataDir);
    for (const leftover of [`${target}-wal`, `${target}-shm`, `${target}-journal`])
      fs.rmSync(leftover, { force: true });
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  } finally {
    if (live) {
      try {
        live.exec('rollback');
      } catch {
        /* nothing to roll back */
      }
      live.close();
    }
  }
  const kept = live ? ` The previous database is kept as ${target}.before-restore.` : '';
  return `Restored ${file} into ${target}: ${summary(counts)}.${kept}`;
}

// ---------------------------------------------------------------- PostgreSQL

const INSTALL_CLIENT_TOOLS =
  "install the PostgreSQL client tools (the server's major version or newer), " +
  'e.g. apt-get install postgresql-client';

/**
 * The URL without its password, and the environment that passes the password instead (never on a command line, where
 * `ps` shows it).
 */
function pgConnection(databaseUrl: string): { url: string; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (url.password) env.PGPASSWORD = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), env };
}

function run(tool: string, args: string[], env: NodeJS.ProcessEnv, install = INSTALL_CLIENT_TOOLS): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new Error(`${tool} was not found: ${install}`));
      }
      reject(new Error(`${tool} failed: ${stderr.trim() || error.message}`));
    });
  });
}

/** Is the archive a pg_dump of a Leadbook database? (Its table of contents names our tables.) */
async function checkPgBackup(file: string, env: NodeJS.ProcessEnv): Promise<void> {
  const contents = await run('pg_restore', ['--list', file], env);
  const missing = LEADBOOK_TABLES.filter((t) => !new RegExp(`\\bTABLE \\S+ ${t}\\b`).test(contents));
  if (missing.length)
    throw new Error(
      `${file} is not a Leadbook backup: it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}`,
    );
}

/** The record counts of the configured server's database. */
async function serverCounts(config: Config): Promise<Record<string, number>> {
  const database = openDatabase(config);
  try {
    const counts: Record<string, number> = {};
    for (const t of COUNTED) {
      const row = await asRecordTables(database.db)
        .selectFrom(t)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      counts[t] = Number(row.n);
    }
    return counts;
  } finally {
    await database.close();
  }
}

async function backupPostgres(config: Config, file: string): Promise<string> {
  const { url, env } = pgConnection(config.databaseUrl!);
  await writeWhole(
    file,
    (tmp) => run('pg_dump', ['--format=custom', `--file=${tmp}`, `--dbname=${url}`], env),
    (tmp) => checkPgBackup(tmp, env),
  );
  return `Backed up ${url} to ${file} (pg_dump custom format, ${Math.ceil(fs.statSync(file).size / 1024)} KiB).`;
}

async function restorePostgres(config: Config, file: string): Promise<string> {
  const { url, env } = pgConnection(config.databaseUrl!);
  await checkPgBackup(file, env);
  // --single-transaction: a restore that fails part-way changes nothing.
  await run(
    'pg_restore',
    [
      '--clean',
      '--if-exists',
      '--no-owner',
      '--no-privileges',
      '--single-transaction',
      '--exit-on-error',
      `--dbname=${url}`,
      file,
    ],
    env,
  );
  return `Restored ${file} into ${url}: ${summary(await serverCounts(config))}.`;
}

// ---------------------------------------------------------------- MariaDB

const INSTALL_MARIADB_TOOLS =
  "install MariaDB's client tools (mariadb-dump and mariadb, the server's version or newer), " +
  'e.g. apt-get install mariadb-client';

/**
 * The client tools' arguments for the URL's server and database, and the environment that passes the password
 * (never on a command line, where `ps` shows it). TCP always, as mysql2 connects: the tools would take `localhost`
 * for the server's socket.
 */
function mysqlConnection(databaseUrl: string): { args: string[]; env: NodeJS.ProcessEnv; shown: string } {
  const url = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (url.password) env.MYSQL_PWD = decodeURIComponent(url.password);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database) throw new Error('DATABASE_URL names no database (mysql://user@host/DATABASE)');
  const args = ['--protocol=TCP', `--host=${url.hostname.replace(/^\[(.*)\]$/, '$1')}`, `--port=${url.port || 3306}`];
  if (url.username) args.push(`--user=${decodeURIComponent(url.username)}`);
  args.push('--default-character-set=utf8mb4');
  url.password = '';
  return { args: [...args, database], env, shown: url.toString() };
}

/**
 * Is the file a whole mariadb-dump of a Leadbook database? Its tables are named by its CREATE TABLE lines, and the
 * dump's last line says it was completed (a dump cut short lacks it). Read line by line: a dump can be large.
 */
async function checkMysqlBackup(file: string): Promise<void> {
  const tables = new Set<string>();
  let last = '';
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    const table = /^CREATE TABLE `([^`]+)`/.exec(line)?.[1];
    if (table) tables.add(table);
    if (line.trim()) last = line;
  }
  const missing = LEADBOOK_TABLES.filter((t) => !tables.has(t));
  if (missing.length)
    throw new Error(
      `${file} is not a Leadbook backup: it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}`,
    );
  if (!last.startsWith('-- Dump completed'))
    throw new Error(`${file} is not a whole mariadb-dump (it ends before the dump was completed); nothing was changed`);
}

async function backupMysql(config: Config, file: string): Promise<string> {
  const { args, env, shown } = mysqlConnection(config.databaseUrl!);
  await writeWhole(
    file,
    (tmp) =>
      run(
        'mariadb-dump',
        ['--single-transaction', '--hex-blob', '--skip-lock-tables', `--result-file=${tmp}`, ...args],
        env,
        INSTALL_MARIADB_TOOLS,
      ),
    checkMysqlBackup,
  );
  return `Backed up ${shown} to ${file} (mariadb-dump, ${Math.ceil(fs.statSync(file).size / 1024)} KiB).`;
}

async function restoreMysql(config: Config, file: string): Promise<string> {
  const { args, env, shown } = mysqlConnection(config.databaseUrl!);
  await checkMysqlBackup(file);
  // The dump drops each of its tables before making it again: tables of this database that it does not hold stay.
  const input = fs.openSync(file, 'r');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('mariadb', ['--batch', '--binary-mode', ...args], { env, stdio: [input, 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'ENOENT' ? new Error(`mariadb was not found: ${INSTALL_MARIADB_TOOLS}`) : error),
      );
      child.on('close', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`mariadb failed part-way (run the restore again): ${stderr.trim() || `exit ${code}`}`)),
      );
    });
  } finally {
    fs.closeSync(input);
  }
  return `Restored ${file} into ${shown}: ${summary(await serverCounts(config))}.`;
}

// ---------------------------------------------------------------- commands

/** Writes a backup of the configured database to `file`; answers what was done, in a sentence. */
export async function backupDatabase(config: Config, file: string): Promise<string> {
  const target = path.resolve(file);
  if (!fs.existsSync(path.dirname(target))) throw new Error(`the folder ${path.dirname(target)} does not exist`);
  if (!config.databaseUrl) return backupSqlite(config, target);
  return serverOf(config.databaseUrl) === 'mysql' ? backupMysql(config, target) : backupPostgres(config, target);
}

/** Replaces the configured database with the backup in `file`, after checking it is one; answers what was done. */
export async function restoreDatabase(config: Config, file: string): Promise<string> {
  readableFile(file);
  const kind = kindOf(file);
  if (kind === 'other')
    throw new Error(
      `${file} is not a Leadbook backup (neither an SQLite database, a pg_dump archive nor a mariadb-dump); ` +
        'nothing was changed',
    );
  const server = config.databaseUrl ? serverOf(config.databaseUrl) : 'sqlite';
  if (kind === server)
    return server === 'sqlite'
      ? restoreSqlite(config, file)
      : server === 'mysql'
        ? restoreMysql(config, file)
        : restorePostgres(config, file);
  if (kind === 'sqlite')
    throw new Error(
      `${file} is a backup of an SQLite database, but DATABASE_URL points ` +
        `at ${SERVER_NAMES[server]}; unset DATABASE_URL to restore it into ${config.dataDir}`,
    );
  const what =
    kind === 'postgres' ? 'a pg_dump archive of a PostgreSQL database' : 'a mariadb-dump of a MariaDB database';
  if (server === 'sqlite') throw new Error(`${file} is ${what}; set DATABASE_URL to the database to restore it into`);
  throw new Error(`${file} is ${what}, but DATABASE_URL points at ${SERVER_NAMES[server]}; nothing was changed`);
}

export async function backupCommand(file: string): Promise<void> {
  console.log(await backupDatabase(loadConfig(), file));
}

export async function restoreCommand(file: string): Promise<void> {
  console.log(await restoreDatabase(loadConfig(), file));
}
