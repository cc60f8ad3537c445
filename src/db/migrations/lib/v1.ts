// Version 1 of the helpers that generated migrations call. FROZEN: a migration
// written against v1 must do the same thing forever, so this file never
// changes behaviour once released; a new behaviour goes into v2.ts, and new
// migrations call that. It imports nothing of the app.
//
// A generated migration is a list of steps (plain data), applied in order:
//   SQLite: in one transaction with foreign keys off (so that a table rebuilt
//   to change a column does not set off ON DELETE actions), checked with
//   foreign_key_check before the commit.
//   PostgreSQL: in the migrator's transaction.
import { type Kysely, SqliteAdapter, sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';
export type OnDelete = 'restrict' | 'set null' | 'cascade';

export interface Column {
  /** The column type on each dialect, as the field kind wrote it when the migration was made. */
  type: Record<Dialect, string>;
  notNull: boolean;
  primary?: boolean;
  /** A literal: filled into existing rows when the column is added. */
  default?: string | number | boolean;
  /** The only values the column may hold. */
  check?: readonly string[];
  references?: { table: string; onDelete: OnDelete };
}

export interface Table {
  /** In order; the primary key first. */
  columns: Record<string, Column>;
  /** Columns with an index on (column, id): sorts and keyset pages walk it. */
  sortIndexes: readonly string[];
  /** Reference columns without a sort index get an index of their own (joins, has-many lists, ON DELETE). */
  referenceIndexes: readonly string[];
  /** Columns no two rows may share, compared case-insensitively. */
  uniqueLower: readonly string[];
  /** Text columns of the search index, in order (empty: none). */
  search: readonly string[];
  /** Whether record_counts keeps the table's row count. */
  counted: boolean;
}

export type Step =
  | { op: 'createTable'; table: string; spec: Table }
  | { op: 'dropTable'; table: string; spec: Table }
  | { op: 'addColumn'; table: string; column: string; spec: Column }
  | { op: 'dropColumn'; table: string; column: string }
  | { op: 'renameColumn'; table: string; from: string; to: string }
  /** Changes that SQLite cannot make in place: it rebuilds the table as `spec`; PostgreSQL alters each column. */
  | { op: 'alterColumns'; table: string; changes: { column: string; from: Column; to: Column }[]; spec: Table }
  | { op: 'createIndex'; table: string; column: string; index: 'sort' | 'reference' | 'uniqueLower' }
  | { op: 'dropIndex'; table: string; column: string; index: 'sort' | 'reference' | 'uniqueLower' }
  /** Rebuilds the search index over `columns` (none: removes it). */
  | { op: 'search'; table: string; columns: readonly string[] };

const INDEX_SUFFIX = { sort: 'id', reference: 'ref', uniqueLower: 'lower' } as const;
const indexName = (table: string, column: string, index: keyof typeof INDEX_SUFFIX) =>
  `${table}_${column}_${INDEX_SUFFIX[index]}`;
const quote = (value: string | number | boolean) =>
  typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value);
const literal = (dialect: Dialect, value: string | number | boolean) =>
  dialect === 'sqlite' && typeof value === 'boolean' ? String(Number(value)) : quote(value);

function columnSql(dialect: Dialect, name: string, c: Column, withReference = true): string {
  const parts = [name, c.type[dialect]];
  if (c.notNull && !c.primary) parts.push('not null');
  if (c.default !== undefined) parts.push(`default ${literal(dialect, c.default)}`);
  // SQLite has no boolean type: 0/1 in a numeric column, and nothing else.
  if (dialect === 'sqlite' && c.type.sqlite === 'boolean') parts.push(`check (${name} in (0, 1))`);
  if (c.check) parts.push(`check (${name} in (${c.check.map(quote).join(', ')}))`);
  if (withReference && c.references)
    parts.push(`references ${c.references.table} (id) on delete ${c.references.onDelete}`);
  return parts.join(' ');
}

export type Run = (text: string) => Promise<unknown>;

async function createIndex(
  run: Run,
  dialect: Dialect,
  table: string,
  column: string,
  index: keyof typeof INDEX_SUFFIX,
) {
  const name = indexName(table, column, index);
  if (index === 'uniqueLower') return run(`create unique index if not exists ${name} on ${table} (lower(${column}))`);
  if (index === 'reference') return run(`create index if not exists ${name} on ${table} (${column})`);
  // NULL sorts as the smallest value on both databases (SQLite's own rule).
  return run(
    `create index if not exists ${name} on ${table} (${column}${dialect === 'postgres' ? ' nulls first' : ''}, id)`,
  );
}

const joined = (columns: readonly string[], prefix: string, newline: string) =>
  columns.map((c) => `coalesce(${prefix}${c}, '')`).join(` || ${newline} || `);

/**
 * The search index of migration T0003, for any table: an FTS5 trigram table kept by triggers (SQLite), a generated
 * lower-cased column with a pg_trgm index (PostgreSQL).
 */
async function dropSearch(run: Run, dialect: Dialect, table: string) {
  if (dialect === 'sqlite') {
    for (const t of ['insert', 'update', 'delete']) await run(`drop trigger if exists ${table}_search_${t}`);
    await run(`drop table if exists ${table}_search`);
  } else {
    await run(`alter table ${table} drop column if exists search_text`);
  }
}

async function createSearch(run: Run, dialect: Dialect, table: string, columns: readonly string[]) {
  if (columns.length === 0) return;
  if (dialect === 'postgres') {
    await run(
      `alter table ${table} add column search_text text generated always as ` +
        `(lower(${joined(columns, '', 'chr(10)')})) stored`,
    );
    await run(`create index ${table}_search_text on ${table} using gin (search_text gin_trgm_ops)`);
    return;
  }
  const fts = `${table}_search`;
  const body = (prefix: string) => `lb_fold(${joined(columns, prefix, 'char(10)')})`;
  await run(
    `create virtual table ${fts} using fts5(body, content='', contentless_delete=1, ` +
      `tokenize='trigram case_sensitive 1')`,
  );
  await run(`insert into ${fts} (rowid, body) select id, ${body('')} from ${table}`);
  await run(`create trigger ${table}_search_insert after insert on ${table} begin
    insert into ${fts} (rowid, body) values (new.id, ${body('new.')}); end`);
  await run(`create trigger ${table}_search_update after update of ${columns.join(', ')} on ${table} begin
    delete from ${fts} where rowid = old.id;
    insert into ${fts} (rowid, body) values (new.id, ${body('new.')}); end`);
  await run(`create trigger ${table}_search_delete after delete on ${table} begin
    delete from ${fts} where rowid = old.id; end`);
}

/** Row counters as migration T0003 keeps them (its functions lb_count_inserted/deleted on PostgreSQL). */
async function createCounters(run: Run, dialect: Dialect, table: string) {
  await run(`delete from record_counts where table_name = '${table}'`);
  await run(`insert into record_counts (table_name, shard, n) select '${table}', 0, count(*) from ${table}`);
  if (dialect === 'sqlite') {
    await run(`create trigger ${table}_count_insert after insert on ${table} begin
      update record_counts set n = n + 1 where table_name = '${table}' and shard = 0; end`);
    await run(`create trigger ${table}_count_delete after delete on ${table} begin
      update record_counts set n = n - 1 where table_name = '${table}' and shard = 0; end`);
    return;
  }
  await run(
    `create trigger ${table}_count_insert after insert on ${table} referencing new table as new_rows ` +
      'for each statement execute function lb_count_inserted()',
  );
  await run(
    `create trigger ${table}_count_delete after delete on ${table} referencing old table as old_rows ` +
      'for each statement execute function lb_count_deleted()',
  );
}

/** Everything around a table's columns: indexes, search, counters. */
async function dressTable(run: Run, dialect: Dialect, table: string, spec: Table) {
  for (const column of spec.sortIndexes) await createIndex(run, dialect, table, column, 'sort');
  for (const column of spec.referenceIndexes) await createIndex(run, dialect, table, column, 'reference');
  for (const column of spec.uniqueLower) await createIndex(run, dialect, table, column, 'uniqueLower');
  await createSearch(run, dialect, table, spec.search);
  if (spec.counted) await createCounters(run, dialect, table);
}

const createTableSql = (dialect: Dialect, table: string, spec: Table, name = table) =>
  `create table ${name} (${Object.entries(spec.columns)
    .map(([n, c]) => columnSql(dialect, n, c))
    .join(', ')})`;

/**
 * A reference added to rows that already exist: values that name no record
 * are cleared (set null), their rows deleted (cascade) or the migration
 * stops (restrict), before the foreign key holds.
 */
async function settleDanglingReferences(run: Run, table: string, column: string, c: Column) {
  if (!c.references) return;
  const dangling = `${column} is not null and ${column} not in (select id from ${c.references.table})`;
  if (c.references.onDelete === 'set null') await run(`update ${table} set ${column} = null where ${dangling}`);
  else if (c.references.onDelete === 'cascade') await run(`delete from ${table} where ${dangling}`);
}

/**
 * SQLite's way to change columns: a new table, the rows copied, the old one dropped, the new one renamed and
 * dressed.
 */
async function rebuildSqliteTable(run: Run, table: string, spec: Table, changed: readonly string[]) {
  const next = `${table}_rebuilt`;
  const names = Object.keys(spec.columns).join(', ');
  await run(createTableSql('sqlite', table, spec, next));
  await run(`insert into ${next} (${names}) select ${names} from ${table}`);
  for (const column of changed) await settleDanglingReferences(run, next, column, spec.columns[column]!);
  // An id once given is never given again: the new table continues the old one's sequence.
  await run(`insert into sqlite_sequence (name, seq) select '${next}', 0 from sqlite_sequence where name = '${table}'
    and not exists (select 1 from sqlite_sequence where name = '${next}')`);
  await run(`update sqlite_sequence set seq = (select max(seq) from sqlite_sequence
    where name in ('${table}', '${next}')) where name = '${next}'`);
  await dropSearch(run, 'sqlite', table);
  await run(`drop table ${table}`);
  await run(`alter table ${next} rename to ${table}`);
  await dressTable(run, 'sqlite', table, spec);
}

async function alterPostgresColumn(run: Run, table: string, column: string, from: Column, to: Column) {
  const alter = (text: string) => run(`alter table ${table} alter column ${column} ${text}`);
  if (from.type.postgres !== to.type.postgres) await alter(`type ${to.type.postgres}`);
  if (from.notNull !== to.notNull) await alter(to.notNull ? 'set not null' : 'drop not null');
  if (from.default !== to.default)
    await alter(to.default === undefined ? 'drop default' : `set default ${literal('postgres', to.default)}`);
  if (JSON.stringify(from.check) !== JSON.stringify(to.check)) {
    await run(`alter table ${table} drop constraint if exists ${table}_${column}_check`);
    if (to.check)
      await run(
        `alter table ${table} add constraint ${table}_${column}_check ` +
          `check (${column} in (${to.check.map(quote).join(', ')}))`,
      );
  }
  if (JSON.stringify(from.references) !== JSON.stringify(to.references)) {
    await run(`alter table ${table} drop constraint if exists ${table}_${column}_fkey`);
    if (to.references) {
      await settleDanglingReferences(run, table, column, to);
      await run(
        `alter table ${table} add constraint ${table}_${column}_fkey foreign key (${column}) ` +
          `references ${to.references.table} (id) on delete ${to.references.onDelete}`,
      );
    }
  }
}

export async function applyStep(run: Run, dialect: Dialect, step: Step) {
  switch (step.op) {
    case 'createTable':
      await run(createTableSql(dialect, step.table, step.spec));
      return dressTable(run, dialect, step.table, step.spec);
    case 'dropTable':
      await dropSearch(run, dialect, step.table);
      await run(`delete from record_counts where table_name = '${step.table}'`);
      return run(`drop table ${step.table}`);
    case 'addColumn':
      // SQLite adds a column with a reference only when its default is NULL: rows that exist hold none.
      return run(`alter table ${step.table} add column ${columnSql(dialect, step.column, step.spec)}`);
    case 'dropColumn':
      return run(`alter table ${step.table} drop column ${step.column}`);
    case 'renameColumn':
      return run(`alter table ${step.table} rename column ${step.from} to ${step.to}`);
    case 'alterColumns':
      if (dialect === 'sqlite')
        return rebuildSqliteTable(
          run,
          step.table,
          step.spec,
          step.changes.map((c) => c.column),
        );
      for (const c of step.changes) await alterPostgresColumn(run, step.table, c.column, c.from, c.to);
      return;
    case 'createIndex':
      return createIndex(run, dialect, step.table, step.column, step.index);
    case 'dropIndex':
      return run(`drop index if exists ${indexName(step.table, step.column, step.index)}`);
    case 'search':
      await dropSearch(run, dialect, step.table);
      return createSearch(run, dialect, step.table, step.columns);
  }
}

export async function apply(db: Kysely<any>, steps: readonly Step[]): Promise<void> {
  return applyEach(db, steps, applyStep);
}

/**
 * Applies `steps` one by one with `each` (v1's own, or a later version's that adds steps), in the way the head of
 * this file says; later versions call it, so that their migrations run the same way.
 */
export async function applyEach<S>(
  db: Kysely<any>,
  steps: readonly S[],
  each: (run: Run, dialect: Dialect, step: S) => Promise<unknown>,
): Promise<void> {
  const dialect: Dialect = db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
  const run: Run = (text) => sql.raw(text).execute(db);
  if (dialect === 'postgres') {
    for (const step of steps) await each(run, dialect, step);
    return;
  }
  await run('pragma foreign_keys = off');
  try {
    await run('begin immediate');
    try {
      for (const step of steps) await each(run, dialect, step);
      const broken = await sql<{ table: string }>`select * from pragma_foreign_key_check`.execute(db);
      if (broken.rows.length)
        throw new Error(`the migration leaves references to missing records in ${broken.rows[0]!.table}`);
      await run('commit');
    } catch (error) {
      await run('rollback');
      throw error;
    }
  } finally {
    await run('pragma foreign_keys = on');
  }
}
