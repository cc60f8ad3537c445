// Moving into the original service's database (a Laravel app's, on MariaDB or MySQL): what is there, what Leadbook
// would add, and the adding. Leadbook's schema on MariaDB is its baseline migration (migrations/mysql/); a table of it
// that the database lacks is created, and a table the database has already (users, contacts, inquiries) gets only
// the columns, indexes and triggers it lacks. Nothing existing is dropped, renamed or rewritten. MariaDB commits each
// change of the schema at once (no DDL in a transaction), so every step checks what is there first and a takeover cut
// short is finished by running it again.
import { type Kysely, sql } from 'kysely';
import { STATEMENTS } from './migrations/mysql/2026-11-26T0006-baseline.ts';
import type { DB } from './tables.ts';

/** The original service's tables that Leadbook reads; the first three it cannot do without. */
const REQUIRED = ['users', 'contacts', 'inquiries'] as const;
const KNOWN = ['sessions', 'personal_access_tokens', 'password_resets', 'password_reset_tokens', 'migrations'];

interface LiveColumn {
  table: string;
  column: string;
  /** information_schema's data_type: varchar, int, tinyint… */
  dataType: string;
  /** The full type: `bigint(20) unsigned`, `tinyint(1)`. */
  columnType: string;
}

interface ColumnLine {
  name: string;
  /** The line as the baseline writes it, after the name. */
  definition: string;
}

interface TableSpec {
  table: string;
  statement: string;
  columns: ColumnLine[];
}

/** A value's nature as Leadbook reads it, whatever the column's exact type. */
type Family = 'text' | 'integer' | 'boolean' | 'instant' | 'bytes' | 'other';

function familyOf(type: string): Family {
  const t = type.toLowerCase();
  if (/^(boolean|tinyint\(1\))/.test(t)) return 'boolean';
  if (/^(varchar|char|tinytext|text|mediumtext|longtext)\b/.test(t)) return 'text';
  if (/^(tinyint|smallint|mediumint|int|integer|bigint)\b/.test(t)) return 'integer';
  if (/^(datetime|timestamp|date)\b/.test(t)) return 'instant';
  if (/^(tinyblob|blob|mediumblob|longblob)\b/.test(t)) return 'bytes';
  return 'other';
}

/** Whether a column of `live` type holds what Leadbook keeps in a column of `wanted` type. */
function compatible(wanted: Family, live: LiveColumn): boolean {
  const family = familyOf(live.columnType);
  if (wanted === family) return true;
  // Laravel's boolean is a tinyint(1); an integer column holds 0/1 as well.
  return wanted === 'boolean' && family === 'integer' && live.dataType === 'tinyint';
}

const CREATE_TABLE = /^create table (\w+) \(\n([\s\S]*)\n\s*\) default charset/;
const COLUMN = /^\s*(`?\w+`?) (.*?),?$/;

/** The baseline's tables, each with its column lines (constraint lines left out). */
function tableSpecs(): Map<string, TableSpec> {
  const specs = new Map<string, TableSpec>();
  for (const statement of STATEMENTS) {
    const match = CREATE_TABLE.exec(statement);
    if (!match) continue;
    const columns: ColumnLine[] = [];
    for (const line of match[2]!.split('\n')) {
      const column = COLUMN.exec(line);
      if (!column || /^(check|primary|unique)\b/.test(line.trim())) continue;
      columns.push({ name: column[1]!.replaceAll('`', ''), definition: column[2]! });
    }
    specs.set(match[1]!, { table: match[1]!, statement, columns });
  }
  return specs;
}

const typeOf = (definition: string) => definition.split(' ')[0]!;

interface ForeignKey {
  statement: string;
  name: string;
  table: string;
  column: string;
  target: string;
}

const FOREIGN_KEY = /^alter table (\w+) add constraint (\w+) foreign key \((\w+)\) references (\w+) \(id\)/;
const foreignKeys = (): ForeignKey[] =>
  STATEMENTS.flatMap((statement) => {
    const m = FOREIGN_KEY.exec(statement);
    return m ? [{ statement, name: m[2]!, table: m[1]!, column: m[3]!, target: m[4]! }] : [];
  });

export interface TakeoverProblem {
  table: string;
  column?: string;
  found?: string;
  wanted?: string;
  message: string;
}

export interface TakeoverPlan {
  /** The database's own tables Leadbook knows, with their row counts. */
  found: { table: string; rows: number }[];
  /** Known tables the database does not have (only users, contacts and inquiries are required). */
  absent: string[];
  /** What keeps the takeover from running: a table missing, a column of a type Leadbook does not read. */
  problems: TakeoverProblem[];
  /** Tables Leadbook would create. */
  createTables: string[];
  /** Columns Leadbook would add to the existing tables. */
  addColumns: { table: string; column: string; type: string }[];
  /** Columns of the existing tables that Leadbook leaves alone and does not read. */
  unused: { table: string; column: string }[];
  /** Whether Leadbook has moved in already (its migrations table is there). */
  takenOver: boolean;
}

async function liveColumns(db: Kysely<DB>): Promise<Map<string, Map<string, LiveColumn>>> {
  const { rows } = await sql<{ t: string; c: string; d: string; ct: string }>`
    select table_name as t, column_name as c, data_type as d, column_type as ct from information_schema.columns
    where table_schema = database() order by table_name, ordinal_position`.execute(db);
  const tables = new Map<string, Map<string, LiveColumn>>();
  for (const r of rows) {
    if (!tables.has(r.t)) tables.set(r.t, new Map());
    tables.get(r.t)!.set(r.c, { table: r.t, column: r.c, dataType: r.d, columnType: r.ct });
  }
  return tables;
}

/** Rows in a table, named as the database names it (sql.id: the connection renames no identifier). */
async function countRows(db: Kysely<DB>, table: string): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.id(table)}`.execute(db);
  return Number(rows[0]!.n);
}

/** Looks at the database and says what a takeover would do; changes nothing. */
export async function planTakeover(db: Kysely<DB>): Promise<TakeoverPlan> {
  const live = await liveColumns(db);
  const specs = tableSpecs();
  const plan: TakeoverPlan = {
    found: [],
    absent: [],
    problems: [],
    createTables: [],
    addColumns: [],
    unused: [],
    takenOver: live.has('leadbook_migrations'),
  };
  for (const table of [...REQUIRED, ...KNOWN]) {
    if (live.has(table)) plan.found.push({ table, rows: await countRows(db, table) });
    else plan.absent.push(table);
  }
  for (const table of REQUIRED)
    if (!live.has(table)) plan.problems.push({ table, message: `the database has no ${table} table` });
  for (const spec of specs.values()) {
    const existing = live.get(spec.table);
    if (!existing) {
      plan.createTables.push(spec.table);
      continue;
    }
    for (const column of spec.columns) {
      const found = existing.get(column.name);
      if (!found) {
        plan.addColumns.push({ table: spec.table, column: column.name, type: typeOf(column.definition) });
        continue;
      }
      const wanted = familyOf(typeOf(column.definition));
      if (!compatible(wanted, found))
        plan.problems.push({
          table: spec.table,
          column: column.name,
          found: found.columnType,
          wanted: typeOf(column.definition),
          message: `${spec.table}.${column.name} is ${found.columnType}; Leadbook keeps ${wanted} values there`,
        });
    }
    const declared = new Set(spec.columns.map((c) => c.name));
    for (const name of existing.keys()) if (!declared.has(name)) plan.unused.push({ table: spec.table, column: name });
  }
  // Columns the baseline adds after creating its tables (the lower-case columns of unique indexes).
  for (const statement of STATEMENTS) {
    const m = /^alter table (\w+) add column (\w+) (\S+)/.exec(statement);
    if (m && live.has(m[1]!) && !live.get(m[1]!)!.has(m[2]!))
      plan.addColumns.push({ table: m[1]!, column: m[2]!, type: m[3]! });
  }
  return plan;
}

export interface TakeoverResult {
  /** Foreign keys left out: the columns' types differ (Laravel's unsigned ids, its int references) or rows point
   * nowhere. Leadbook's own checks keep those references on writes. */
  unkeptForeignKeys: { table: string; column: string; target: string; reason: string }[];
}

/**
 * Adds Leadbook's schema to the database, as planned: the missing tables (a reference column typed as the id it
 * references, so that the foreign key holds), then the missing columns (nullable, or NOT NULL with a default, so
 * that the original app's inserts keep working), indexes, foreign keys where they can hold, triggers and the first
 * rows. Refuses when the plan has problems.
 */
export async function applyTakeover(db: Kysely<DB>): Promise<TakeoverResult> {
  const plan = await planTakeover(db);
  if (plan.problems.length) throw new Error(plan.problems.map((p) => p.message).join('; '));
  const run = (text: string) => sql.raw(text).execute(db);
  const specs = tableSpecs();
  const keys = foreignKeys();
  let live = await liveColumns(db);
  const idType = (table: string) => {
    const id = live.get(table)?.get('id');
    return id ? id.columnType.replace(/\(\d+\)/, '') : undefined;
  };
  /** A reference column's definition with the type of the id it references, where that table exists already. */
  const referenceType = (table: string, column: ColumnLine) => {
    const key = keys.find((k) => k.table === table && k.column === column.name);
    const type = key && live.has(key.target) ? idType(key.target) : undefined;
    return type ? column.definition.replace(/^\S+/, type) : column.definition;
  };
  const preexisting = new Set(live.keys());
  for (const spec of specs.values()) {
    if (!live.has(spec.table)) {
      let statement = spec.statement;
      for (const column of spec.columns) {
        const definition = referenceType(spec.table, column);
        if (definition !== column.definition)
          statement = statement.replace(`${column.name} ${column.definition}`, `${column.name} ${definition}`);
      }
      await run(statement);
      continue;
    }
    for (const column of spec.columns) {
      if (live.get(spec.table)!.has(column.name)) continue;
      let definition = referenceType(spec.table, column);
      if (!/ default /.test(definition)) definition = definition.replace(/ not null/, '');
      await run(`alter table ${spec.table} add column ${column.name} ${definition}`);
    }
  }
  live = await liveColumns(db);
  const indexes = await sql<{ t: string; i: string }>`
    select distinct table_name as t, index_name as i from information_schema.statistics
    where table_schema = database()`.execute(db);
  const indexed = new Set(indexes.rows.map((r) => `${r.t}.${r.i}`));
  const triggers = await sql<{ n: string }>`
    select trigger_name as n from information_schema.triggers where trigger_schema = database()`.execute(db);
  const triggered = new Set(triggers.rows.map((r) => r.n));
  const result: TakeoverResult = { unkeptForeignKeys: [] };
  for (const statement of STATEMENTS) {
    let m = /^alter table (\w+) add column (\w+) /.exec(statement);
    if (m) {
      if (!live.get(m[1]!)!.has(m[2]!)) await run(statement);
      continue;
    }
    m = /^create (?:unique )?index (\w+) on (\w+) /.exec(statement);
    if (m) {
      if (!indexed.has(`${m[2]}.${m[1]}`)) await run(statement);
      continue;
    }
    m = /^create trigger (\w+) /.exec(statement);
    if (m) {
      if (!triggered.has(m[1]!)) await run(statement);
      continue;
    }
    m = /^insert into record_counts \(table_name, shard, n\) values \('(\w+)', 0, 0\)/.exec(statement);
    if (m) {
      await run(`delete from record_counts where table_name = '${m[1]}'`);
      await run(`insert into record_counts (table_name, shard, n) select '${m[1]}', 0, count(*) from ${m[1]}`);
      continue;
    }
    if (/^insert into (stages|webhook_cursor) /.test(statement)) {
      const table = /^insert into (\w+)/.exec(statement)![1]!;
      if ((await countRows(db, table)) === 0) await run(statement);
    }
  }
  const constraints = await sql<{ n: string }>`
    select constraint_name as n from information_schema.referential_constraints
    where constraint_schema = database()`.execute(db);
  const constrained = new Set(constraints.rows.map((r) => r.n));
  for (const key of keys) {
    if (constrained.has(key.name)) continue;
    const from = live
      .get(key.table)
      ?.get(key.column)
      ?.columnType.replace(/\(\d+\)/, '');
    const to = idType(key.target);
    if (from !== to) {
      result.unkeptForeignKeys.push({ ...key, reason: `${key.column} is ${from}, ${key.target}.id is ${to}` });
      continue;
    }
    if (preexisting.has(key.table)) {
      const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.id(key.table)}
        where ${sql.ref(key.column)} is not null
          and ${sql.ref(key.column)} not in (select id from ${sql.id(key.target)})`.execute(db);
      const dangling = Number(rows[0]!.n);
      if (dangling > 0) {
        result.unkeptForeignKeys.push({ ...key, reason: `${dangling} rows name no ${key.target}` });
        continue;
      }
    }
    await run(key.statement);
  }
  return result;
}

/** Whether the database is another app's that Leadbook has not moved into: `leadbook takeover` comes first. */
export async function holdsAnotherApp(db: Kysely<DB>): Promise<boolean> {
  const { rows } = await sql<{ t: string }>`select table_name as t from information_schema.tables
    where table_schema = database() and table_name in ('users', 'leadbook_migrations')`.execute(db);
  const names = new Set(rows.map((r) => r.t));
  return names.has('users') && !names.has('leadbook_migrations');
}
