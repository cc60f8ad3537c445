// Every SQL statement the floor runs, in one place. Each is the statement the
// app sends for the same scenario (see `node --import tsx bench/app-sql.ts`),
// so that the floor measures the database work alone. When the app's SQL
// changes, change it here; the runner compares the two before it measures
// and prints any difference.
import type { Dialect } from '../src/db/dialect.ts';
import { type ReadScenario, PER_PAGE } from './scenarios.ts';

export interface Statement {
  sql: string;
  parameters: unknown[];
}

const TABLE = 'contacts';
const COLUMNS = [
  'id',
  'name',
  'email',
  'phone',
  'occupation',
  'address',
  'country',
  'city',
  'service_id',
  'source_id',
  'detail',
  'budget',
  'created_by',
  'created_at',
  'updated_at',
];
/** The columns a create writes, in the app's order. */
export const INSERT_COLUMNS = COLUMNS.filter((c) => c !== 'id');
const quoted = (names: string[]) => names.map((c) => `"${c}"`).join(', ');
const SELECT = `select ${quoted(COLUMNS)} from "${TABLE}"`;

/** What a read scenario's request carries to the floor. */
export interface ReadArgs {
  offset?: number;
  /** The id the deep cursor page continues after (default order, -id). */
  after?: string;
  words?: string[];
  city?: string;
  gte?: string;
  lt?: string;
}

/** `?` placeholders become `$1, $2, …` on PostgreSQL. */
function forDialect(dialect: Dialect, sql: string, parameters: unknown[]): Statement {
  if (dialect === 'sqlite') return { sql, parameters };
  let n = 0;
  return { sql: sql.replace(/\?/g, () => `$${++n}`), parameters };
}

/** The words of a search as one FTS5 query: every word, each a quoted phrase (SQLite). */
const ftsQuery = (words: string[]) => words.map((w) => `"${w.toLowerCase().replaceAll('"', '""')}"`).join(' AND ');

/**
 * A search (words of 3 characters or more): the trigram index of each
 * database (migration T0003). PostgreSQL: LIKE per word on the lower-cased,
 * GIN-indexed `search_text`; SQLite: one FTS5 query for all the words.
 */
function searchCondition(dialect: Dialect, words: string[]): [string, unknown[]] {
  if (dialect === 'postgres') {
    return [
      `(${words.map(() => `"search_text" like lower(?) escape '\\'`).join(' and ')})`,
      words.map((w) => `%${w.replace(/[\\%_]/g, '\\$&')}%`),
    ];
  }
  return [
    `("${TABLE}"."id" in (select rowid from "${TABLE}_search" where "${TABLE}_search" match ?))`,
    [ftsQuery(words)],
  ];
}

function where(dialect: Dialect, scenario: ReadScenario, a: ReadArgs): [string, unknown[]] {
  switch (scenario) {
    case 'search1':
    case 'search2':
      return searchCondition(dialect, a.words ?? []);
    case 'filter-eq':
      return ['"city" = ?', [a.city]];
    case 'filter-range':
      return ['("created_at" >= ? and "created_at" < ?)', [a.gte, a.lt]];
    default:
      return ['1 = 1', []];
  }
}

/** A list scenario: the count (absent for a cursor page) and the page, which the app runs concurrently. */
export function listStatements(
  dialect: Dialect,
  scenario: ReadScenario,
  a: ReadArgs,
): { count?: Statement; page: Statement } {
  const [condition, params] = where(dialect, scenario, a);
  if (scenario === 'deep-cursor') {
    return {
      page: forDialect(dialect, `${SELECT} where ${condition} and "id" < ? order by "id" desc limit ?`, [
        ...params,
        a.after,
        PER_PAGE + 1,
      ]),
    };
  }
  // The primary key is never NULL: no NULLS clause, so that its index serves the order.
  const order = scenario === 'sort-name' ? '"name" asc nulls first, "id" asc' : '"id" desc';
  const unfiltered = params.length === 0;
  const searched = scenario === 'search1' || scenario === 'search2';
  const count = unfiltered
    ? forDialect(dialect, `select sum(n) as "total" from "record_counts" where "table_name" = ?`, [TABLE])
    : // SQLite counts a search in the FTS5 table alone.
      searched && dialect === 'sqlite'
      ? forDialect(dialect, `select count(*) as n from "${TABLE}_search" where "${TABLE}_search" match ?`, [
          ftsQuery(a.words ?? []),
        ])
      : forDialect(dialect, `select count(*) as "total" from "${TABLE}" where ${condition}`, params);
  const page = forDialect(dialect, `${SELECT} where ${condition} order by ${order} limit ? offset ?`, [
    ...params,
    PER_PAGE,
    a.offset ?? 0,
  ]);
  return { count, page };
}

export const getById = (dialect: Dialect, id: unknown): Statement =>
  forDialect(dialect, `${SELECT} where "id" = ?`, [id]);

/** The read that starts an update: on PostgreSQL it locks the row. */
export const lockById = (dialect: Dialect, id: unknown): Statement =>
  forDialect(dialect, `${SELECT} where "id" = ?${dialect === 'postgres' ? ' for update' : ''}`, [id]);

export const insertContact = (dialect: Dialect, values: unknown[]): Statement =>
  forDialect(
    dialect,
    `insert into "${TABLE}" (${quoted(INSERT_COLUMNS)}) values (${INSERT_COLUMNS.map(() => '?').join(', ')}) returning "id"`,
    values,
  );

/** The bench's patch changes `occupation`; the app adds `updated_at`. */
export const updateOccupation = (dialect: Dialect, occupation: unknown, now: string, id: unknown): Statement =>
  forDialect(dialect, `update "${TABLE}" set "occupation" = ?, "updated_at" = ? where "id" = ?`, [occupation, now, id]);

/** Every statement of a scenario in the order the floor sends them, for the comparison with the app's. */
export function floorScript(
  dialect: Dialect,
  scenario: ReadScenario | 'get' | 'create' | 'patch',
  a: ReadArgs & { id?: unknown; values?: unknown[]; occupation?: string },
): Statement[] {
  const now = new Date().toISOString();
  switch (scenario) {
    case 'get':
      return [getById(dialect, a.id)];
    case 'create':
      return [
        { sql: 'begin', parameters: [] },
        insertContact(dialect, a.values ?? []),
        getById(dialect, 1),
        { sql: 'commit', parameters: [] },
      ];
    case 'patch':
      return [
        { sql: 'begin', parameters: [] },
        lockById(dialect, a.id),
        updateOccupation(dialect, a.occupation, now, a.id),
        getById(dialect, a.id),
        { sql: 'commit', parameters: [] },
      ];
    default: {
      const { count, page } = listStatements(dialect, scenario, a);
      return count ? [count, page] : [page];
    }
  }
}
