// SQL whose spelling differs between SQLite and PostgreSQL. The callers
// (records, accounts) hand over the database or transaction they query; the
// dialect is read from it here and never leaves db/.
import { type Expression, type Kysely, MysqlAdapter, type RawBuilder, type SqlBool, SqliteAdapter, sql } from 'kysely';
import type { ColumnVariant } from '../schema/kinds.ts';

/** The databases Leadbook runs on: those the field kinds spell their columns for. */
export type Dialect = ColumnVariant;

/** The dialect a database handle or a transaction speaks. */
/**
 * Whether a write and its change-log entry go in one statement (PostgreSQL: a data-modifying WITH), which saves the
 * entry its own round trip; SQLite, in the process, writes them one after the other.
 */
export const writesWithEntryAtOnce = <T>(db: Kysely<T>) => dialectOf(db) === 'postgres';

/**
 * Whether many rows go in as one array per column (PostgreSQL: INSERT … SELECT FROM unnest(…)) rather than a VALUES
 * list of a parameter per value, which the server parses and plans at length: 100,000 contacts into a table without
 * indexes took 3.7–3.9 s in VALUES lists of 1,578 rows, 1.4–1.5 s as arrays of 5,000.
 */
export const insertsArrays = <T>(db: Kysely<T>) => dialectOf(db) === 'postgres';

export function dialectOf<T>(db: Kysely<T>): Dialect {
  const { adapter } = db.getExecutor();
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  return adapter instanceof MysqlAdapter ? 'mysql' : 'postgres';
}

/**
 * `expression IN values`. PostgreSQL gets the values as one array parameter (`= any($1)`): it plans a few thousand
 * bind parameters far slower than one array of them (an import looks a batch of 2,000 keys up at once).
 */
export function inValues<T>(
  db: Kysely<T>,
  expression: Expression<unknown>,
  values: readonly unknown[],
): Expression<SqlBool> {
  if (dialectOf(db) === 'postgres')
    return sql<SqlBool>`${expression} = any(${values.map((v) => (v === null ? null : String(v)))})`;
  return sql<SqlBool>`${expression} in (${sql.join(values)})`;
}

/** `column IS DISTINCT FROM value`: unequal, with NULL a value like any other (MariaDB spells it `NOT <=>`). */
export function distinctFrom<T>(db: Kysely<T>, column: string, value: unknown): Expression<SqlBool> {
  return dialectOf(db) === 'mysql'
    ? sql<SqlBool>`not (${sql.ref(column)} <=> ${value})`
    : sql<SqlBool>`${sql.ref(column)} is distinct from ${value}`;
}

const LIKE_SPECIAL = /[\\%_]/g;

/**
 * Case-insensitive substring match where `%` and `_` in the term are literal:
 * the lower-cased text holds the lower-cased term.
 * PostgreSQL: LIKE on lower(); `lowered` says the column is lower-case
 * already (search_text), so that its trigram index serves the match.
 * SQLite: its lower() and LIKE fold only ASCII, so lb_fold lower-cases.
 */
export function containsText<T>(db: Kysely<T>, column: string, term: string, lowered = false): Expression<SqlBool> {
  const dialect = dialectOf(db);
  if (dialect !== 'sqlite') {
    const pattern = `%${term.replace(LIKE_SPECIAL, '\\$&')}%`;
    const lower = lowered ? sql.ref(column) : sql`lower(${sql.ref(column)})`;
    if (dialect === 'postgres') return sql<SqlBool>`${lower} like lower(${pattern}) escape '\\'`;
    // MariaDB compares the text's bytes: the same matches (UTF-8 holds a character's bytes nowhere but in it, and
    // `%` and `_` are escaped), found by its Boyer-Moore search, which it keeps from multi-byte character sets. On
    // 100,000 contacts a count of "solar" read 110 ms against 205 ms. It reads a backslash in a literal as an escape,
    // so its one backslash is written twice.
    return sql<SqlBool>`cast(${lower} as binary) like lower(${pattern}) escape '\\\\'`;
  }
  return sql<SqlBool>`instr(lb_fold(${sql.ref(column)}), ${term.toLowerCase()}) > 0`;
}

/** Whether rows are best loaded by one LOAD DATA LOCAL INFILE (MariaDB; connection.ts, loadDataLocal). */
export const loadsByLoadData = <T>(db: Kysely<T>) => dialectOf(db) === 'mysql';

/**
 * Whether two reads by key cost less than one join of the same rows. On a server the join saves a round trip; SQLite
 * has none, and better-sqlite3 took 34 µs for a token's row joined to its user's against 1.7 + 2.5 µs for the two.
 */
export const readsByKeyBeatAJoin = <T>(db: Kysely<T>) => dialectOf(db) === 'sqlite';

/**
 * Whether the search index answers with every match before the few newest can be picked. PostgreSQL's trigram index
 * does (a bitmap of thousands of rows, read from the table and sorted for the five newest), and its guess of how many
 * rows a word matches can choose that for a common word; a search matched by many rows is then better read by walking
 * the newest rows and testing each. SQLite's FTS5 index gives its matches in rowid order already.
 */
export const searchReadsEveryMatch = <T>(db: Kysely<T>) => dialectOf(db) === 'postgres';

/**
 * What PostgreSQL reads every match of a search with: sequential scans priced out, and room for the trigram index's
 * answer.
 * - The planner prices LIKE on a long text far below its cost, guesses a word's rows from a histogram of 100 values,
 *   and prices in the index's pending list of recent writes. Together they chose a sequential scan in a bench run:
 *   194 ms for a one-word count that the index answers in 10 at 100,000 contacts.
 * - The index answers with a bitmap of the rows' pages. In the default 4 MB it holds about 65,000 pages; past that it
 *   keeps whole pages and every row on them is tested. At 1,300,000 rows, a word on 11,531 pages counted in 49–59 ms
 *   with room for them all, and in 181–188 ms (on three processes) in 400 kB. 32 MB holds about 500,000 pages: a
 *   word in a twentieth of 10,000,000 contacts.
 */
const EVERY_MATCH_SETTINGS = { enable_seqscan: 'off', work_mem: '32MB' };

/**
 * Runs `read`, a read of every row that holds `words` (a count, a bulk action's ids), on PostgreSQL in a transaction
 * of its own with EVERY_MATCH_SETTINGS. Other reads, a read in the caller's transaction (none searches in one), and
 * the other databases read as they are.
 */
export async function readingEveryMatch<T, R>(
  db: Kysely<T>,
  words: readonly string[],
  read: (db: Kysely<T>) => Promise<R>,
): Promise<R> {
  if (words.length === 0 || db.isTransaction || dialectOf(db) !== 'postgres') return read(db);
  const settings = Object.entries(EVERY_MATCH_SETTINGS).map(
    ([name, value]) => sql`set_config(${sql.lit(name)}, ${sql.lit(value)}, true)`,
  );
  return db.transaction().execute(async (trx) => {
    await sql`select ${sql.join(settings)}`.execute(trx);
    return read(trx);
  });
}

/**
 * Why a server reached by a `mysql://` URL cannot hold Leadbook (its `version()`), or null. MariaDB 10.5 and later
 * answer `INSERT … RETURNING` and `DELETE … RETURNING`, which the write path relies on; MySQL (8 included) has neither.
 */
export function mysqlServerRefusal(version: string): string | null {
  // (Some MariaDB builds say 5.5.5- first, for old MySQL clients.)
  const [major = 0, minor = 0] = version
    .replace(/^5\.5\.5-/, '')
    .split(/[.-]/)
    .map(Number);
  if (!/mariadb/i.test(version))
    return `this server is MySQL ${version}; Leadbook runs on MariaDB 10.5 or later (MySQL has no INSERT … RETURNING)`;
  if (major < 10 || (major === 10 && minor < 5))
    return `this server is MariaDB ${version}; Leadbook needs MariaDB 10.5 or later (INSERT … RETURNING)`;
  return null;
}

const UNIQUE_VIOLATION = new Set(['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'ER_DUP_ENTRY']);
const FOREIGN_KEY_VIOLATION = new Set([
  '23503',
  'SQLITE_CONSTRAINT_FOREIGNKEY',
  'ER_NO_REFERENCED_ROW_2',
  'ER_ROW_IS_REFERENCED_2',
]);
const codeOf = (error: unknown) => (error as { code?: string } | null)?.code ?? '';
/** Whether a statement failed on a unique key (or primary key) that another row holds. */
export const isUniqueViolation = (error: unknown) => UNIQUE_VIOLATION.has(codeOf(error));
/** Whether a statement failed on a foreign key: a reference to no row, or a row still referenced. */
export const isForeignKeyViolation = (error: unknown) => FOREIGN_KEY_VIOLATION.has(codeOf(error));

/** Words long enough for a trigram index (three characters). */
export const indexable = (word: string) => [...word].length >= 3;

const ftsQuery = (words: readonly string[]) =>
  words.map((w) => `"${w.toLowerCase().replaceAll('"', '""')}"`).join(' AND ');

/**
 * Rows where each of `words` occurs in one of the searchable text `columns`,
 * answered by the trigram index of migration T0003 (a word, holding no
 * whitespace, can only match inside one field of the newline-joined text):
 * PostgreSQL: LIKE on the generated, lower-cased `search_text` column, GIN-indexed.
 * SQLite: one query of the FTS5 trigram table over lb_fold-ed text; a word
 * shorter than three characters has no trigram, so it is matched field by
 * field instead.
 */
export function matchesWords<T>(
  db: Kysely<T>,
  table: string,
  primaryKey: string,
  columns: readonly string[],
  words: readonly string[],
): Expression<SqlBool> {
  if (dialectOf(db) !== 'sqlite')
    return sql<SqlBool>`(${sql.join(
      words.map((w) => containsText(db, 'search_text', w, true)),
      sql` and `,
    )})`;
  const parts = words
    .filter((w) => !indexable(w))
    .map(
      (w) =>
        sql`(${sql.join(
          columns.map((c) => containsText(db, c, w)),
          sql` or `,
        )})`,
    );
  const long = words.filter(indexable);
  if (long.length) {
    const fts = sql.table(`${table}_search`);
    parts.unshift(
      sql`${sql.ref(`${table}.${primaryKey}`)} in (select rowid from ${fts} where ${fts} match ${ftsQuery(long)})`,
    );
  }
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/** Whether the search index alone can count the rows holding every one of `words` (SQLite, every word indexable). */
export const wordsCountable = <T>(db: Kysely<T>, words: readonly string[]) =>
  dialectOf(db) === 'sqlite' && words.every(indexable);

/** How many rows hold every one of `words`, counted in the search index alone (see wordsCountable). */
export async function countWordMatches<T>(db: Kysely<T>, table: string, words: readonly string[]): Promise<number> {
  const fts = sql.table(`${table}_search`);
  const { rows } = await sql<{
    n: number | bigint;
  }>`select count(*) as n from ${fts} where ${fts} match ${ftsQuery(words)}`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * NULL is the smallest value on every database, whatever the direction (MariaDB's own order, which it cannot be
 * told). A column that cannot hold NULL is ordered plainly: PostgreSQL would otherwise not walk its index backwards
 * for `desc nulls last` (its primary key, say).
 */
export function orderTerm<T>(
  db: Kysely<T>,
  column: string | Expression<unknown>,
  desc: boolean,
  nullable = true,
): RawBuilder<unknown> {
  const ref = typeof column === 'string' ? sql.ref(column) : column;
  if (!nullable || dialectOf(db) === 'mysql') return desc ? sql`${ref} desc` : sql`${ref} asc`;
  return desc ? sql`${ref} desc nulls last` : sql`${ref} asc nulls first`;
}

/**
 * A column of sort keys (schema/keys.ts), which are made to be compared byte by byte: as SQLite compares text, and
 * on PostgreSQL in the "C" collation whatever the database's (an ICU or glibc one skips the keys' separator and puts
 * "Ann" after "Annabel").
 */
export function byteOrdered<T>(db: Kysely<T>, column: string): Expression<string> {
  return dialectOf(db) === 'postgres' ? sql<string>`${sql.ref(column)} collate "C"` : sql.ref<string>(column);
}
