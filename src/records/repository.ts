// SQL for any declared resource. Functions take `db` or a transaction; the
// caller owns the transaction. Rows are turned into API objects here, in one
// place, where hidden fields are never selected.
import { type ExpressionBuilder, type Kysely, type SqlBool, type Expression, sql } from 'kysely';
import { containsText, orderTerm } from '../db/dialect.ts';
import type { Filter, ListPlan, SortKey } from '../derive/list-query.ts';
import type { Dialect } from '../schema/kinds.ts';
import type { Field, Resource } from '../schema/resource.ts';

export type Row = Record<string, unknown>;
export type Executor = Kysely<any>;
type EB = ExpressionBuilder<any, any>;

const columns = (resource: Resource) => resource.visible.map((f) => f.name);

export function rowToRecord(resource: Resource, row: Row): Row {
  const record: Row = {};
  for (const f of resource.visible) record[f.name] = f.kind.fromDb(row[f.name] ?? null);
  for (const [name, computed] of Object.entries(resource.computed)) record[name] = computed.value(record);
  return record;
}

export function toDbValues(resource: Resource, dialect: Dialect, values: Row): Row {
  const out: Row = {};
  for (const [name, value] of Object.entries(values)) {
    const field = resource.field(name)!;
    out[name] = value === null ? null : field.kind.toDb(value, dialect);
  }
  return out;
}

function param(field: Field, dialect: Dialect, value: unknown): unknown {
  return value === null ? null : field.kind.toDb(value, dialect);
}

function filterExpression(eb: EB, dialect: Dialect, { field, op, value }: Filter): Expression<SqlBool> {
  const col = field.name;
  const v = (x: unknown) => param(field, dialect, x);
  switch (op) {
    case 'null': return eb(col, value ? 'is' : 'is not', null);
    case 'contains': return containsText(dialect, col, value as string);
    case 'in': {
      const list = value as unknown[];
      const present = list.filter((x) => x !== null).map(v);
      const parts: Expression<SqlBool>[] = [];
      if (present.length) parts.push(eb(col, 'in', present));
      if (present.length < list.length) parts.push(eb(col, 'is', null));
      return eb.or(parts);
    }
    // "Not equal" keeps rows where the field is empty, as a person reading the list expects.
    case 'ne': return eb(col, 'is distinct from', v(value));
    case 'eq': return value === null ? eb(col, 'is', null) : eb(col, '=', v(value));
    default: return eb(col, ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[op], v(value));
  }
}

function searchExpression(eb: EB, dialect: Dialect, resource: Resource, word: string): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = resource.searchText.map((f) => containsText(dialect, f.name, word));
  for (const f of resource.searchIntegral) {
    const n = f.kind.fromQuery(word, f);
    if (n.ok) parts.push(eb(f.name, '=', param(f, dialect, n.value)));
  }
  return eb.or(parts);
}

/**
 * Rows strictly after `after` in the order of `sort`, NULL being the smallest
 * value: (k1 > v1) or (k1 = v1 and k2 > v2) or …
 */
function afterExpression(eb: EB, dialect: Dialect, sort: SortKey[], after: unknown[]): Expression<SqlBool> {
  const beyond = (key: SortKey, value: unknown): Expression<SqlBool> | null => {
    const col = key.field.name;
    if (value === null) return key.desc ? null : eb(col, 'is not', null);
    const strict = eb(col, key.desc ? '<' : '>', param(key.field, dialect, value));
    return key.desc ? eb.or([strict, eb(col, 'is', null)]) : strict;
  };
  const equal = (key: SortKey, value: unknown) =>
    value === null ? eb(key.field.name, 'is', null) : eb(key.field.name, '=', param(key.field, dialect, value));
  const branches: Expression<SqlBool>[] = [];
  sort.forEach((key, i) => {
    const strict = beyond(key, after[i]);
    if (strict) branches.push(eb.and([...sort.slice(0, i).map((k, j) => equal(k, after[j])), strict]));
  });
  return eb.or(branches);
}

function whereClause(dialect: Dialect, resource: Resource, plan: Pick<ListPlan, 'words' | 'filters'>) {
  return (eb: EB) =>
    eb.and([
      ...plan.words.map((w) => searchExpression(eb, dialect, resource, w)),
      ...plan.filters.map((f) => filterExpression(eb, dialect, f)),
    ]);
}

export async function countRows(db: Executor, dialect: Dialect, resource: Resource, plan: ListPlan): Promise<number> {
  const row = await db
    .selectFrom(resource.table)
    .select(sql<string | number | bigint>`count(*)`.as('total'))
    .where(whereClause(dialect, resource, plan))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** One page of rows; `limit` may exceed the page size by one to learn whether more follow. */
export async function selectRows(db: Executor, dialect: Dialect, resource: Resource, plan: ListPlan, limit: number, offset: number): Promise<Row[]> {
  let query = db.selectFrom(resource.table).select(columns(resource)).where(whereClause(dialect, resource, plan));
  const { paging } = plan;
  if (paging.mode === 'cursor' && paging.after) {
    const after = paging.after;
    query = query.where((eb) => afterExpression(eb, dialect, plan.sort, after));
  }
  for (const key of plan.sort) query = query.orderBy(orderTerm(key.field.name, key.desc));
  const rows = await query.limit(limit).offset(offset).execute();
  return rows.map((row) => rowToRecord(resource, row));
}

export async function selectById(db: Executor, dialect: Dialect, resource: Resource, id: bigint, lock = false): Promise<Row | undefined> {
  const pk = resource.primaryKey;
  const row = await db
    .selectFrom(resource.table)
    .select(columns(resource))
    .where(pk.name, '=', param(pk, dialect, id))
    .$if(lock && dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  return row && rowToRecord(resource, row);
}

export async function insertRow(db: Executor, dialect: Dialect, resource: Resource, values: Row): Promise<bigint> {
  const pk = resource.primaryKey.name;
  const row = await db
    .insertInto(resource.table)
    .values(toDbValues(resource, dialect, values))
    .returning(pk)
    .executeTakeFirstOrThrow();
  return BigInt(row[pk] as string | bigint);
}

export async function updateRow(db: Executor, dialect: Dialect, resource: Resource, id: bigint, values: Row): Promise<void> {
  const pk = resource.primaryKey;
  await db.updateTable(resource.table).set(toDbValues(resource, dialect, values)).where(pk.name, '=', param(pk, dialect, id)).execute();
}

export async function deleteRow(db: Executor, dialect: Dialect, resource: Resource, id: bigint): Promise<boolean> {
  const pk = resource.primaryKey;
  const result = await db.deleteFrom(resource.table).where(pk.name, '=', param(pk, dialect, id)).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
