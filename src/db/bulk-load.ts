// A bulk load's indexes, kept once per load instead of row by row. Inside the
// load's own transaction, so that it commits whole with its rows or not at all:
//   SQLite: a trigger that copies each inserted row into another table (the
//   FTS5 search index of migration T0003) is dropped for the load, and its
//   insert runs once, as INSERT … SELECT over the rows the load added, with the
//   trigger's own expression: the index holds what row-by-row writes would
//   have put there. FTS5 may hold 16 MiB of what it indexes before writing it
//   out, against its usual 1 MiB, for that insert (and set back after it).
//   A load that fills a table (`fills`: leadbook seed), when the table is
//   empty: its indexes are dropped and built again at the end (a sort, against
//   a B-tree insert per row and index), the trigram GIN index on PostgreSQL
//   too. DROP INDEX locks the table until the load commits: its readers wait,
//   as they would see no rows before the commit anyway. (Not for an import's
//   batches: two processes importing at once would each wait for the other.)
//   MariaDB: as it is (its DDL commits the transaction it is in).
//   Many updates (an import's, a bulk edit's), SQLite: a trigger that deletes
//   an updated row's copy and inserts it again (the search index's) is dropped
//   for them, and its delete and insert run once over their ids. FTS5 writes
//   what it holds at the end of each statement that wrote it: 2,000 one-row
//   UPDATEs of a searchable column took 3.9 s, one UPDATE of 2,000 rows 0.2 s.
// Unique indexes and those behind constraints stay, so a duplicate is refused
// on the row that brings it, as in any other write.
import { sql } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { Executor } from './tables.ts';

interface Ddl {
  name: string;
  sql: string;
}

/** An AFTER INSERT trigger that is one `insert into … values (…new.…)`, and the same insert for many rows at once. */
interface CopyingTrigger extends Ddl {
  target: string;
  columns: string;
  values: string;
  /** An AFTER UPDATE trigger's: the columns whose update fires it. */
  watched?: string[];
}

const COPYING = new RegExp(
  String.raw`^create trigger \S+ after insert on (?<table>\S+) begin\s+` +
    String.raw`insert into (?<target>\S+) \((?<columns>[^)]*)\) values \((?<values>.*)\);\s*end$`,
  'is',
);
/** An AFTER UPDATE trigger that deletes the row's copy by rowid, then inserts it as COPYING does. */
const RECOPYING = new RegExp(
  String.raw`^create trigger \S+ after update of (?<watched>[^;]*?) on (?<table>\S+) begin\s+` +
    String.raw`delete from (?<target>\S+) where rowid = old\.\w+;\s+` +
    String.raw`insert into \k<target> \((?<columns>[^)]*)\) values \((?<values>.*)\);\s*end$`,
  'is',
);

async function sqliteTriggers(trx: Executor, table: string, shape = COPYING): Promise<CopyingTrigger[]> {
  const { rows } =
    await sql<Ddl>`select name, sql from sqlite_master where type = 'trigger' and tbl_name = ${table}`.execute(trx);
  return rows.flatMap((t) => {
    const found = shape.exec(t.sql.trim())?.groups;
    if (!found || found.table !== table) return [];
    const { target, columns, values, watched } = found;
    return [
      {
        ...t,
        target: target!,
        columns: columns!,
        values: values!.replace(/\bnew\./gi, `${table}.`),
        watched: watched?.split(',').map((c) => c.trim()),
      },
    ];
  });
}

/** The table's indexes that may be built after a load: neither unique nor behind a constraint. */
async function rebuildableIndexes(trx: Executor, table: string): Promise<Ddl[]> {
  if (dialectOf(trx) === 'sqlite') {
    const { rows } = await sql<Ddl>`select name, sql from sqlite_master
      where type = 'index' and tbl_name = ${table} and sql is not null and sql not like 'create unique%'`.execute(trx);
    return rows;
  }
  const { rows } = await sql<Ddl>`select i.indexname as name, i.indexdef as sql from pg_indexes i
      join pg_class c on c.relname = i.indexname and c.relnamespace = to_regnamespace(i.schemaname)
      join pg_index x on x.indexrelid = c.oid
    where i.tablename = ${table} and i.schemaname = current_schema() and not x.indisunique
      and not exists (select 1 from pg_constraint k where k.conindid = c.oid)`.execute(trx);
  return rows;
}

/** Whether `table` has no row. */
export const isEmpty = async (trx: Executor, table: string) =>
  (await sql`select 1 from ${sql.table(table)} limit 1`.execute(trx)).rows.length === 0;

/**
 * Runs `load` (rows inserted into `table`, in the transaction `trx`) with the table's indexes kept once for the whole
 * load, as the header says; `indexing` is told when the load's rows are in and the indexes are being built.
 */
export async function loadInOnePass<T>(
  trx: Executor,
  table: string,
  load: () => Promise<T>,
  options: { fills?: boolean; indexing?: () => void } = {},
): Promise<T> {
  const dialect = dialectOf(trx);
  if (dialect === 'mysql') return load();
  const run = (text: string) => sql.raw(text).execute(trx);
  const indexes = options.fills && (await isEmpty(trx, table)) ? await rebuildableIndexes(trx, table) : [];
  const triggers = dialect === 'sqlite' ? await sqliteTriggers(trx, table) : [];
  // The rows the load adds are those after the last one now (SQLite's rowids only grow while rows are added).
  const last = triggers.length
    ? (await sql<{ n: number | bigint | null }>`select max(rowid) as n from ${sql.table(table)}`.execute(trx)).rows[0]
        ?.n
    : null;
  for (const index of indexes) await run(`drop index ${index.name}`);
  for (const trigger of triggers) await run(`drop trigger ${trigger.name}`);
  const loaded = await load();
  options.indexing?.();
  if (dialect === 'postgres' && indexes.length) await run(`set local maintenance_work_mem = '256MB'`);
  for (const index of indexes) await run(index.sql);
  for (const trigger of triggers) {
    await roomily(trx, trigger.target, () =>
      sql`${copyOf(trigger, table)} where ${sql.ref(`${table}.rowid`)} > ${BigInt(last ?? 0)}`.execute(trx),
    );
    await run(trigger.sql);
  }
  return loaded;
}

/** FTS5's own `hashsize`: the bytes of postings it holds before it writes them out as a segment. */
const FTS5_HASHSIZE = 1n << 20n;
/**
 * A load's: each segment FTS5 writes is merged with others later, so fewer, larger ones cost less. Copying 100,000
 * contacts into the search index in batches of 5,000: 5.9–7.0 s with 1 MiB, 3.7–5.2 s with 4 to 64 MiB.
 */
const LOAD_HASHSIZE = 16n << 20n;

/**
 * Runs `write` (into `index`) with FTS5's `hashsize` raised to LOAD_HASHSIZE, and put back as it was after it, in the
 * same transaction; an index that is not FTS5 is written as it is.
 */
async function roomily<T>(trx: Executor, index: string, write: () => Promise<T>): Promise<T> {
  const made = await sql<Ddl>`select name, sql from sqlite_master where name = ${index}`.execute(trx);
  if (!/^create virtual table \S+ using fts5\b/i.test(made.rows[0]?.sql ?? '')) return write();
  const config = sql.table(`${index}_config`);
  const before = (await sql<{ v: unknown }>`select v from ${config} where k = 'hashsize'`.execute(trx)).rows[0]?.v;
  const set = (size: unknown) =>
    sql`insert into ${sql.table(index)} (${sql.ref(index)}, rank) values ('hashsize', ${size})`.execute(trx);
  await set(LOAD_HASHSIZE);
  const written = await write();
  // Unset before: set to what FTS5 reads for none (its settings' table may not be written but through it).
  await set(before ?? FTS5_HASHSIZE);
  return written;
}

const copyOf = (trigger: CopyingTrigger, table: string) =>
  sql.raw(`insert into ${trigger.target} (${trigger.columns}) select ${trigger.values} from ${table}`);

/**
 * Runs `update` (the rows of `table` with these ids updated, in the transaction `trx`, in some of `columns`) with their
 * copies in the search index written once for them all, as the header says (SQLite; elsewhere `update` alone). A row
 * `update` left as it was is copied again as it is; updates of none of the columns the index copies leave it be.
 */
export async function updateInOnePass<T>(
  trx: Executor,
  table: string,
  ids: readonly bigint[],
  columns: Iterable<string>,
  update: () => Promise<T>,
): Promise<T> {
  if (dialectOf(trx) !== 'sqlite' || ids.length === 0) return update();
  const written = new Set(columns);
  const triggers = (await sqliteTriggers(trx, table, RECOPYING)).filter((t) => t.watched!.some((c) => written.has(c)));
  if (triggers.length === 0) return update();
  for (const trigger of triggers) await sql.raw(`drop trigger ${trigger.name}`).execute(trx);
  const updated = await update();
  // The ids as one JSON array: FTS5 looks a rowid up for `rowid = ?`, but scans the whole index for an IN list.
  const listed = sql`(select value from json_each(${`[${ids.join(',')}]`}))`;
  for (const trigger of triggers) {
    await roomily(trx, trigger.target, async () => {
      await sql`delete from ${sql.table(trigger.target)} where rowid in ${listed}`.execute(trx);
      await sql`${copyOf(trigger, table)} where ${sql.ref(`${table}.rowid`)} in ${listed}`.execute(trx);
    });
    await sql.raw(trigger.sql).execute(trx);
  }
  return updated;
}
