// The SQL the app's record operations send for each bench scenario, captured
// by running the real operations (listRecords, getRecord, createRecord,
// updateRecord) against a Kysely whose driver records every statement and
// answers a stand-in row. The runner compares it with bench/floor-sql.ts and
// warns when they have drifted apart, so the floor keeps measuring what the
// app does. `node --import tsx bench/app-sql.ts` prints it.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database } from '../src/db/connection.ts';
import { createRecord, getRecord, listRecords, updateRecord } from '../src/records/operations.ts';
import { contact } from '../src/resources/contact.ts';
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

class CapturingDriver implements Driver {
  constructor(private readonly log: Statement[]) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const log = this.log;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        log.push({ sql: query.sql, parameters: [...query.parameters] });
        // One row that every operation can read: an id, a count, a record of nulls.
        return { rows: [{ id: 1, total: 0 } as R], numAffectedRows: 1n };
      },
      streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
        throw new Error('not captured');
      },
    };
  }
  async beginTransaction(): Promise<void> {
    this.log.push({ sql: 'begin', parameters: [] });
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

function capturingDatabase(dialect: Dialect, log: Statement[]): Database {
  const postgres = dialect === 'postgres';
  const db: Database['db'] = new Kysely({
    dialect: {
      createAdapter: () => (postgres ? new PostgresAdapter() : new SqliteAdapter()),
      createDriver: () => new CapturingDriver(log),
      createIntrospector: (k) => (postgres ? new PostgresIntrospector(k) : new SqliteIntrospector(k)),
      createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
    },
  });
  return { db, dialect, ping: async () => {}, close: () => db.destroy() };
}

/** The statements the app runs for one scenario, in order (concurrent ones in the order they start). */
export async function appStatements(
  dialect: Dialect,
  scenario: ScenarioName,
  params: ScenarioParams,
): Promise<Statement[]> {
  const log: Statement[] = [];
  const database = capturingDatabase(dialect, log);
  const ctx = { database, actor: { id: 1n, role: 'admin' as const } };
  try {
    if (scenario === 'get') await getRecord(ctx, contact, String(params.sampleId));
    else if (scenario === 'create') await createRecord(ctx, contact, createBody(1));
    else if (scenario === 'patch') await updateRecord(ctx, contact, String(params.sampleId), patchBody(1));
    else if ((READ_SCENARIOS as readonly string[]).includes(scenario))
      await listRecords(ctx, contact, appQuery(scenario as ReadScenario, params));
  } finally {
    await database.close();
  }
  return log;
}

const normal = (text: string) => text.replace(/\s+/g, ' ').trim();
const shown = (v: unknown) => (v === null || v === undefined ? 'null' : String(v));

/**
 * Where the floor's SQL (bench/floor-sql.ts) differs from the app's, scenario
 * by scenario: one line per difference, none when they agree. Parameters are
 * compared for reads (writes carry the time of day).
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
      } else if (reads && a.parameters.map(shown).join('\u0000') !== f.parameters.map(shown).join('\u0000')) {
        problems.push(
          `${scenario}, statement ${i + 1}: parameters differ\n    app:   ${a.parameters.map(shown).join(', ')}\n    floor: ${f.parameters.map(shown).join(', ')}`,
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
  for (const dialect of ['sqlite', 'postgres'] as const) {
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
