// The schema the declarations ask for, as plain data (a snapshot), and the
// steps that take a database from one snapshot to the next. `leadbook
// make:migration` writes those steps into a new, frozen migration and the new
// snapshot beside it; a test fails when the declarations and the last
// snapshot differ.
import type { Field, Resource } from '../schema/resource.ts';
import type { Column, Step, Table } from './migrations/lib/v3.ts';

const DIALECTS = ['sqlite', 'postgres', 'mysql'] as const;

/** The helpers new migrations call (src/db/migrations/lib/). */
export const HELPERS = 'v3';

export interface Snapshot {
  /** The helpers the migration written with this snapshot called. */
  helpers: 'v1' | 'v2' | 'v3';
  /** A table of a v1 snapshot has no `indexes`. */
  tables: Record<string, Omit<Table, 'indexes'> & Partial<Pick<Table, 'indexes'>>>;
}

function columnOf(field: Field, byName: ReadonlyMap<string, Resource>): Column {
  const column: Column = {
    // On MariaDB a reference is a bigint, as the ids it names (InnoDB refuses a foreign key between integers of
    // different sizes), whatever integer kind the field is.
    type: Object.fromEntries(
      DIALECTS.map((d) => [d, d === 'mysql' && field.references ? 'bigint' : field.kind.column(field, d)]),
    ) as Column['type'],
    notNull: field.primary || !field.nullable,
  };
  if (field.primary) column.primary = true;
  const d = field.default;
  if (typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean') column.default = d;
  // A list's or a map's choices are its items' or its keys, checked by its kind: only a text column holds one of them.
  if (field.choices && field.kind.textual) column.check = [...field.choices];
  if (field.references && field.onDelete) {
    const target = byName.get(field.references);
    if (!target) throw new Error(`${field.name} references ${field.references}, which is not a declared resource`);
    column.references = { table: target.table, onDelete: field.onDelete };
  }
  return column;
}

export function snapshotOf(resources: readonly Resource[]): Snapshot {
  const byName = new Map(resources.map((r) => [r.name, r]));
  const tables: Record<string, Table> = {};
  for (const r of resources) {
    const sortIndexes = r.fields.filter((f) => f.sortable && !f.primary).map((f) => f.name);
    tables[r.table] = {
      columns: Object.fromEntries(r.fields.map((f) => [f.name, columnOf(f, byName)])),
      sortIndexes,
      referenceIndexes: r.fields
        .filter((f) => f.references && f.onDelete && !sortIndexes.includes(f.name))
        .map((f) => f.name),
      uniqueLower: r.fields.filter((f) => f.unique).map((f) => f.name),
      search: r.searchText.map((f) => f.name),
      counted: true,
      indexes: Object.fromEntries(Object.entries(r.indexes).map(([name, fields]) => [name, fields.map((f) => f.name)])),
    };
  }
  return { helpers: HELPERS, tables };
}

export interface DiffOptions {
  /** `table.old` → `new`: a column renamed, never guessed from a drop and an add. */
  renames?: Readonly<Record<string, string>>;
  /** Dropping a table or a column loses data: only when asked. */
  allowDrop?: boolean;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Whether a column is unchanged. Its types are compared on the databases both snapshots spell: a snapshot from before
 * v3 has no MariaDB type, which is no change of the column.
 */
function sameColumn(a: Column, b: Column): boolean {
  const common = (Object.keys(a.type) as (keyof Column['type'])[]).filter((d) => d in b.type);
  const typed = (c: Column) => ({ ...c, type: Object.fromEntries(common.map((d) => [d, c.type[d]])) });
  return same(typed(a), typed(b));
}
const INDEXES = [
  ['sortIndexes', 'sort'],
  ['referenceIndexes', 'reference'],
  ['uniqueLower', 'uniqueLower'],
] as const;

/**
 * The steps from one snapshot to the next; throws on what needs a person's decision (a drop, a new required column
 * without a default).
 */
export function diffSnapshots(from: Snapshot, to: Snapshot, options: DiffOptions = {}): Step[] {
  const steps: Step[] = [];
  const drops: string[] = [];
  const renames = Object.entries(options.renames ?? {}).map(([key, next]) => {
    const [table, column] = key.split('.');
    if (!table || !column || !from.tables[table]?.columns[column])
      throw new Error(`--rename ${key}=${next}: the last snapshot has no column ${key}`);
    if (!to.tables[table]?.columns[next])
      throw new Error(`--rename ${key}=${next}: the declarations have no field ${table}.${next}`);
    return { table, from: column, to: next };
  });

  for (const [table, spec] of Object.entries(to.tables)) {
    if (!from.tables[table]) steps.push({ op: 'createTable', table, spec: { ...spec, indexes: spec.indexes ?? {} } });
  }
  for (const [table, spec] of Object.entries(from.tables)) {
    if (!to.tables[table]) {
      drops.push(`table ${table}`);
      steps.push({ op: 'dropTable', table, spec: { ...spec, indexes: spec.indexes ?? {} } });
    }
  }

  for (const [table, next] of Object.entries(to.tables)) {
    const before = from.tables[table];
    if (!before) continue;
    const renamed = new Map(renames.filter((r) => r.table === table).map((r) => [r.from, r.to]));
    const rename = (column: string) => renamed.get(column) ?? column;
    const prev: Table = {
      ...before,
      indexes: Object.fromEntries(Object.entries(before.indexes ?? {}).map(([n, cols]) => [n, cols.map(rename)])),
      columns: Object.fromEntries(Object.entries(before.columns).map(([c, spec]) => [rename(c), spec])),
      sortIndexes: before.sortIndexes.map(rename),
      referenceIndexes: before.referenceIndexes.map(rename),
      uniqueLower: before.uniqueLower.map(rename),
      search: before.search.map(rename),
    };
    for (const [old, column] of renamed) steps.push({ op: 'renameColumn', table, from: old, to: column });

    const removed = Object.keys(prev.columns).filter((c) => !next.columns[c]);
    const added = Object.keys(next.columns).filter((c) => !prev.columns[c]);
    const changes = Object.keys(next.columns)
      .filter((c) => prev.columns[c] && !sameColumn(prev.columns[c]!, next.columns[c]!))
      .map((column) => ({ column, from: prev.columns[column]!, to: next.columns[column]! }));
    for (const c of changes) {
      if (c.from.primary || c.to.primary)
        throw new Error(`${table}.${c.column}: a primary key cannot change in a generated migration`);
    }
    const searched = new Set([...prev.search, ...next.search]);
    const reindex =
      !same(prev.search, next.search) ||
      changes.some((c) => searched.has(c.column)) ||
      removed.some((c) => searched.has(c));

    const nextIndexes = next.indexes ?? {};
    for (const [key, index] of INDEXES) {
      for (const column of prev[key].filter((c) => !next[key].includes(c)))
        steps.push({ op: 'dropIndex', table, column, index });
    }
    // An index over several columns that is gone or covers other columns now is dropped (and made again below).
    const changedIndexes = Object.keys(nextIndexes).filter((n) => !same(prev.indexes[n], nextIndexes[n]));
    for (const name of Object.keys(prev.indexes))
      if (!nextIndexes[name] || changedIndexes.includes(name)) steps.push({ op: 'dropIndexOn', table, name });
    if (reindex) steps.push({ op: 'search', table, columns: [] });
    for (const column of removed) {
      drops.push(`column ${table}.${column}`);
      steps.push({ op: 'dropColumn', table, column });
    }
    for (const column of added) {
      const spec = next.columns[column]!;
      if (spec.notNull && spec.default === undefined) {
        throw new Error(
          [
            `${table}.${column} is required and has no default:`,
            'the rows that exist would hold nothing; declare a default',
          ].join(' '),
        );
      }
      steps.push({ op: 'addColumn', table, column, spec });
    }
    if (changes.length) steps.push({ op: 'alterColumns', table, changes, spec: { ...next, indexes: nextIndexes } });
    for (const [key, index] of INDEXES) {
      for (const column of next[key].filter((c) => !prev[key].includes(c)))
        steps.push({ op: 'createIndex', table, column, index });
    }
    for (const name of changedIndexes) steps.push({ op: 'createIndexOn', table, name, columns: nextIndexes[name]! });
    if (reindex) steps.push({ op: 'search', table, columns: next.search });
  }
  if (drops.length && !options.allowDrop) {
    throw new Error(
      [
        `this would drop ${drops.join(', ')} and the data in it;`,
        'say --allow-drop if that is meant, or --rename table.old=new for a rename',
      ].join(' '),
    );
  }
  return steps;
}

/** JSON with each value on one line when it fits in `width` characters, so that a column is one line. */
export function compactJson(value: unknown, indent = '', width = 110): string {
  const flat = JSON.stringify(value);
  if (flat.length + indent.length <= width || value === null || typeof value !== 'object') return flat;
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((v) => inner + compactJson(v, inner, width))
    : Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${compactJson(v, inner, width)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${items.join(',\n')}\n${indent}${close}`;
}

/** The text of a generated migration: its steps as data, applied by the frozen helpers. */
export function migrationSource(command: string, steps: readonly Step[]): string {
  return `// Generated by \`${command}\` from the resource declarations.
// Frozen: never edit it. Change the declarations and make another migration.
import type { Kysely } from 'kysely';
import { apply, type Step } from './lib/${HELPERS}.ts';

const steps: Step[] = ${compactJson(steps)};

export async function up(db: Kysely<any>): Promise<void> {
  await apply(db, steps);
}
`;
}
