// Every SQL statement the floor runs, in one place. Each is the statement the
// app sends for the same scenario (see `node --import tsx bench/app-sql.ts`),
// so that the floor measures the database work alone. When the app's SQL
// changes, change it here; the runner compares the two before it measures
// and prints any difference.
import type { Dialect } from '../src/db/dialect.ts';
import { emailKey, nameCityKey, phoneKey, sortKey } from '../src/schema/keys.ts';
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
/** The keys the app derives from a contact's fields when it writes one (src/resources/contact.ts). */
export const DERIVED_COLUMNS = ['email_key', 'phone_key', 'name_sort', 'name_city_key'];
/** The columns a create writes, in the app's order. */
export const INSERT_COLUMNS = [
  ...COLUMNS.filter((c) => !['id', 'created_by', 'created_at', 'updated_at'].includes(c)),
  ...DERIVED_COLUMNS,
  'created_by',
  'created_at',
  'updated_at',
];
/**
 * A change-log entry's columns, in the order the app writes them: PostgreSQL's data-modifying WITH names the record
 * last, an entry inserted on its own (SQLite, MariaDB) names it after the resource.
 */
const ENTRY_COLUMNS = [
  'at',
  'actor_id',
  'via',
  'action',
  'resource',
  'changes',
  'hidden_changed',
  'cause_id',
  'import_id',
];
const ENTRY_COLUMNS_ALONE = [...ENTRY_COLUMNS.slice(0, 5), 'record_id', ...ENTRY_COLUMNS.slice(5)];
/**
 * A create's values in INSERT_COLUMNS' order: the body's fields, the keys the app derives from them (its own
 * functions: a key is the database's work to index, not a layer of the app's), who created it and when.
 */
export function contactValues(body: Record<string, unknown>, createdBy: unknown, now: string): unknown[] {
  const row: Record<string, unknown> = {
    ...body,
    email_key: emailKey(body.email),
    phone_key: phoneKey(body.phone, { defaultCountry: process.env.DEFAULT_COUNTRY || undefined }),
    name_sort: sortKey(body.name),
    name_city_key: nameCityKey(body.name, body.city),
    created_by: createdBy,
    created_at: now,
    updated_at: now,
  };
  return INSERT_COLUMNS.map((c) => row[c] ?? null);
}

/** An update's entry: the changed field as `{ field: [before, after] }`, as the app logs it. */
export const changeOf = (field: string, before: unknown, after: unknown) =>
  JSON.stringify({ [field]: [before, after] });

const quoted = (names: string[]) => names.map((c) => `"${c}"`).join(', ');
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const SELECT = `select ${quoted(COLUMNS)} from "${TABLE}"`;
/**
 * A record as a read by id and a write's read-back give it: with the count of the inquiries that name it (and
 * `extra` columns after it).
 */
const counted = (extra = '') =>
  `select ${quoted(COLUMNS)}, (select count(*) as "n" from "inquiries" as "counted" ` +
  `where "counted"."contact_id" = "${TABLE}"."id") as "inquiries_count"${extra} from "${TABLE}"`;
const COUNTED = counted();

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

/**
 * The statement in the dialect's spelling: `?` placeholders become `$1, $2, …` on PostgreSQL; names are quoted with
 * backticks on MariaDB (its double quotes are string quotes). No statement here holds a double quote otherwise.
 */
function forDialect(dialect: Dialect, sql: string, parameters: unknown[]): Statement {
  if (dialect === 'sqlite') return { sql, parameters };
  if (dialect === 'mysql') return { sql: sql.replace(/"([a-z0-9_]+)"/g, '`$1`'), parameters };
  let n = 0;
  return { sql: sql.replace(/\?/g, () => `$${++n}`), parameters };
}

/** The words of a search as one FTS5 query: every word, each a quoted phrase (SQLite). */
const ftsQuery = (words: string[]) => words.map((w) => `"${w.toLowerCase().replaceAll('"', '""')}"`).join(' AND ');

/**
 * A search (words of 3 characters or more). PostgreSQL and MariaDB: LIKE per word on the lower-cased `search_text`
 * (GIN trigram-indexed on PostgreSQL, migration T0003; read in full on MariaDB, which has no n-gram index); SQLite:
 * one FTS5 query for all the words.
 */
function searchCondition(dialect: Dialect, words: string[]): [string, unknown[]] {
  if (dialect !== 'sqlite') {
    // MariaDB compares bytes (src/db/dialect.ts, containsText) and reads a backslash in a literal as an escape: its
    // one backslash is written twice.
    const match =
      dialect === 'mysql'
        ? `cast("search_text" as binary) like lower(?) escape '\\\\'`
        : `"search_text" like lower(?) escape '\\'`;
    return [`(${words.map(() => match).join(' and ')})`, words.map((w) => `%${w.replace(/[\\%_]/g, '\\$&')}%`)];
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

/**
 * Sorting by name reads the derived `name_sort` (the language's order): byte by byte on each database (PostgreSQL's
 * "C" collation, MariaDB's binary one is the column's own), with NULLs first (MariaDB puts them first unasked).
 */
const NAME_ORDER: Record<Dialect, string> = {
  sqlite: '"name_sort" asc nulls first, "id" asc',
  postgres: '"name_sort" collate "C" asc nulls first, "id" asc',
  mysql: '"name_sort" asc, "id" asc',
};

/**
 * A list scenario: the count (absent for a cursor page) and the page, which the app runs concurrently. On PostgreSQL a
 * search's count runs in a transaction of its own with sequential scans priced out (`searching`: src/db/
 * dialect.ts, readingEveryMatch).
 */
export function listStatements(
  dialect: Dialect,
  scenario: ReadScenario,
  a: ReadArgs,
): { count?: Statement; page: Statement; searching?: boolean } {
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
  const order = scenario === 'sort-name' ? NAME_ORDER[dialect] : '"id" desc';
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
  return { count, page, searching: searched && dialect === 'postgres' };
}

/** How the app prices sequential scans out of a read of every match of a search, on PostgreSQL, with room for it. */
export const SEARCHING: Statement = {
  sql: "select set_config('enable_seqscan', 'off', true), set_config('work_mem', '32MB', true)",
  parameters: [],
};

export const getById = (dialect: Dialect, id: unknown): Statement =>
  forDialect(dialect, `${COUNTED} where "id" = ?`, [id]);

/**
 * A get by id as the route sends it for a bearer token kept in memory: the auth epoch is read by the same statement,
 * which confirms the token (src/http/auth.ts, `confirmed`).
 */
export const routeGetById = (dialect: Dialect, id: unknown): Statement =>
  forDialect(dialect, `${counted(`, ${EPOCH}`)} where "id" = ?`, [id]);

/**
 * The auth epoch, as a column of a statement the app sends anyway: a bearer token kept in memory is confirmed by it
 * (src/http/auth.ts).
 */
const EPOCH = '(select n from "auth_epoch" where id = 1) as "lb_auth_epoch"';

/**
 * A create's check that the records it names exist (a 422 naming the field, rather than the database's foreign-key
 * error): its service, its source and its author, in the order of the fields, a scalar subquery each in one statement,
 * which also confirms the bearer token (EPOCH).
 */
export function referenceChecks(dialect: Dialect, body: Record<string, unknown>, actorId: unknown): Statement[] {
  const named = [
    ['services', body.service_id],
    ['sources', body.source_id],
    ['users', actorId],
  ].filter(([, id]) => id !== undefined && id !== null);
  const each = named.map(([table], i) => `(select "id" from "${table}" where "id" = ?) as "r${i}"`);
  const columns = [...each, EPOCH];
  return columns.length
    ? [
        forDialect(
          dialect,
          `select ${columns.join(', ')}`,
          named.map(([, id]) => id),
        ),
      ]
    : [];
}

/**
 * The read that starts an update: it locks the row (SQLite has no row locks: its transaction holds the writer's), and
 * confirms the bearer token (EPOCH).
 */
export const lockById = (dialect: Dialect, id: unknown): Statement =>
  forDialect(
    dialect,
    `select ${quoted(COLUMNS)}, ${EPOCH} from "${TABLE}" where "id" = ?${dialect === 'sqlite' ? '' : ' for update'}`,
    [id],
  );

const plain = (sql: string): Statement => ({ sql, parameters: [] });

/** How the app opens a write's transaction: SQLite's takes the writer's lock at once. */
export const begin = (dialect: Dialect) => plain(dialect === 'sqlite' ? 'begin immediate' : 'begin');
export const commit = plain('commit');
/**
 * SQLite's app commits the creates and updates that arrive together in one transaction, each in a savepoint
 * (src/db/group-commit.ts); the floor's group is its one write.
 */
export const savepoint = plain('savepoint grouped');
export const releaseSavepoint = plain('release savepoint grouped');
/** A write's statements in its transaction, as the app sends them (in a savepoint of its group on SQLite). */
const inTransaction = (dialect: Dialect, work: Statement[]) => [
  begin(dialect),
  ...(dialect === 'sqlite' ? [savepoint, ...work, releaseSavepoint] : work),
  commit,
];

/** A write's change-log entry, as the app writes it. */
export interface Entry {
  at: string;
  actorId: unknown;
  action: 'created' | 'updated';
  /** The changed fields as `{ field: [before, after] }` in JSON (none for a create). */
  changes: string | null;
}
const via = 'api';
const entryValues = (e: Entry) => [e.at, e.actorId, via, e.action, TABLE, e.changes, null, null, null];

/**
 * PostgreSQL writes a record and its entry in one statement (a data-modifying WITH) and SQLite and MariaDB in two:
 * this is the first, and `logEntry` the second.
 */
export const writesWithEntryAtOnce = (dialect: Dialect) => dialect === 'postgres';

/** The insert of a contact (`values` in INSERT_COLUMNS' order), which answers its id; with its entry on PostgreSQL. */
export function insertContact(dialect: Dialect, values: unknown[], entry: Entry): Statement {
  const columns = quoted(INSERT_COLUMNS);
  const insert = `insert into "${TABLE}" (${columns}) values (${marks(INSERT_COLUMNS.length)}) returning "id"`;
  if (!writesWithEntryAtOnce(dialect)) return forDialect(dialect, insert, values);
  const into = `insert into "change_log" (${quoted([...ENTRY_COLUMNS, 'record_id'])})`;
  const logged = `${into} values (${marks(ENTRY_COLUMNS.length)}, (select "id" from written))`;
  return forDialect(dialect, `with "written" as (${insert}), "logged" as (${logged}) select "id" from "written"`, [
    ...values,
    ...entryValues(entry),
  ]);
}

/** The bench's patch changes `occupation`; the app adds `updated_at`; with its entry on PostgreSQL. */
export function updateOccupation(dialect: Dialect, occupation: unknown, entry: Entry, id: unknown): Statement {
  const update = `update "${TABLE}" set "occupation" = ?, "updated_at" = ? where "id" = ?`;
  const values = [occupation, entry.at, id];
  if (!writesWithEntryAtOnce(dialect)) return forDialect(dialect, update, values);
  const into = `insert into "change_log" (${quoted([...ENTRY_COLUMNS, 'record_id'])})`;
  const logged = `${into} values (${marks(ENTRY_COLUMNS.length + 1)}) returning "id"`;
  return forDialect(dialect, `with "written" as (${update} returning "id") ${logged}`, [
    ...values,
    ...entryValues(entry),
    id,
  ]);
}

/** A write's entry on its own (SQLite, MariaDB). */
export const logEntry = (dialect: Dialect, entry: Entry, recordId: unknown): Statement =>
  forDialect(
    dialect,
    `insert into "change_log" (${quoted(ENTRY_COLUMNS_ALONE)}) values (${marks(ENTRY_COLUMNS_ALONE.length)})`,
    [entry.at, entry.actorId, via, entry.action, TABLE, recordId, entry.changes, null, null, null],
  );

/**
 * Every statement of a scenario in the order the floor sends them, for the comparison with the app's: `id` is the
 * record read or patched, and the one a create's insert answers.
 */
export function floorScript(
  dialect: Dialect,
  scenario: ReadScenario | 'get' | 'create' | 'patch',
  a: ReadArgs & { id?: unknown; body?: Record<string, unknown>; occupation?: string },
): Statement[] {
  const at = new Date().toISOString();
  const separate = !writesWithEntryAtOnce(dialect);
  switch (scenario) {
    case 'get':
      return [routeGetById(dialect, a.id)];
    case 'create': {
      const entry: Entry = { at, actorId: 1, action: 'created', changes: null };
      return inTransaction(dialect, [
        ...referenceChecks(dialect, a.body ?? {}, 1),
        insertContact(dialect, contactValues(a.body ?? {}, 1, at), entry),
        ...(separate ? [logEntry(dialect, entry, a.id)] : []),
        getById(dialect, a.id),
      ]);
    }
    case 'patch': {
      // The app's capture reads a stand-in row of nulls before it (bench/app-sql.ts).
      const entry: Entry = { at, actorId: 1, action: 'updated', changes: changeOf('occupation', null, a.occupation) };
      return inTransaction(dialect, [
        lockById(dialect, a.id),
        updateOccupation(dialect, a.occupation, entry, a.id),
        ...(separate ? [logEntry(dialect, entry, a.id)] : []),
        getById(dialect, a.id),
      ]);
    }
    default: {
      const { count, page, searching } = listStatements(dialect, scenario, a);
      if (!count) return [page];
      return searching ? [begin(dialect), SEARCHING, count, commit, page] : [count, page];
    }
  }
}
