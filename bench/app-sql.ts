// The SQL the app's record operations send for each bench scenario, captured
// by running the real operations (listRecords, getRecord, createRecord,
// updateRecord) against the app's own Kysely (its compiler and plugins) whose
// connection records every statement and answers a stand-in row. The runner
// compares it with bench/floor-sql.ts and warns when they have drifted apart,
// so the floor keeps measuring what the app does.
// `node --import tsx bench/app-sql.ts` prints it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect as KyselyDialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteIntrospector,
} from 'kysely';
import { type Database, openDatabase } from '../src/db/connection.ts';
import { createRecord, getRecord, listRecords, updateRecord } from '../src/records/operations.ts';
import { contact } from '../src/resources/index.ts';
import type { Dialect } from '../src/db/dialect.ts';
import {
  type ReadScenario,
  type ScenarioParams,
  READ_SCENARIOS,
  type ScenarioName,
  appQuery,
  createBody,
  patchBody,
} from './scenarios.ts';

export interface Statement {
  sql: string;
  parameters: unknown[];
}

/** A write's reference check answers a column per record named (src/records/repository.ts, recordsExist): all found. */
const FOUND = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`r${i}`, 1]));
/** The auth epoch the stand-in row answers, which the captured requests' tokens were kept under. */
const STAND_IN_EPOCH = 1;

class CapturingDriver implements Driver {
  /**
   * `begin` as the app's driver spells it (SQLite's takes the write lock at once); `id`, the id of the stand-in row
   * (the record a scenario reads or patches, or the one a create inserts).
   */
  constructor(
    private readonly log: Statement[],
    private readonly begin: string,
    private readonly id: number,
  ) {}
  async init(): Promise<void> {}
  /** The one connection, which records what it is sent. */
  readonly connection: DatabaseConnection = {
    executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      this.log.push({ sql: query.sql, parameters: [...query.parameters] });
      // One row that every operation can read (an id, a count, a record of nulls, the records a write names found),
      // and the id an insert without RETURNING answers (a change-log entry's), as the real drivers give them.
      const row = { id: this.id, total: 0, ...FOUND, lb_auth_epoch: STAND_IN_EPOCH };
      return { rows: [row as R], numAffectedRows: 1n, insertId: 1n };
    },
    streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
      throw new Error('not captured');
    },
  };
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    this.log.push({ sql: this.begin, parameters: [] });
  }
  async commitTransaction(): Promise<void> {
    this.log.push({ sql: 'commit', parameters: [] });
  }
  async rollbackTransaction(): Promise<void> {
    this.log.push({ sql: 'rollback', parameters: [] });
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** Where the app is opened for its compiler: a server that is never reached (pools connect at the first query). */
const NOWHERE: Record<Exclude<Dialect, 'sqlite'>, string> = {
  postgres: 'postgres://capture@127.0.0.1:9/none',
  mysql: 'mysql://capture@127.0.0.1:9/none',
};

/**
 * The app's database as its own connection compiles statements: the query compiler (SQLite's drops row locks,
 * MariaDB's spells upserts), the adapter (MariaDB's RETURNING) and the plugins (MariaDB's `leadbook_…` tables) are
 * private to src/db/connection.ts, so they are borrowed from the app's own connection, opened to an empty directory
 * or to no server; no query reaches it, as the recording connection takes the place of its pool.
 */
function capturingDatabase(dialect: Dialect, log: Statement[], id: number): Database {
  const dataDir = dialect === 'sqlite' ? fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-app-sql-')) : '';
  const app = openDatabase({ databaseUrl: dialect === 'sqlite' ? undefined : NOWHERE[dialect], dataDir });
  const driver = new CapturingDriver(log, dialect === 'sqlite' ? 'begin immediate' : 'begin', id);
  const executor = app.db
    .getExecutor()
    .withConnectionProvider({ provideConnection: (consume) => consume(driver.connection) });
  const kyselyDialect: KyselyDialect = {
    createAdapter: () => executor.adapter,
    createDriver: () => driver,
    createIntrospector: (k) => new SqliteIntrospector(k),
    createQueryCompiler: () => {
      throw new Error("the app's compiler comes with its executor");
    },
  };
  const db: Database['db'] = new Kysely({
    config: { dialect: kyselyDialect },
    executor,
    driver,
    dialect: kyselyDialect,
  });
  return {
    db,
    dialect,
    ping: async () => {},
    close: async () => {
      await db.destroy();
      await app.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The statements the app runs for one scenario, in order (concurrent ones in the order they start). */
export async function appStatements(
  dialect: Dialect,
  scenario: ScenarioName,
  params: ScenarioParams,
): Promise<Statement[]> {
  const log: Statement[] = [];
  const database = capturingDatabase(dialect, log, params.sampleId);
  const ctx = { database, actor: { id: 1n, role: 'admin' as const } };
  try {
    // A bearer token kept in memory: the route confirms it in the read itself, or in the first statement
    // of the write (src/http/auth.ts, confirmed).
    const trusted = { ...ctx, authEpoch: String(STAND_IN_EPOCH) };
    if (scenario === 'get') await getRecord(trusted, contact, String(params.sampleId), 'read', { withCounts: true });
    else if (scenario === 'create') await createRecord(trusted, contact, createBody(1));
    else if (scenario === 'patch') await updateRecord(trusted, contact, String(params.sampleId), patchBody(1));
    else if ((READ_SCENARIOS as readonly string[]).includes(scenario))
      await listRecords(ctx, contact, appQuery(scenario as ReadScenario, params));
  } finally {
    await database.close();
  }
  return log;
}

const normal = (text: string) => text.replace(/\s+/g, ' ').trim();
const shown = (v: unknown) => (v === null || v === undefined ? 'null' : String(v));
/** A write's parameters as compared: the instants it carries are the time of day, which differs from run to run. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const compared = (v: unknown) => (typeof v === 'string' && INSTANT.test(v) ? '(now)' : shown(v));

/**
 * Where the floor's SQL (bench/floor-sql.ts) differs from the app's, scenario
 * by scenario: one line per difference, none when they agree. Parameters are
 * compared too, a write's instants as "now" (they carry the time of day).
 */
export async function sqlDrift(dialect: Dialect, p: ScenarioParams): Promise<string[]> {
  const { floorScript } = await import('./floor-sql.ts');
  const { SEARCH_ONE, SEARCH_TWO, PER_PAGE } = await import('./scenarios.ts');
  const args = {
    id: String(p.sampleId),
    offset: (p.deepPage - 1) * PER_PAGE,
    after: String(p.cursorAfterId),
    city: p.city,
    gte: p.monthStart,
    lt: p.monthEnd,
    occupation: String(patchBody(1).occupation),
    body: createBody(1),
  };
  const problems: string[] = [];
  for (const scenario of [...READ_SCENARIOS, 'get', 'create', 'patch'] as const) {
    const words = scenario === 'search1' ? [SEARCH_ONE] : scenario === 'search2' ? SEARCH_TWO.split(' ') : [];
    const offset = scenario === 'deep-offset' ? args.offset : 0;
    const floor = floorScript(dialect, scenario, { ...args, offset, words });
    let app: Statement[];
    try {
      app = await appStatements(dialect, scenario, p);
    } catch (error) {
      problems.push(`${scenario}: the app's SQL could not be captured (${(error as Error).message})`);
      continue;
    }
    const reads = (READ_SCENARIOS as readonly string[]).includes(scenario) || scenario === 'get';
    if (reads) {
      // A list's count and page run concurrently: the order they start in is no part of the SQL.
      const bySql = (x: Statement, y: Statement) => normal(x.sql).localeCompare(normal(y.sql));
      app.sort(bySql);
      floor.sort(bySql);
    }
    for (let i = 0; i < Math.max(app.length, floor.length); i++) {
      const a = app[i];
      const f = floor[i];
      if (!a || !f || normal(a.sql) !== normal(f.sql)) {
        problems.push(
          `${scenario}, statement ${i + 1}:\n    app:   ${a ? normal(a.sql) : '(none)'}\n    floor: ${f ? normal(f.sql) : '(none)'}`,
        );
      } else if (a.parameters.map(compared).join('\u0000') !== f.parameters.map(compared).join('\u0000')) {
        problems.push(
          `${scenario}, statement ${i + 1}: parameters differ\n    app:   ${a.parameters.map(compared).join(', ')}\n    floor: ${f.parameters.map(compared).join(', ')}`,
        );
      }
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { SCENARIOS } = await import('./scenarios.ts');
  const params: ScenarioParams = {
    sampleId: 12345,
    deepPage: 36001,
    cursorAfterId: 100001,
    city: 'Ashford',
    monthStart: '2024-03-01T00:00:00.000Z',
    monthEnd: '2024-04-01T00:00:00.000Z',
  };
  for (const dialect of ['sqlite', 'postgres', 'mysql'] as const) {
    const drift = await sqlDrift(dialect, params);
    console.log(
      `-- ${dialect}: ${drift.length ? `the floor's SQL differs from the app's:\n${drift.join('\n')}` : "the floor's SQL is the app's"}`,
    );
    for (const scenario of SCENARIOS) {
      console.log(`-- ${dialect} ${scenario}`);
      for (const s of await appStatements(dialect, scenario, params))
        console.log(
          `${s.sql};  -- ${JSON.stringify(s.parameters, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
    }
  }
}
