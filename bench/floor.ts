// The floor: a bare Fastify server on the app's database that runs the app's
// SQL for each scenario (bench/floor-sql.ts) with nothing else: no validation,
// no authentication, no schema serialization (JSON.stringify). What the app
// adds on top of it is what the bench measures.
//   DATA_DIR=… (SQLite) or DATABASE_URL=postgres://… ; PORT (default 3100)
import path from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify, { type FastifyReply } from 'fastify';
import pg from 'pg';
import {
  INSERT_COLUMNS,
  type ReadArgs,
  type Statement,
  getById,
  insertContact,
  listStatements,
  lockById,
  updateOccupation,
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
  const db = new SQLite(path.join(dataDir, 'leadbook.sqlite'));
  // The app's connection settings, and its Unicode folding function, which the search triggers call.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.function('lb_fold', { deterministic: true }, (v: unknown) =>
    typeof v === 'string' ? v.toLowerCase() : v === null ? null : String(v).toLowerCase(),
  );
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
      db.exec('begin');
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
        await client.query('begin');
        const result = await work(run(client));
        await client.query('commit');
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

const store = process.env.DATABASE_URL
  ? postgresStore(process.env.DATABASE_URL)
  : sqliteStore(path.resolve(process.env.DATA_DIR || 'data'));
const dialect = process.env.DATABASE_URL ? 'postgres' : 'sqlite';

// Ids and counts arrive as BigInt (none here) or digit strings (pg int8): both are written as JSON numbers' text.
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
  const [row] = await store.all(getById(dialect, request.params.id));
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
    const { count, page } = listStatements(dialect, scenario, args);
    const [counted, rows] = await Promise.all([count ? store.all(count) : Promise.resolve(undefined), store.all(page)]);
    // The count is the one column of the one row, whatever the statement calls it.
    const total = counted ? Number(Object.values(counted[0] ?? {})[0] ?? 0) : undefined;
    return json(reply, 200, { data: rows.slice(0, 25), meta: { total } });
  },
);

app.post<{ Body: Record<string, unknown> }>('/contacts', async (request, reply) => {
  const now = new Date().toISOString();
  const body: Record<string, unknown> = { ...request.body, created_by: 1, created_at: now, updated_at: now };
  const values = INSERT_COLUMNS.map((c) => body[c] ?? null);
  const row = await store.transaction(async (all) => {
    const [inserted] = await all(insertContact(dialect, values));
    return (await all(getById(dialect, inserted!.id)))[0];
  });
  return json(reply, 201, { data: row });
});

app.patch<{ Params: { id: string }; Body: { occupation?: string } }>('/contacts/:id', async (request, reply) => {
  const id = request.params.id;
  const row = await store.transaction(async (all) => {
    const [before] = await all(lockById(dialect, id));
    if (!before) return undefined;
    await all(updateOccupation(dialect, request.body.occupation ?? null, new Date().toISOString(), id));
    return (await all(getById(dialect, id)))[0];
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
