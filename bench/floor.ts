// The floor: a bare Fastify server on the app's database that runs the app's
// SQL for each scenario (bench/floor-sql.ts) with nothing else: no validation,
// no authentication, no schema serialization (JSON.stringify). What the app
// adds on top of it is what the bench measures.
//   DATA_DIR=… (SQLite) or DATABASE_URL=postgres://… or mysql://… ; PORT (default 3100)
import path from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify, { type FastifyReply } from 'fastify';
import mysql from 'mysql2';
import pg from 'pg';
import { withSqliteSettings } from '../src/db/connection.ts';
import type { Dialect } from '../src/db/dialect.ts';
import {
  type Entry,
  type ReadArgs,
  type Statement,
  begin,
  changeOf,
  commit,
  contactValues,
  getById,
  routeGetById,
  insertContact,
  listStatements,
  SEARCHING,
  lockById,
  referenceChecks,
  logEntry,
  releaseSavepoint,
  savepoint,
  updateOccupation,
  writesWithEntryAtOnce,
} from './floor-sql.ts';
import { READ_SCENARIOS, type ReadScenario } from './scenarios.ts';

type Row = Record<string, unknown>;

interface Store {
  /** Runs statements one after the other; answers each one's rows. */
  all(statement: Statement): Promise<Row[]>;
  /** Runs `work` in a transaction, on one connection. */
  transaction<T>(work: (all: (s: Statement) => Promise<Row[]>) => Promise<T>): Promise<T>;
}

function sqliteStore(dataDir: string): Store {
  const db = withSqliteSettings(new SQLite(path.join(dataDir, 'leadbook.sqlite')));
  const prepared = new Map<string, SQLite.Statement>();
  const statement = (sql: string) => {
    let s = prepared.get(sql);
    if (!s) {
      s = db.prepare(sql);
      prepared.set(sql, s);
    }
    return s;
  };
  const all = async (s: Statement) => {
    const stmt = statement(s.sql);
    if (stmt.reader) return stmt.all(...s.parameters) as Row[];
    stmt.run(...s.parameters);
    return [];
  };
  return {
    all,
    async transaction(work) {
      // better-sqlite3 is synchronous: no other request runs until this one commits.
      db.exec(begin('sqlite').sql);
      try {
        const result = await work(all);
        db.exec('commit');
        return result;
      } catch (error) {
        db.exec('rollback');
        throw error;
      }
    },
  };
}

function postgresStore(url: string): Store {
  // The app's pool size.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  const run = (client: pg.Pool | pg.PoolClient) => async (s: Statement) =>
    (await client.query(s.sql, s.parameters)).rows as Row[];
  return {
    all: run(pool),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query(begin('postgres').sql);
        const result = await work(run(client));
        await client.query(commit.sql);
        return result;
      } catch (error) {
        await client.query('rollback');
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

/** An instant as the app writes it, which MariaDB refuses for a DATETIME column. */
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)Z$/;

function mysqlStore(url: string): Store {
  // The app's pool (src/db/connection.ts): its size, UTF-8 with the binary collation, UTC, 64-bit integers as digit
  // strings, tinyint(1) as a boolean.
  const pool = mysql.createPool({
    uri: url.replace(/^mariadb:/, 'mysql:'),
    connectionLimit: 10,
    charset: 'UTF8MB4_BIN',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: true,
    typeCast: (field, next) => {
      if (field.type !== 'TINY' || field.length !== 1) return next();
      const text = field.string();
      return text === null ? null : text === '1';
    },
  });
  // The app's session settings: UTC, and READ COMMITTED as on PostgreSQL.
  pool.on('connection', (connection) => {
    connection.query("set time_zone = '+00:00'");
    connection.query('set session transaction isolation level read committed');
  });
  pool.on('error', () => {});
  // As the app's connection does, an ISO instant is respelled `YYYY-MM-DD HH:MM:SS.sss` on its way to MariaDB; and
  // as Kysely's MySQL driver does, statements go through query() (the text protocol), not prepared.
  const respelled = (values: unknown[]) =>
    values.map((v) => (typeof v === 'string' && ISO_INSTANT.test(v) ? v.replace(ISO_INSTANT, '$1 $2') : v));
  const run =
    (client: mysql.Pool | mysql.PoolConnection) =>
    (s: Statement): Promise<Row[]> =>
      new Promise((resolve, reject) =>
        client.query(s.sql, respelled(s.parameters), (error, rows) =>
          error ? reject(error) : resolve(Array.isArray(rows) ? (rows as Row[]) : []),
        ),
      );
  return {
    all: run(pool),
    async transaction(work) {
      const connection = await new Promise<mysql.PoolConnection>((resolve, reject) =>
        pool.getConnection((error, c) => (error ? reject(error) : resolve(c))),
      );
      const all = run(connection);
      try {
        await all(begin('mysql'));
        const result = await work(all);
        await all(commit);
        return result;
      } catch (error) {
        await all({ sql: 'rollback', parameters: [] }).catch(() => {});
        throw error;
      } finally {
        connection.release();
      }
    },
  };
}

const url = process.env.DATABASE_URL;
const dialect: Dialect = !url ? 'sqlite' : /^(mysql|mariadb):/.test(url) ? 'mysql' : 'postgres';
const store =
  dialect === 'sqlite'
    ? sqliteStore(path.resolve(process.env.DATA_DIR || 'data'))
    : dialect === 'mysql'
      ? mysqlStore(url!)
      : postgresStore(url!);
/** Who the floor's writes name as their author and creator: the seed's first account. */
const ACTOR = 1;

// Ids and counts arrive as BigInt (none here) or digit strings (pg int8, mysql2's big numbers): both are written as
// JSON numbers' text.
const json = (reply: FastifyReply, status: number, body: unknown) =>
  reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));

const app = Fastify({ logger: false });
// A failure is shown to whoever drives the floor: the runner prints it.
app.setErrorHandler((error: Error, request, reply) => {
  console.error(`floor: ${request.method} ${request.url}: ${error.message}`);
  return json(reply, 500, { error: error.message });
});

app.get('/healthz', async (_req, reply) => json(reply, 200, { ok: true }));

app.get<{ Params: { id: string } }>('/contacts/:id', async (request, reply) => {
  const [row] = await store.all(routeGetById(dialect, request.params.id));
  return row ? json(reply, 200, { data: row }) : json(reply, 404, { error: 'not found' });
});

app.get<{ Params: { scenario: string }; Querystring: Record<string, string> }>(
  '/s/:scenario',
  async (request, reply) => {
    const scenario = request.params.scenario as ReadScenario;
    if (!(READ_SCENARIOS as readonly string[]).includes(scenario))
      return json(reply, 404, { error: 'no such scenario' });
    const q = request.query;
    const args: ReadArgs = {
      offset: q.offset ? Number(q.offset) : 0,
      after: q.after,
      words: q.q?.split(/\s+/).filter(Boolean),
      city: q.city,
      gte: q.gte,
      lt: q.lt,
    };
    const { count, page, searching } = listStatements(dialect, scenario, args);
    const counting = !count
      ? undefined
      : searching
        ? store.transaction(async (all) => {
            await all(SEARCHING);
            return all(count);
          })
        : store.all(count);
    const [counted, rows] = await Promise.all([counting, store.all(page)]);
    // The count is the one column of the one row, whatever the statement calls it.
    const total = counted ? Number(Object.values(counted[0] ?? {})[0] ?? 0) : undefined;
    return json(reply, 200, { data: rows.slice(0, 25), meta: { total } });
  },
);

// A create as the app writes it: the records it names checked, the row with its derived keys, its change-log entry
// (in the same statement on PostgreSQL), the row read back with its counts; on SQLite in a savepoint, as the app's
// group commit writes each create.
app.post<{ Body: Record<string, unknown> }>('/contacts', async (request, reply) => {
  const now = new Date().toISOString();
  const entry: Entry = { at: now, actorId: ACTOR, action: 'created', changes: null };
  const row = await store.transaction(async (all) => {
    if (dialect === 'sqlite') await all(savepoint);
    for (const check of referenceChecks(dialect, request.body, ACTOR)) await all(check);
    const [inserted] = await all(insertContact(dialect, contactValues(request.body, ACTOR, now), entry));
    if (!writesWithEntryAtOnce(dialect)) await all(logEntry(dialect, entry, inserted!.id));
    const [read] = await all(getById(dialect, inserted!.id));
    if (dialect === 'sqlite') await all(releaseSavepoint);
    return read;
  });
  return json(reply, 201, { data: row });
});

// A patch as the app writes it: the row read locked, the change with its entry, the row read back; on SQLite in a
// savepoint, as the app's group commit writes each update.
app.patch<{ Params: { id: string }; Body: { occupation?: string } }>('/contacts/:id', async (request, reply) => {
  const id = request.params.id;
  const occupation = request.body.occupation ?? null;
  const row = await store.transaction(async (all) => {
    if (dialect === 'sqlite') await all(savepoint);
    const [before] = await all(lockById(dialect, id));
    if (!before) return undefined;
    const entry: Entry = {
      at: new Date().toISOString(),
      actorId: ACTOR,
      action: 'updated',
      changes: changeOf('occupation', before.occupation ?? null, occupation),
    };
    await all(updateOccupation(dialect, occupation, entry, id));
    if (!writesWithEntryAtOnce(dialect)) await all(logEntry(dialect, entry, id));
    const [read] = await all(getById(dialect, id));
    if (dialect === 'sqlite') await all(releaseSavepoint);
    return read;
  });
  return row ? json(reply, 200, { data: row }) : json(reply, 404, { error: 'not found' });
});

const port = Number(process.env.PORT || 3100);
await app.listen({ host: '127.0.0.1', port });
const stop = () => {
  void app.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
