// Opens the database named by the configuration. This folder is the only place
// that knows which dialect is in use; everything else asks `Database`.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type Driver,
  Kysely,
  type LogEvent,
  type DialectAdapter,
  MysqlAdapter,
  MysqlDialect,
  type MysqlPool,
  MysqlQueryCompiler,
  type KyselyPlugin,
  type OnConflictNode,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
  PostgresDialect,
  type QueryCompiler,
  type ReferenceNode,
  type SelectQueryNode,
  SqliteDialect,
  type SqliteDatabase,
  SqliteQueryCompiler,
  type SqliteStatement,
  sql,
} from 'kysely';
import { createRequire } from 'node:module';
import type mysql from 'mysql2';
import type pg from 'pg';
import type { Dialect } from './dialect.ts';
import type { DB, Executor } from './tables.ts';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Set to false only by the bench that measures what the change log costs (bench/change-log.ts): writes then keep
   * no entries. Nothing else turns it off.
   */
  logChanges?: boolean;
  /** Where phone numbers written without a country code are (ISO 3166 alpha-2), for matching contacts by phone. */
  defaultCountry?: string;
  /** Told each statement's time in milliseconds, failed ones too: the metrics of the app built on it (`timeQuery`). */
  onQuery?: (ms: number) => void;
  /** The connection pool's use now, where there is one (PostgreSQL, MariaDB; SQLite has one connection). */
  poolUse?(): PoolUse;
  /** How webhook endpoints are reached and their secrets kept (set by the app: the settings and the app key). */
  webhooks?: WebhookSettings;
}

export interface WebhookSettings {
  /** WEBHOOKS_ALLOW_PRIVATE: loopback and private addresses may receive webhooks (tests, an intranet). */
  allowPrivate: boolean;
  /** WEBHOOKS_DNS_SERVERS: the resolvers that name endpoints' hosts, instead of the system's. */
  dnsServers?: readonly string[];
  /** Encrypts a secret to keep (with the app key), and decrypts it (null: not made with this key). */
  seal(plain: string): string;
  open(sealed: string): string | null;
}

export interface PoolUse {
  max: number;
  /** Connections open, in use or idle. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/**
 * Kysely's log hook: hands each statement's time to `Database.onQuery`. A streamed read is left out: its time is
 * its reader's pace (an export of a million rows), not the database's.
 */
function timeQuery(database: Database | undefined, event: LogEvent): void {
  if (event.level === 'query' && event.isStream) return;
  database?.onQuery?.(event.queryDurationMillis);
}

export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  defaultCountry?: string;
  /**
   * APP_TIMEZONE (MariaDB, after a takeover): instants are stored as the wall-clock time of this zone, as the Laravel
   * app stored them; unset or UTC, as UTC.
   */
  appTimezone?: string;
}

/** Connections each process's pool may open (the metrics show how many are in use). */
const POOL_MAX = 10;

// int8 arrives from pg as a digit string by default; keep it so (BigInt later),
// never as a lossy JS number.
function openPostgres(url: string): Database {
  // Loaded only for PostgreSQL, so that an SQLite process does not carry it.
  const { Client, Pool } = createRequire(import.meta.url)('pg') as typeof pg;
  // A database that does not answer a new connection within 2 s counts as away (503). A burst of requests waits up
  // to 10 s for one of the pool's 10 connections instead (arrivals taking turns on one rule's row queue there).
  class QuickClient extends Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: 2000 });
    }
  }
  // Keep-alive probes find connections that a network cut left half-open.
  const pool = new Pool({
    connectionString: url,
    max: POOL_MAX,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    Client: QuickClient,
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  // Nor one in use (between the statements of a transaction): its query fails (503), and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  let database: Database | undefined;
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: (event) => timeQuery(database, event) });
  database = {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
    poolUse: () => ({ max: POOL_MAX, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
  return database;
}

/** An instant as the app writes it (`Date#toISOString`), which MariaDB refuses for a DATETIME column. */
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)Z$/;

/**
 * How instants are spelled for MariaDB, which reads `2026-01-02 03:04:05.678` as a DATETIME and refuses the ISO form
 * with its `T` and `Z`: UTC, or the wall-clock time of the Laravel app's APP_TIMEZONE, as it stored them.
 */
interface Instants {
  /** An instant (`…Z`, or a Date) as the database keeps it. */
  write(value: unknown): unknown;
  /** The database's `YYYY-MM-DD HH:MM:SS[.fff]` as the instant it means. */
  read(text: string): Date;
}

function instantsIn(zone: string | undefined): Instants {
  if (!zone || zone === 'UTC') {
    return {
      // A text field holding exactly such an instant is stored in the same spelling (see db/README.md).
      write: (value) =>
        value instanceof Date
          ? value.toISOString().replace(ISO_INSTANT, '$1 $2')
          : typeof value === 'string' && ISO_INSTANT.test(value)
            ? value.replace(ISO_INSTANT, '$1 $2')
            : value,
      read: (text) => new Date(`${text.replace(' ', 'T')}Z`),
    };
  }
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
  });
  /** The zone's wall-clock time at an instant, as MariaDB spells it. */
  const wallClock = (date: Date) => {
    const p = Object.fromEntries(parts.formatToParts(date).map((x) => [x.type, x.value]));
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}.${p.fractionalSecond}`;
  };
  const offsetAt = (ms: number) => Date.parse(`${wallClock(new Date(ms)).replace(' ', 'T')}Z`) - ms;
  return {
    write: (value) => {
      if (value instanceof Date) return wallClock(value);
      return typeof value === 'string' && ISO_INSTANT.test(value) ? wallClock(new Date(value)) : value;
    },
    // The wall-clock time read as UTC, moved by the zone's offset before or after a change of the clock near it: of
    // the two, the one that shows this time (in the hour a clock turned back shows twice, the later, as PHP reads it);
    // in the hour a clock skipped, the offset from before.
    read: (text) => {
      const asUtc = Date.parse(`${text.replace(' ', 'T')}Z`);
      const candidates = [asUtc - offsetAt(asUtc - 43_200_000), asUtc - offsetAt(asUtc + 43_200_000)];
      const shown = candidates.filter((t) => wallClock(new Date(t)).slice(0, 19) === text.slice(0, 19));
      return new Date(Math.max(...(shown.length ? shown : candidates.slice(0, 1))));
    },
  };
}

/**
 * `on conflict` spelled the MySQL way, so that an upsert is written once for every database: `do update set` becomes
 * `on duplicate key update` with `excluded.x` as `values(x)`, and `do nothing` assigns a key column to itself. The
 * conflict target is whichever unique key the row meets (each table here has the one the other dialects name).
 */
class MysqlUpsertCompiler extends MysqlQueryCompiler {
  protected override visitOnConflict(node: OnConflictNode): void {
    if (node.updateWhere || (!node.doNothing && !node.updates?.length))
      throw new Error('MariaDB has no conditional upsert');
    this.append('on duplicate key update ');
    if (node.updates?.length) {
      this.compileList(node.updates);
      return;
    }
    const column = node.columns?.[0];
    if (!column) throw new Error('an upsert that does nothing names its key column');
    this.visitNode(column);
    this.append(' = ');
    this.visitNode(column);
  }

  protected override visitReference(node: ReferenceNode): void {
    const table = node.table?.table.identifier.name;
    if (table !== 'excluded') {
      super.visitReference(node);
      return;
    }
    this.append('values(');
    this.visitNode(node.column);
    this.append(')');
  }
}

/**
 * The tables of Leadbook's own that a Laravel database has under the same names and another shape: on MariaDB they
 * are called `leadbook_…` (the baseline), so that Leadbook can move into the original service's database beside them.
 * Code names them as on the other databases; this plugin renames them in every query.
 */
export const MYSQL_RENAMED_TABLES: Readonly<Record<string, string>> = {
  sessions: 'leadbook_sessions',
  personal_access_tokens: 'leadbook_personal_access_tokens',
  password_resets: 'leadbook_password_resets',
};

class TableRenamer extends OperationNodeTransformer {
  protected override transformTable(node: TableNode): TableNode {
    const renamed = MYSQL_RENAMED_TABLES[node.table.identifier.name];
    if (!renamed || node.table.schema) return super.transformTable(node);
    return TableNode.create(renamed);
  }
}

class RenameTablesPlugin implements KyselyPlugin {
  readonly #renamer = new TableRenamer();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#renamer.transformNode(args.node);
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** MariaDB answers INSERT and DELETE … RETURNING (10.5 and later), which Kysely assumes MySQL cannot. */
class ReturningMysqlAdapter extends MysqlAdapter {
  override get supportsReturning(): boolean {
    return true;
  }
}

class MariadbDialect extends MysqlDialect {
  override createQueryCompiler(): QueryCompiler {
    return new MysqlUpsertCompiler();
  }

  override createAdapter(): DialectAdapter {
    return new ReturningMysqlAdapter();
  }
}

/** The queues mysql2's pool keeps: it has no public count of its connections, so the metrics read these. */
type MysqlPoolQueues = Record<'_allConnections' | '_freeConnections' | '_connectionQueue', { length: number }>;

function mysqlPoolUse(pool: mysql.Pool): PoolUse {
  const queues = pool as unknown as MysqlPoolQueues;
  return {
    max: POOL_MAX,
    total: queues._allConnections.length,
    idle: queues._freeConnections.length,
    waiting: queues._connectionQueue.length,
  };
}

/**
 * MariaDB or MySQL through mysql2. Connections speak UTC and utf8mb4; 64-bit integers arrive as digit strings (as
 * from pg), DATETIME as a Date read as UTC, and `boolean` (tinyint(1)) as a boolean.
 */
function openMysql(url: string, zone?: string): Database {
  const instants = instantsIn(zone);
  const { createPool } = createRequire(import.meta.url)('mysql2') as typeof mysql;
  const pool = createPool({
    uri: url.replace(/^mariadb:/, 'mysql:'),
    connectionLimit: POOL_MAX,
    connectTimeout: 2000,
    enableKeepAlive: true,
    charset: 'UTF8MB4_BIN',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: true,
    typeCast: (field, next) => {
      if (field.type === 'DATETIME' || field.type === 'TIMESTAMP') {
        const text = field.string();
        return text === null ? null : instants.read(text);
      }
      if (field.type !== 'TINY' || field.length !== 1) return next();
      const text = field.string();
      return text === null ? null : text === '1';
    },
  });
  // READ COMMITTED, as on PostgreSQL: a statement after a lock wait (a rule's turn, the scheduler's lease) sees what
  // was committed meanwhile; InnoDB's default would show the transaction's first snapshot.
  pool.on('connection', (connection) => {
    connection.query("set time_zone = '+00:00'");
    connection.query('set session transaction isolation level read committed');
  });
  // Kysely hands each statement's parameters to the connection's query(); instants are respelled on the way. A LOAD
  // DATA LOCAL INFILE of loadDataLocal gets the stream of its rows, its values respelled likewise.
  const respelled = new WeakSet<object>();
  const kyselyPool: MysqlPool = {
    getConnection(callback) {
      pool.getConnection((error, connection) => {
        if (connection && !respelled.has(connection)) {
          respelled.add(connection);
          const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
          (connection as { query: unknown }).query = (text: string, values: unknown, ...rest: unknown[]) => {
            const rows = localInfiles.get(LOCAL_INFILE.exec(text)?.[1] ?? '');
            const statement = rows
              ? { sql: text, infileStreamFactory: () => tabSeparated(rows, instants.write) }
              : text;
            return query(statement, Array.isArray(values) ? values.map(instants.write) : values, ...rest);
          };
        }
        callback(error, connection as never);
      });
    },
    end: (callback) => pool.end(callback),
  };
  let database: Database | undefined;
  const db = new Kysely<DB>({
    dialect: new MariadbDialect({ pool: kyselyPool }),
    plugins: [new RenameTablesPlugin()],
    log: (event) => timeQuery(database, event),
  });
  database = {
    db,
    dialect: 'mysql',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
    poolUse: () => mysqlPoolUse(pool),
  };
  return database;
}

/** The rows of each LOAD DATA LOCAL INFILE under way (loadDataLocal), by the file name its statement gives. */
const localInfiles = new Map<string, AsyncIterable<readonly unknown[][]>>();
const LOCAL_INFILE = /^load data local infile '([\w-]+)'/;
/** The server does not take LOAD DATA LOCAL (local_infile off): ER_NOT_ALLOWED_COMMAND and its newer code. */
const LOCAL_INFILE_REFUSED = new Set([1148, 4166]);
/** The errors a LOCAL load's warnings stand for: a duplicate key, a reference to no row. */
const WARNING_AS_ERROR: Record<number, string> = { 1062: 'ER_DUP_ENTRY', 1452: 'ER_NO_REFERENCED_ROW_2' };

/** What LOAD DATA's default format reads as a value: \N for NULL, and its escapes for what would end a field. */
function tabSeparatedValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value).replace(/[\\\t\n\r\0]/g, (c) => TSV_ESCAPES[c]!);
}
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

function tabSeparated(batches: AsyncIterable<readonly unknown[][]>, write: (value: unknown) => unknown): Readable {
  return Readable.from(
    (async function* () {
      for await (const rows of batches)
        yield Buffer.from(rows.map((row) => `${row.map((v) => tabSeparatedValue(write(v))).join('\t')}\n`).join(''));
    })(),
  );
}

/**
 * Loads rows into `table` with one LOAD DATA LOCAL INFILE (MariaDB), in the caller's transaction, streamed batch by
 * batch as `batches` gives them (each row its `columns`' values, as a statement's parameters). Answers how many rows
 * went in, or null when the server does not take LOAD DATA LOCAL (it refuses before it reads any row). MariaDB then
 * parses no SQL per row: 100,000 contacts went into an empty table in 3.2 s by hand, and `leadbook seed` of 100,000
 * contacts and 10,000 inquiries took 6.1-6.8 s against 7.4-7.6 s by multi-row INSERTs, the same rows.
 */
export async function loadDataLocal(
  db: Executor,
  table: string,
  columns: readonly string[],
  batches: AsyncIterable<readonly unknown[][]>,
): Promise<number | null> {
  const name = `leadbook-${randomUUID()}`;
  localInfiles.set(name, batches);
  try {
    const result = await sql`load data local infile ${sql.raw(`'${name}'`)} into table ${sql.table(table)}
      character set utf8mb4 (${sql.join(columns.map((c) => sql.ref(c)))})`.execute(db);
    // MariaDB takes a LOCAL load as if IGNORE were given (it cannot stop the client's stream): a row whose key is
    // taken is skipped and a value it would refuse is cut, each with a warning. Any warning fails the load, so that
    // the caller's transaction rolls it back whole, as an INSERT's error would.
    const { rows } = await sql<{ Level: string; Code: number; Message: string }>`show warnings limit 3`.execute(db);
    if (rows.length) {
      const said = rows.map((w) => `${w.Level} ${w.Code}: ${w.Message}`).join('; ');
      // A taken key or a missing reference is thrown as the INSERT's error would be (db/dialect.ts tells them).
      const code = rows.map((w) => WARNING_AS_ERROR[w.Code]).find(Boolean);
      throw Object.assign(new Error(`MariaDB did not load every row of ${table} as it was given: ${said}`), { code });
    }
    return Number(result.numAffectedRows ?? 0);
  } catch (error) {
    if (LOCAL_INFILE_REFUSED.has((error as { errno?: number }).errno ?? 0)) return null;
    throw error;
  } finally {
    localInfiles.delete(name);
  }
}

/** Unicode lower-casing for case-insensitive matching; SQLite's own lower() is ASCII-only. */
function fold(value: unknown): string | null {
  return typeof value === 'string' ? value.toLowerCase() : value === null ? null : String(value).toLowerCase();
}

/** Statements kept prepared per connection; more distinct SQL than this (unusual filter mixes) is prepared again. */
const STATEMENT_CACHE = 500;

/** SQLite has no boolean: it keeps 0 and 1 (better-sqlite3 refuses to bind a boolean). */
const bindable = (parameters: ReadonlyArray<unknown>) =>
  parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p));

function withBooleans(statement: SQLite.Statement): SqliteStatement {
  return {
    reader: statement.reader,
    all: (parameters) => statement.all(bindable(parameters)),
    run: (parameters) => statement.run(bindable(parameters)),
    iterate: (parameters) => statement.iterate(bindable(parameters)),
  };
}

/**
 * The connection as Kysely sees it, with prepared statements reused: Kysely
 * prepares every query it runs, which costs more than running a simple one.
 * Reuse is safe because Kysely runs one query at a time on a SQLite
 * connection (a streamed query holds it until the stream ends). Booleans are
 * bound as 0/1, so that no code outside db/ converts them.
 */
function withStatementCache(file: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      file.close();
    },
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement) {
        // Most recently used last, so that the first entry is the one to drop.
        statements.delete(text);
      } else {
        statement = withBooleans(file.prepare(text));
        if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

/**
 * Transactions begin IMMEDIATE: they take the write lock at BEGIN, waiting
 * (busy_timeout) for another process's writer to finish. A deferred BEGIN
 * takes it at the first write, and when another process wrote since the
 * transaction's first read, SQLite refuses at once ("database is locked"):
 * `leadbook import` beside a serving app, or several workers, hit that.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): QueryCompiler {
    return new RowLockFreeCompiler();
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

const ROW_LOCKS = new Set(['ForUpdate', 'ForShare', 'ForNoKeyUpdate', 'ForKeyShare', 'NoWait', 'SkipLocked']);

/**
 * SQLite has no row locks and no `for update`: an IMMEDIATE transaction holds
 * the whole database's write lock from its BEGIN, which serializes what a row
 * lock would. So a locking read is written once, for PostgreSQL, and compiles
 * here without its lock.
 */
class RowLockFreeCompiler extends SqliteQueryCompiler {
  protected override visitSelectQuery(node: SelectQueryNode): void {
    const endModifiers = node.endModifiers?.filter((m) => !(m.modifier && ROW_LOCKS.has(m.modifier)));
    super.visitSelectQuery({ ...node, endModifiers: endModifiers?.length ? endModifiers : undefined });
  }
}

/**
 * The app's settings for a connection to its SQLite file, and the Unicode folding function its search triggers call
 * (the bench's floors open theirs with the same).
 */
export function withSqliteSettings(file: SQLite.Database): SQLite.Database {
  if (!file.readonly) {
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = NORMAL');
  }
  file.pragma('foreign_keys = ON');
  file.pragma('busy_timeout = 5000');
  file.function('lb_fold', { deterministic: true }, fold);
  return file;
}

function openSqlite(dataDir: string): Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = withSqliteSettings(new SQLite(path.join(dataDir, 'leadbook.sqlite')));
  // 64-bit integers come back as BigInt so that big-integer fields stay exact.
  file.defaultSafeIntegers(true);
  let database: Database | undefined;
  const db = new Kysely<DB>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(file) }),
    log: (event) => timeQuery(database, event),
  });
  database = {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
  return database;
}

/**
 * Sets a command's own SQLite connection up for a long bulk load (`leadbook import`): a page cache of 64 MiB instead of
 * 2, which the load's inserts into every index of the table keep reading, and the WAL written back into the database
 * file every 20,000 pages (80 MiB) instead of 1,000, so that each batch's commit does not also copy the pages the last
 * one wrote. Both last as long as the connection. 100,000 contacts imported in 8.5–9.1 s instead of 9.6–9.9 s.
 * PostgreSQL and MariaDB: nothing to do.
 */
export async function forBulkLoad(database: Database): Promise<void> {
  if (database.dialect !== 'sqlite') return;
  await sql`pragma cache_size = -65536`.execute(database.db);
  await sql`pragma wal_autocheckpoint = 20000`.execute(database.db);
}

export function openDatabase(options: DatabaseOptions): Database {
  const url = options.databaseUrl;
  const database = !url
    ? openSqlite(options.dataDir)
    : /^(mysql|mariadb):/.test(url)
      ? openMysql(url, options.appTimezone)
      : openPostgres(url);
  database.defaultCountry = options.defaultCountry;
  return database;
}
