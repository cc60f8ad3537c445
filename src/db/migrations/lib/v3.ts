// Version 3 of the helpers that generated migrations call. FROZEN, as v1.ts and v2.ts are. v3 is v2 on SQLite and
// PostgreSQL, and the same steps spelled for MariaDB/MySQL, the third database (whose schema starts at its baseline,
// migrations/mysql/): a column's type for it is `type.mysql`. There, as in the baseline, tables are utf8mb4 with the
// binary collation, a reference is a table-level foreign key (InnoDB ignores one written on the column), a
// case-insensitive unique index is on a virtual `<column>_lower` column, the search text is a stored generated
// column, and the row counters are row triggers on one shard. MariaDB commits each change of the schema at once, so
// a migration cut short is finished by hand (its steps say what they did). It imports nothing of the app.
import { type Kysely, MysqlAdapter, sql } from 'kysely';
import * as v1 from './v1.ts';
import * as v2 from './v2.ts';

export type Dialect = v1.Dialect | 'mysql';
export type { OnDelete } from './v1.ts';

export interface Column extends Omit<v1.Column, 'type'> {
  /** The column type on each dialect, as the field kind wrote it when the migration was made. */
  type: Record<Dialect, string>;
}

export interface Table extends Omit<v2.Table, 'columns'> {
  columns: Record<string, Column>;
}

type Change = { column: string; from: Column; to: Column };
type Retyped<S> = S extends { op: 'alterColumns' }
  ? Omit<S, 'spec' | 'changes'> & { spec: Table; changes: Change[] }
  : S extends { spec: v2.Table }
    ? Omit<S, 'spec'> & { spec: Table }
    : S extends { spec: v1.Column }
      ? Omit<S, 'spec'> & { spec: Column }
      : S;

export type Step = Retyped<v2.Step>;

const quote = (value: string | number | boolean) =>
  typeof value === 'string' ? `'${value.replaceAll("'", "''").replaceAll('\\', '\\\\')}'` : String(value);
const id = (name: string) => `\`${name}\``;

function columnSql(name: string, c: Column): string {
  const parts = [id(name), c.type.mysql];
  if (c.notNull && !c.primary) parts.push('not null');
  if (c.default !== undefined) parts.push(`default ${quote(c.default)}`);
  if (c.check) parts.push(`check (${id(name)} in (${c.check.map(quote).join(', ')}))`);
  return parts.join(' ');
}

const foreignKey = (table: string, column: string, c: Column) =>
  `alter table ${id(table)} add constraint ${id(`${table}_${column}_fkey`)} foreign key (${id(column)}) ` +
  `references ${id(c.references!.table)} (id) on delete ${c.references!.onDelete}`;

const INDEX_SUFFIX = { sort: 'id', reference: 'ref', uniqueLower: 'lower' } as const;
const indexName = (table: string, column: string, index: keyof typeof INDEX_SUFFIX) =>
  `${table}_${column}_${INDEX_SUFFIX[index]}`;

type Query = (text: string) => Promise<Record<string, unknown>[]>;

/** Characters of a long text column an index holds (InnoDB keys hold 3,072 bytes; utf8mb4 takes up to 4 a character). */
const PREFIX = 700;

/** The column as an index names it: a long text column by its first PREFIX characters. */
async function keyPart(query: Query, table: string, column: string): Promise<string> {
  const [found] = await query(
    'select character_maximum_length as n from information_schema.columns where table_schema = database() ' +
      `and table_name = ${quote(table)} and column_name = ${quote(column)}`,
  );
  const length = found?.n === null || found?.n === undefined ? 0 : Number(found.n);
  return length > PREFIX ? `${id(column)}(${PREFIX})` : id(column);
}

async function createIndex(
  run: v1.Run,
  query: Query,
  table: string,
  column: string,
  index: keyof typeof INDEX_SUFFIX,
) {
  const name = id(indexName(table, column, index));
  if (index === 'uniqueLower') {
    await run(`alter table ${id(table)} add column ${id(`${column}_lower`)} varchar(255) as (lower(${id(column)})) virtual`);
    return run(`create unique index ${name} on ${id(table)} (${id(`${column}_lower`)})`);
  }
  const part = await keyPart(query, table, column);
  if (index === 'reference') return run(`create index ${name} on ${id(table)} (${part})`);
  // NULL sorts first in an ascending index, as on the other databases.
  return run(`create index ${name} on ${id(table)} (${part}, id)`);
}

async function dropIndex(run: v1.Run, table: string, column: string, index: keyof typeof INDEX_SUFFIX) {
  await run(`drop index ${id(indexName(table, column, index))} on ${id(table)}`);
  if (index === 'uniqueLower') await run(`alter table ${id(table)} drop column ${id(`${column}_lower`)}`);
}

async function createSearch(run: v1.Run, table: string, columns: readonly string[]) {
  if (columns.length === 0) return;
  const joined = columns.map((c) => `coalesce(${id(c)}, '')`).join(', ');
  await run(
    `alter table ${id(table)} add column search_text longtext ` +
      `as (lower(concat_ws(char(10 using utf8mb4), ${joined}))) stored`,
  );
}

async function dropSearch(run: v1.Run, query: Query, table: string) {
  const found = await query(
    'select 1 from information_schema.columns where table_schema = database() ' +
      `and table_name = ${quote(table)} and column_name = 'search_text'`,
  );
  if (found.length) await run(`alter table ${id(table)} drop column search_text`);
}

async function createCounters(run: v1.Run, table: string) {
  await run(`delete from record_counts where table_name = ${quote(table)}`);
  await run(`insert into record_counts (table_name, shard, n) select ${quote(table)}, 0, count(*) from ${id(table)}`);
  for (const [event, sign] of [
    ['insert', '+'],
    ['delete', '-'],
  ] as const)
    await run(
      `create trigger ${id(`${table}_count_${event}`)} after ${event} on ${id(table)} for each row ` +
        `update record_counts set n = n ${sign} 1 where table_name = ${quote(table)} and shard = 0`,
    );
}

/** The foreign keys on a column (a column is dropped or changed only without them). */
async function dropForeignKeys(run: v1.Run, query: Query, table: string, column: string) {
  const keys = await query(
    'select constraint_name as name from information_schema.key_column_usage where table_schema = database() ' +
      `and table_name = ${quote(table)} and column_name = ${quote(column)} and referenced_table_name is not null`,
  );
  for (const key of keys) await run(`alter table ${id(table)} drop foreign key ${id(String(key.name))}`);
}

async function mysqlStep(run: v1.Run, query: Query, step: Step) {
  switch (step.op) {
    case 'createTable': {
      const { spec, table } = step;
      const columns = Object.entries(spec.columns).map(([n, c]) => columnSql(n, c));
      await run(`create table ${id(table)} (${columns.join(', ')}) default charset=utf8mb4 collate=utf8mb4_bin`);
      for (const [n, c] of Object.entries(spec.columns)) if (c.references) await run(foreignKey(table, n, c));
      for (const column of spec.sortIndexes) await createIndex(run, query, table, column, 'sort');
      for (const column of spec.referenceIndexes) await createIndex(run, query, table, column, 'reference');
      for (const column of spec.uniqueLower) await createIndex(run, query, table, column, 'uniqueLower');
      for (const [name, columns] of Object.entries(spec.indexes ?? {}))
        await run(`create index ${id(`${table}_${name}`)} on ${id(table)} (${columns.map(id).join(', ')})`);
      await createSearch(run, table, spec.search);
      if (spec.counted) await createCounters(run, table);
      return;
    }
    case 'dropTable':
      await run(`delete from record_counts where table_name = ${quote(step.table)}`);
      return run(`drop table ${id(step.table)}`);
    case 'addColumn':
      await run(`alter table ${id(step.table)} add column ${columnSql(step.column, step.spec)}`);
      if (step.spec.references) await run(foreignKey(step.table, step.column, step.spec));
      return;
    case 'dropColumn':
      await dropForeignKeys(run, query, step.table, step.column);
      return run(`alter table ${id(step.table)} drop column ${id(step.column)}`);
    case 'renameColumn':
      return run(`alter table ${id(step.table)} rename column ${id(step.from)} to ${id(step.to)}`);
    case 'alterColumns':
      for (const c of step.changes) {
        await dropForeignKeys(run, query, step.table, c.column);
        if (c.to.references) {
          // Values that name no record are cleared (set null), their rows deleted (cascade), or the key refuses.
          const dangling = `${id(c.column)} is not null and ${id(c.column)} not in (select id from ${id(c.to.references.table)})`;
          if (c.to.references.onDelete === 'set null')
            await run(`update ${id(step.table)} set ${id(c.column)} = null where ${dangling}`);
          else if (c.to.references.onDelete === 'cascade') await run(`delete from ${id(step.table)} where ${dangling}`);
        }
        await run(`alter table ${id(step.table)} modify column ${columnSql(c.column, c.to)}`);
        if (c.to.references) await run(foreignKey(step.table, c.column, c.to));
      }
      return;
    case 'createIndex':
      return createIndex(run, query, step.table, step.column, step.index);
    case 'dropIndex':
      return dropIndex(run, step.table, step.column, step.index);
    case 'createIndexOn':
      return run(`create index ${id(`${step.table}_${step.name}`)} on ${id(step.table)} (${step.columns.map(id).join(', ')})`);
    case 'dropIndexOn':
      return run(`drop index ${id(`${step.table}_${step.name}`)} on ${id(step.table)}`);
    case 'search':
      await dropSearch(run, query, step.table);
      return createSearch(run, step.table, step.columns);
  }
}

export async function apply(db: Kysely<any>, steps: readonly Step[]): Promise<void> {
  if (!(db.getExecutor().adapter instanceof MysqlAdapter)) return v2.apply(db, steps as readonly v2.Step[]);
  const run: v1.Run = (text) => sql.raw(text).execute(db);
  const query: Query = async (text) => (await sql.raw<Record<string, unknown>>(text).execute(db)).rows;
  for (const step of steps) await mysqlStep(run, query, step);
}
