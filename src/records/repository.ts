// SQL for any declared resource. Functions take `db` or a transaction; the
// caller owns the transaction. Rows are turned into API objects here, in one
// place, where hidden fields are never selected.
import {
  CompiledQuery,
  type ExpressionBuilder,
  type SqlBool,
  type Expression,
  expressionBuilder,
  type RawBuilder,
  sql,
} from 'kysely';
import {
  byteOrdered,
  containsText,
  countWordMatches,
  readingEveryMatch,
  searchReadsEveryMatch,
  wordsCountable,
  matchesWords,
  distinctFrom,
  orderTerm,
  writesWithEntryAtOnce,
  inValues,
  insertsArrays,
  loadsByLoadData,
} from '../db/dialect.ts';
import { loadDataLocal } from '../db/connection.ts';
import { type EntryValues, insertEntry } from './entries.ts';
import { runPrepared } from '../db/prepared.ts';
import { type AnyRecordTables, asRecordTables, type Executor } from '../db/tables.ts';
import type { Filter, ListPlan, ReadScope, SortKey } from '../derive/list-query.ts';
import { countsOf, type Field, type Resource } from '../schema/resource.ts';

export type Row = Record<string, unknown>;
type EB = ExpressionBuilder<AnyRecordTables, string>;

const columns = (resource: Resource) => resource.visible.map((f) => f.name);

/** A row as an API object; a row of some of the fields (`fields`) holds those alone, without the computed ones. */
export function rowToRecord(resource: Resource, row: Row, fields: readonly Field[] = resource.visible): Row {
  const record: Row = {};
  for (const f of fields) record[f.name] = f.kind.fromDb(row[f.name] ?? null);
  if (fields === resource.visible)
    for (const [name, computed] of Object.entries(resource.computed)) record[name] = computed.value(record);
  return record;
}

export function toDbValues(resource: Resource, values: Row): Row {
  const out: Row = {};
  for (const [name, value] of Object.entries(values)) {
    const field = resource.field(name)!;
    out[name] = value === null ? null : field.kind.toDb(value);
  }
  return out;
}

function param(field: Field, value: unknown): unknown {
  return value === null ? null : field.kind.toDb(value);
}

function filterExpression(eb: EB, db: Executor, { field, op, value }: Filter): Expression<SqlBool> {
  const col = field.name;
  const v = (x: unknown) => param(field, x);
  switch (op) {
    case 'null':
      return eb(col, value ? 'is' : 'is not', null);
    case 'contains':
      return containsText(db, col, value as string);
    case 'in': {
      const list = value as unknown[];
      const present = list.filter((x) => x !== null).map(v);
      const parts: Expression<SqlBool>[] = [];
      if (present.length) parts.push(eb(col, 'in', present));
      if (present.length < list.length) parts.push(eb(col, 'is', null));
      return eb.or(parts);
    }
    // "Not equal" keeps rows where the field is empty, as a person reading the list expects.
    case 'ne':
      return distinctFrom(db, col, v(value));
    case 'eq':
      return value === null ? eb(col, 'is', null) : eb(col, '=', v(value));
    default:
      return eb(col, ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[op], v(value));
  }
}

/** A word that is a whole number may also equal one of the searchable integer fields. */
const integralMatches = (resource: Resource, word: string) =>
  resource.searchIntegral.flatMap((f) => {
    const n = f.kind.fromQuery(word, f);
    return n.ok ? [[f, n.value] as const] : [];
  });

/** Every word must match: plain words all at once through the search index, a number word also by equality. */
function searchExpressions(eb: EB, db: Executor, resource: Resource, words: string[]): Expression<SqlBool>[] {
  const columns = resource.searchText.map((f) => f.name);
  const text = (w: string[]) => matchesWords(db, resource.table, resource.primaryKey.name, columns, w);
  const plain = words.filter((w) => integralMatches(resource, w).length === 0);
  const numbers = words.filter((w) => !plain.includes(w));
  return [
    ...(plain.length ? [text(plain)] : []),
    ...numbers.map((w) =>
      eb.or([text([w]), ...integralMatches(resource, w).map(([f, value]) => eb(f.name, '=', param(f, value)))]),
    ),
  ];
}

/** What lists sorted by `field` are ordered by: its column, or the sort key it names (`sortBy`), byte by byte. */
const sortColumn = (db: Executor, field: Field): Expression<unknown> =>
  field.sortBy ? byteOrdered(db, field.sortBy.name) : sql.ref(field.name);

/** A sort key where a keyset page continues: its column, and the value there of the last row seen. */
interface Bound {
  column: Expression<unknown>;
  desc: boolean;
  value: unknown;
}

/**
 * The bounds of a keyset page from the values a cursor or the export carries: the sort fields' own, turned into
 * their sort keys where a field names one (worked out again from the field alone, as the write path stores them).
 */
function boundsOf(db: Executor, sort: SortKey[], after: unknown[]): Bound[] {
  return sort.map(({ field, desc }, i) => {
    const value = after[i] ?? null;
    const key = field.sortBy;
    return {
      column: sortColumn(db, field),
      desc,
      value: key && value !== null ? param(key, key.derive!.value({ [field.name]: value }, {})) : param(field, value),
    };
  });
}

/**
 * Rows strictly after the bounds in their order, NULL being the smallest
 * value: (k1 > v1) or (k1 = v1 and k2 > v2) or …
 */
function afterExpression(eb: EB, bounds: Bound[]): Expression<SqlBool> {
  const beyond = ({ column, desc, value }: Bound): Expression<SqlBool> | null => {
    if (value === null) return desc ? null : eb(column, 'is not', null);
    const strict = eb(column, desc ? '<' : '>', value);
    return desc ? eb.or([strict, eb(column, 'is', null)]) : strict;
  };
  const equal = ({ column, value }: Bound) => (value === null ? eb(column, 'is', null) : eb(column, '=', value));
  const branches: Expression<SqlBool>[] = [];
  bounds.forEach((bound, i) => {
    const strict = beyond(bound);
    if (strict) branches.push(eb.and([...bounds.slice(0, i).map(equal), strict]));
  });
  return eb.or(branches);
}

/** A filter the resource declares by name: its condition (from the resource's rules), or its negation. */
function namedExpression(eb: EB, resource: Resource, { named, value }: Filter): Expression<SqlBool> {
  // The rules' NamedFilter (records/rules.ts, which reads this file's types: named here to keep the two apart).
  const filters = (resource.rules as { filters: Record<string, (eb: EB) => Expression<SqlBool>> }).filters;
  const condition = filters[named!]!(eb);
  return value ? condition : eb.not(condition);
}

/** The records a scoped reader may see: theirs, or shared. */
function scopeExpression(eb: EB, { owners, actorId, sharedWhen }: ReadScope): Expression<SqlBool> {
  return eb.or([
    ...owners.map((f) => eb(f.name, '=', param(f, f.kind.fromDb(actorId)))),
    ...(sharedWhen ? [eb(sharedWhen.name, '=', param(sharedWhen, true))] : []),
  ]);
}

function whereClause(db: Executor, resource: Resource, plan: Pick<ListPlan, 'words' | 'filters' | 'scope'>) {
  return (eb: EB) =>
    eb.and([
      ...searchExpressions(eb, db, resource, plan.words),
      ...plan.filters.map((f) => (f.named ? namedExpression(eb, resource, f) : filterExpression(eb, db, f))),
      ...(plan.scope ? [scopeExpression(eb, plan.scope)] : []),
    ]);
}

/**
 * The number of rows a list matches where it can be read without counting the rows one by one: unfiltered, the sum
 * of the table's counters (kept by triggers in every write's transaction, so exact); searched for plain words only,
 * in the search index alone where the dialect can. Null for any other list.
 */
function countWithoutRows(db: Executor, resource: Resource, plan: ListPlan, atMost?: number): Promise<number> | null {
  if (plan.filters.length > 0 || plan.scope) return null;
  if (plan.words.length === 0)
    return db
      .selectFrom('record_counts')
      .select(sql<string | number | bigint | null>`sum(n)`.as('total'))
      .where('table_name', '=', resource.table)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.total ?? 0));
  if (plan.words.some((w) => integralMatches(resource, w).length > 0) || !wordsCountable(db, plan.words)) return null;
  return countWordMatches(db, resource.table, plan.words).then((n) =>
    atMost === undefined ? n : Math.min(n, atMost + 1),
  );
}

/**
 * The rows a list matches, counted through the indexes that serve it; past `atMost` the count stops (a search box
 * says "1,000+" without reading every match).
 */
function countingQuery(db: Executor, resource: Resource, plan: ListPlan, atMost?: number) {
  const matching = asRecordTables(db)
    .selectFrom(resource.table)
    .where(whereClause(db, resource, plan));
  return atMost === undefined
    ? matching.select(sql<string | number | bigint>`count(*)`.as('total'))
    : db
        .selectFrom(
          matching
            .select(sql.lit(1).as('one'))
            .limit(atMost + 1)
            .as('matching'),
        )
        .select(sql<string | number | bigint>`count(*)`.as('total'));
}

/** The number of rows a list matches (see countWithoutRows and countingQuery). */
export async function countRows(db: Executor, resource: Resource, plan: ListPlan, atMost?: number): Promise<number> {
  const known = countWithoutRows(db, resource, plan, atMost);
  if (known) return known;
  const row = await readingEveryMatch(db, plan.words, (db) =>
    countingQuery(db, resource, plan, atMost).executeTakeFirstOrThrow(),
  );
  return Number(row.total ?? 0);
}

/**
 * Where a keyset page continues, as conditions each walkable in index order,
 * to be read one after the other: for one sort key (then the primary key, in
 * the same direction) a row-value comparison such as (name, id) > (?, ?),
 * with the rows where the key is NULL (the smallest values) as a segment of
 * their own. Null for other sorts, which take the general expression.
 */
function keysetSegments(eb: EB, bounds: Bound[]): Expression<SqlBool>[] | null {
  const pk = bounds.at(-1)!;
  const op = pk.desc ? '<' : '>';
  if (bounds.length === 1) return [eb(pk.column, op, pk.value)];
  const [key] = bounds;
  if (bounds.length !== 2 || key!.desc !== pk.desc) return null;
  const isNull = eb(key!.column, 'is', null);
  if (key!.value === null) {
    const rest = eb.and([isNull, eb(pk.column, op, pk.value)]);
    return pk.desc ? [rest] : [rest, eb(key!.column, 'is not', null)];
  }
  const beyond = eb(eb.tuple(key!.column, pk.column), op, eb.tuple(key!.value, pk.value));
  return pk.desc ? [beyond, isNull] : [beyond];
}

/** A list's rows in its order: of the visible fields or of some of them. */
function orderedRows(db: Executor, resource: Resource, plan: ListPlan, fields: readonly Field[]) {
  let query = asRecordTables(db)
    .selectFrom(resource.table)
    .select(fields.map((f) => f.name))
    .where(whereClause(db, resource, plan));
  for (const { field, desc } of plan.sort)
    query = query.orderBy(orderTerm(db, sortColumn(db, field), desc, (field.sortBy ?? field).nullable));
  return query;
}

/** One page of rows; `limit` may exceed the page size by one to learn whether more follow. */
export async function selectRows(
  db: Executor,
  resource: Resource,
  plan: ListPlan,
  limit: number,
  offset: number,
  fields: readonly Field[] = resource.visible,
): Promise<Row[]> {
  const query = orderedRows(db, resource, plan, fields);
  const { paging } = plan;
  const after = paging.mode === 'cursor' ? paging.after : null;
  if (!after)
    return (await query.limit(limit).offset(offset).execute()).map((row) => rowToRecord(resource, row, fields));
  const bounds = boundsOf(db, plan.sort, after);
  const segments = keysetSegments(expressionBuilder(), bounds) ?? [afterExpression(expressionBuilder(), bounds)];
  const rows: Row[] = [];
  for (const segment of segments) {
    if (rows.length >= limit) break;
    rows.push(
      ...(await query
        .where(segment)
        .limit(limit - rows.length)
        .execute()),
    );
  }
  return rows.map((row) => rowToRecord(resource, row, fields));
}

/** How many of the newest rows newestMatching looks at: a word of 1,000 matches in 1,000,000 rows has ~50 there. */
const NEWEST_WINDOW = 50_000;

/**
 * The first `wanted` matches of a list among its NEWEST_WINDOW newest rows, newest first, read by walking the primary
 * key backwards and testing each row: the window is a subquery with its own order and limit, so the database cannot
 * make it a read of every match through the search index, and it stops as soon as `wanted` are found. Fewer than
 * `wanted` means the window did not hold them all (the caller then reads the list as usual).
 */
function newestMatching(db: Executor, resource: Resource, plan: ListPlan, wanted: number, fields: readonly Field[]) {
  const pk = resource.primaryKey.name;
  const newest = asRecordTables(db).selectFrom(resource.table).selectAll().orderBy(pk, 'desc').limit(NEWEST_WINDOW);
  return asRecordTables(db)
    .selectFrom(newest.as(resource.table))
    .select(fields.map((f) => f.name))
    .where(whereClause(db, resource, plan))
    .orderBy(pk, 'desc')
    .limit(wanted)
    .execute();
}

/**
 * A page of rows with the number of rows the list matches, up to one past `atMost`, in one statement (the count a
 * subquery the database runs once): a page of a board's column or of a search's group costs one round trip, not two.
 */
export async function selectCountedRows(
  db: Executor,
  resource: Resource,
  plan: ListPlan,
  limit: number,
  offset: number,
  atMost: number,
  fields: readonly Field[] = resource.visible,
): Promise<{ rows: Row[]; total: number }> {
  const known = countWithoutRows(db, resource, plan, atMost);
  if (known) {
    const [total, rows] = await Promise.all([known, selectRows(db, resource, plan, limit, offset, fields)]);
    return { rows, total };
  }
  // Newest first through a search (the header's box) where the search index reads every match: counted first, and
  // a common word (past `atMost` matches) is looked for among the newest rows (newestMatching).
  const newestFirst = plan.sort.length === 1 && plan.sort[0]!.field.primary && plan.sort[0]!.desc;
  if (plan.words.length > 0 && newestFirst && searchReadsEveryMatch(db)) {
    const total = await countRows(db, resource, plan, atMost);
    if (total === 0) return { rows: [], total };
    const newest = total > atMost ? await newestMatching(db, resource, plan, limit + offset, fields) : [];
    const rows =
      newest.length === limit + offset
        ? newest.slice(offset)
        : await orderedRows(db, resource, plan, fields).limit(limit).offset(offset).execute();
    return { rows: rows.map((row) => rowToRecord(resource, row, fields)), total };
  }
  const found = await readingEveryMatch(db, plan.words, (db) =>
    orderedRows(db, resource, plan, fields)
      .select(countingQuery(db, resource, plan, atMost).as('matching_total'))
      .limit(limit)
      .offset(offset)
      .execute(),
  );
  // No row on the first page: nothing matches; past the last page the count is asked on its own.
  const total =
    found.length || offset === 0 ? Number(found[0]?.matching_total ?? 0) : await countRows(db, resource, plan, atMost);
  return { rows: found.map((row) => rowToRecord(resource, row, fields)), total };
}

export async function selectById(db: Executor, resource: Resource, id: bigint, lock = false): Promise<Row | undefined> {
  return (await selectByIdWithEpoch(db, resource, id, lock, false))?.record;
}

/**
 * A record by id (locked for the caller's write when `lock`), with the auth epoch when `authEpoch`, read by the same
 * statement (src/http/auth.ts, confirmed: an update on trust confirms its token in the read that starts it).
 */
export async function selectByIdWithEpoch(
  db: Executor,
  resource: Resource,
  id: bigint,
  lock: boolean,
  authEpoch: boolean,
): Promise<{ record: Row; authEpoch?: string } | undefined> {
  const pk = resource.primaryKey;
  const [row] = await runPrepared(
    db,
    resource,
    `by id${lock ? ', locked' : ''}${authEpoch ? ', with the auth epoch' : ''}`,
    () =>
      asRecordTables(db)
        .selectFrom(resource.table)
        .select(columns(resource))
        .$if(authEpoch, (q) => q.select(epochColumn))
        .where(pk.name, '=', param(pk, id))
        .$if(lock, (q) => q.forUpdate()),
    [param(pk, id)],
  );
  return row && { record: rowToRecord(resource, row), authEpoch: epochOf(row, authEpoch) };
}

/** The column a read answers the auth epoch in, when asked (see selectWithCounts). */
const AUTH_EPOCH = 'lb_auth_epoch';
const epochColumn = sql<string>`(select n from ${sql.table('auth_epoch')} where id = 1)`.as(AUTH_EPOCH);
const epochOf = (row: Record<string, unknown>, asked: boolean | undefined) =>
  asked ? String(row[AUTH_EPOCH]) : undefined;

/**
 * A record by id with the counts of the records that name it (a contact's `inquiries_count`), in one statement: the
 * counts are scalar subqueries, so a read of one record is one round trip. `authEpoch`: with the auth epoch too, read
 * by the same statement (src/accounts/tokens.ts: a token kept in memory is confirmed by it, with no read of its own).
 */
export async function selectWithCounts(
  db: Executor,
  resource: Resource,
  id: bigint,
  options: { authEpoch?: boolean } = {},
) {
  const pk = resource.primaryKey;
  const counts = countsOf(resource);
  const [row] = await runPrepared(
    db,
    resource,
    options.authEpoch ? 'by id, with counts and the auth epoch' : 'by id, with counts',
    () =>
      asRecordTables(db)
        .selectFrom(resource.table)
        .select(columns(resource))
        .select((eb) =>
          counts.map(({ resource: other, field }) =>
            eb
              .selectFrom(`${other.table} as counted`)
              .select(sql<string | number | bigint>`count(*)`.as('n'))
              .whereRef(`counted.${field.name}`, '=', `${resource.table}.${pk.name}`)
              .as(field.countAs!),
          ),
        )
        .$if(options.authEpoch === true, (q) => q.select(epochColumn))
        .where(pk.name, '=', param(pk, id)),
    [param(pk, id)],
  );
  if (!row) return undefined;
  const counted = counts.map(({ field }) => [field.countAs!, Number(row[field.countAs!])]);
  return {
    record: rowToRecord(resource, row),
    counts: Object.fromEntries(counted) as Row,
    authEpoch: epochOf(row, options.authEpoch),
  };
}

/** Inserts a row, and its change-log entry when given (in one statement where the database can); answers its id. */
export async function insertRow(db: Executor, resource: Resource, values: Row, entry?: EntryValues | null) {
  const pk = resource.primaryKey.name;
  const records = asRecordTables(db);
  const insert = records.insertInto(resource.table).values(toDbValues(resource, values)).returning(pk);
  if (entry && writesWithEntryAtOnce(db)) {
    const row = await records
      .with('written', () => insert)
      .with('logged', (q) =>
        q.insertInto('change_log').values({ ...entry, record_id: sql`(select ${sql.ref(pk)} from written)` }),
      )
      .selectFrom('written')
      .select(pk)
      .executeTakeFirstOrThrow();
    return BigInt(row[pk] as string | bigint);
  }
  const id = BigInt((await insert.executeTakeFirstOrThrow())[pk] as string | bigint);
  if (entry) await insertEntry(db, { ...entry, record_id: id });
  return id;
}

/** Most parameters one statement may carry (SQLite's limit is 32,766; PostgreSQL's 65,535). */
const MAX_PARAMETERS = 30_000;
/** Rows one INSERT of arrays carries (insertsArrays): an import's batch. */
const ROWS_PER_ARRAY_INSERT = 5000;
/**
 * Inserts many rows with multi-row INSERT statements (on PostgreSQL, of an array per column: insertsArrays), in the
 * caller's transaction. Every row must name the same columns. Answers their ids.
 */
export async function insertRows(db: Executor, resource: Resource, rows: readonly Row[]): Promise<bigint[]> {
  if (rows.length === 0) return [];
  const pk = resource.primaryKey.name;
  const ids: bigint[] = [];
  const fields = Object.keys(rows[0]!).map((name) => resource.field(name)!);
  const statement: InsertOf = {
    into: sql`insert into ${sql.table(resource.table)} (${sql.join(fields.map((f) => sql.ref(f.name)))})`,
    returning: sql`returning ${sql.ref(pk)}`,
    fields,
  };
  const arrays = insertsArrays(db);
  const perStatement = arrays ? ROWS_PER_ARRAY_INSERT : Math.max(1, Math.floor(MAX_PARAMETERS / fields.length));
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const { rows: written } = await (arrays ? insertArrays : insertValues)(db, statement, chunk);
    for (const row of written) ids.push(BigInt(row[pk] as string | bigint));
  }
  return ids;
}

/**
 * Rows given batch by batch (`leadbook seed`, an import's batch), in one LOAD DATA LOCAL INFILE on MariaDB, which then
 * parses no SQL per row; elsewhere by insertRows, a batch at a time. Answers their ids. Every row has the first one's
 * fields. On MariaDB the ids are given, counting on from the highest: InnoDB reserves a LOAD DATA's auto-increment
 * values in growing blocks, and the next row written would have had its id past a gap. Should another writer take one
 * of them first, the load fails as on any taken key (an import then writes its batch row by row). A server that does
 * not take LOAD DATA LOCAL (local_infile off) gets INSERTs.
 */
export async function loadRows(
  db: Executor,
  resource: Resource,
  batches: AsyncIterable<readonly Row[]> | Iterable<readonly Row[]>,
) {
  const ids: bigint[] = [];
  const iterator = (async function* () {
    yield* batches;
  })();
  const first = await iterator.next();
  if (first.done) return ids;
  /** The batches from the first on (its fields are the columns). */
  const all = async function* () {
    for (let batch: IteratorResult<readonly Row[]> = first; !batch.done; batch = await iterator.next())
      yield batch.value;
  };
  if (loadsByLoadData(db)) {
    const pk = resource.primaryKey;
    const fields = Object.keys(first.value[0]!).map((name) => resource.field(name)!);
    const highest = await asRecordTables(db)
      .selectFrom(resource.table)
      .select(sql<string | number | null>`max(${sql.ref(pk.name)})`.as('n'))
      .executeTakeFirst();
    let id = BigInt(highest?.n ?? 0);
    const values = async function* () {
      for await (const rows of all())
        yield rows.map((row) => {
          ids.push(++id);
          return [id, ...fields.map((field) => param(field, row[field.name] ?? null))];
        });
    };
    if ((await loadDataLocal(db, resource.table, [pk.name, ...fields.map((f) => f.name)], values())) !== null)
      return ids;
    // The server does not take LOAD DATA LOCAL: the rows go in as INSERTs (it refused before reading any).
  }
  for await (const rows of all()) ids.push(...(await insertRows(db, resource, rows)));
  return ids;
}

/** What the INSERTs of insertRows share: the table and columns, what they answer, the columns' fields. */
interface InsertOf {
  into: RawBuilder<unknown>;
  returning: RawBuilder<unknown>;
  fields: Field[];
}

/**
 * One INSERT … VALUES of rows (SQLite, MariaDB), answering their ids. Its VALUES list is written out here: Kysely's
 * builder took longer to make a statement of a thousand rows (its nodes, then its text) than SQLite took to run it.
 */
function insertValues(db: Executor, { into, returning, fields }: InsertOf, rows: readonly Row[]) {
  const parameters: unknown[] = [];
  for (const row of rows) for (const field of fields) parameters.push(param(field, row[field.name] ?? null));
  const tuple = `(${fields.map(() => '?').join(', ')})`;
  const values = Array(rows.length).fill(tuple).join(', ');
  const text = `${into.compile(db).sql} values ${values} ${returning.compile(db).sql}`;
  return db.executeQuery<Row>(CompiledQuery.raw(text, parameters));
}

/** One INSERT of rows sent as an array per column, answering their ids in the rows' order. */
function insertArrays(db: Executor, { into, returning, fields }: InsertOf, rows: readonly Row[]) {
  const columns = fields.map((field) => {
    const values = rows.map((row) => param(field, row[field.name] ?? null));
    return sql`${values}::${sql.raw(field.kind.pgArray ?? 'text[]')}`;
  });
  return sql<Row>`${into} select * from unnest(${sql.join(columns)}) ${returning}`.execute(db);
}

/**
 * Updates a row, and writes its change-log entry when given (in one statement where the database can); answers the
 * entry's id.
 */
export async function updateRow(
  db: Executor,
  resource: Resource,
  id: bigint,
  values: Row,
  entry?: EntryValues | null,
): Promise<bigint | undefined> {
  const pk = resource.primaryKey;
  const update = asRecordTables(db)
    .updateTable(resource.table)
    .set(toDbValues(resource, values))
    .where(pk.name, '=', param(pk, id));
  if (entry && writesWithEntryAtOnce(db)) {
    const written = await asRecordTables(db)
      .with('written', () => update.returning(pk.name))
      .insertInto('change_log')
      .values({ ...entry, record_id: id })
      .returning('id')
      .executeTakeFirst();
    return written ? BigInt(written.id as string | bigint) : undefined;
  }
  await update.execute();
  return entry ? insertEntry(db, { ...entry, record_id: id }) : undefined;
}

export async function deleteRow(db: Executor, resource: Resource, id: bigint): Promise<boolean> {
  const pk = resource.primaryKey;
  const result = await asRecordTables(db)
    .deleteFrom(resource.table)
    .where(pk.name, '=', param(pk, id))
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Scalar subqueries one statement holds at most (SQLite answers at most 2,000 columns). */
const EXISTS_PER_STATEMENT = 500;

/**
 * Whether each of `records` exists, a scalar subquery each in one statement: a write's references are checked in one
 * round trip, not one each. `authEpoch`: with the auth epoch too, read by the same statement (see selectByIdWithEpoch).
 */
export async function recordsExist(
  db: Executor,
  records: readonly { resource: Resource; id: bigint }[],
  options: { authEpoch?: boolean } = {},
): Promise<{ found: boolean[]; authEpoch?: string }> {
  const statements: (typeof records)[] = [];
  for (let start = 0; start < records.length; start += EXISTS_PER_STATEMENT)
    statements.push(records.slice(start, start + EXISTS_PER_STATEMENT));
  // Nothing to look for: the epoch alone.
  if (statements.length === 0 && options.authEpoch) statements.push([]);
  const found: boolean[] = [];
  let authEpoch: string | undefined;
  for (const [n, some] of statements.entries()) {
    const withEpoch = n === 0 && options.authEpoch === true;
    const row = await asRecordTables(db)
      .selectNoFrom((eb) => [
        ...some.map(({ resource, id }, i) => {
          const pk = resource.primaryKey;
          return eb.selectFrom(resource.table).select(pk.name).where(pk.name, '=', param(pk, id)).as(`r${i}`);
        }),
        ...(withEpoch ? [epochColumn] : []),
      ])
      .executeTakeFirstOrThrow();
    if (withEpoch) authEpoch = epochOf(row, true);
    for (let i = 0; i < some.length; i++) found.push(row[`r${i}`] !== null && row[`r${i}`] !== undefined);
  }
  return { found, authEpoch };
}

export async function recordExists(db: Executor, resource: Resource, id: bigint): Promise<boolean> {
  const pk = resource.primaryKey;
  return (
    (await asRecordTables(db)
      .selectFrom(resource.table)
      .select(pk.name)
      .where(pk.name, '=', param(pk, id))
      .executeTakeFirst()) !== undefined
  );
}

/** How many records of `resource` name `id` in the reference `field`. */
export async function countReferences(db: Executor, resource: Resource, field: Field, id: bigint): Promise<number> {
  const row = await asRecordTables(db)
    .selectFrom(resource.table)
    .select(sql<string | number | bigint>`count(*)`.as('n'))
    .where(field.name, '=', param(field, field.kind.fromDb(id)))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The records of `resource` whose reference `field` names `id`, oldest first, locked for the caller's write. */
export async function selectReferencing(db: Executor, resource: Resource, field: Field, id: bigint): Promise<Row[]> {
  const rows = await asRecordTables(db)
    .selectFrom(resource.table)
    .select(columns(resource))
    .where(field.name, '=', param(field, field.kind.fromDb(id)))
    .orderBy(resource.primaryKey.name)
    .forUpdate()
    .execute();
  return rows.map((row) => rowToRecord(resource, row));
}

/** Makes every record of `resource` whose reference `field` names `from` name `to` (null: none); answers their ids. */
export async function moveReferences(
  db: Executor,
  resource: Resource,
  field: Field,
  from: bigint,
  to: bigint | null,
): Promise<bigint[]> {
  const pk = resource.primaryKey.name;
  const value = param(field, field.kind.fromDb(from));
  const rows = await asRecordTables(db).selectFrom(resource.table).select(pk).where(field.name, '=', value).execute();
  if (rows.length === 0) return [];
  await asRecordTables(db)
    .updateTable(resource.table)
    .set({ [field.name]: param(field, to === null ? null : field.kind.fromDb(to)) })
    .where(field.name, '=', value)
    .execute();
  return rows.map((row) => BigInt(row[pk] as bigint));
}

/**
 * The ids of the rows a list matches, in its order, at most `limit` of them (a bulk action's records, named by a list
 * query): the list's own conditions, without reading the rows.
 */
export async function selectIds(db: Executor, resource: Resource, plan: ListPlan, limit: number): Promise<bigint[]> {
  const pk = resource.primaryKey.name;
  const rows = await readingEveryMatch(db, plan.words, (db) => {
    let query = asRecordTables(db)
      .selectFrom(resource.table)
      .select(pk)
      .where(whereClause(db, resource, plan));
    for (const { field, desc } of plan.sort)
      query = query.orderBy(orderTerm(db, sortColumn(db, field), desc, (field.sortBy ?? field).nullable));
    return query.limit(limit).execute();
  });
  return rows.map((row) => BigInt(row[pk] as string | bigint));
}

/** The rows with these ids that exist, locked for the caller's write when `lock`. */
export async function selectByIds(db: Executor, resource: Resource, ids: readonly bigint[], lock = false) {
  if (ids.length === 0) return [];
  const pk = resource.primaryKey;
  const rows = await asRecordTables(db)
    .selectFrom(resource.table)
    .select(columns(resource))
    .where(
      pk.name,
      'in',
      ids.map((id) => param(pk, id)),
    )
    .$if(lock, (q) => q.forUpdate())
    .execute();
  return rows.map((row) => rowToRecord(resource, row));
}

/**
 * The records whose `field` holds one of `keys` (compared lower-cased when `folded`), each with the key it matched
 * by: an import finding the records its rows update, a batch at a time, in one indexed query.
 */
export async function selectMatching(
  db: Executor,
  resource: Resource,
  field: Field,
  keys: readonly unknown[],
  folded = false,
): Promise<{ key: unknown; record: Row }[]> {
  if (keys.length === 0) return [];
  const key = folded ? sql<unknown>`lower(${sql.ref(field.name)})` : sql<unknown>`${sql.ref(field.name)}`;
  const rows = await asRecordTables(db)
    .selectFrom(resource.table)
    .select(columns(resource))
    .select(key.as('match_key'))
    .where(
      inValues(
        db,
        key,
        keys.map((k) => param(field, k)),
      ),
    )
    .execute();
  return rows.map((row) => ({ key: field.kind.fromDb(row.match_key ?? null), record: rowToRecord(resource, row) }));
}

/** Writes the same values over many rows at once, in the caller's transaction (their entries are the caller's). */
export async function updateRows(db: Executor, resource: Resource, ids: readonly bigint[], values: Row): Promise<void> {
  if (ids.length === 0) return;
  const pk = resource.primaryKey;
  await asRecordTables(db)
    .updateTable(resource.table)
    .set(toDbValues(resource, values))
    .where(
      pk.name,
      'in',
      ids.map((id) => param(pk, id)),
    )
    .execute();
}

/** Most ids one IN list carries: well under either database's limit on parameters. */
const IDS_PER_STATEMENT = 5000;

/** `ids` in slices an IN list takes. */
function* slices(ids: readonly bigint[]): Generator<bigint[]> {
  for (let at = 0; at < ids.length; at += IDS_PER_STATEMENT) yield ids.slice(at, at + IDS_PER_STATEMENT);
}

/** The records of `resource` whose reference `field` names one of `ids`, oldest first, locked for the caller. */
export async function selectReferencingMany(
  db: Executor,
  resource: Resource,
  field: Field,
  ids: readonly bigint[],
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const slice of slices(ids))
    rows.push(
      ...(await asRecordTables(db)
        .selectFrom(resource.table)
        .select(columns(resource))
        .where(
          field.name,
          'in',
          slice.map((id) => param(field, field.kind.fromDb(id))),
        )
        .orderBy(resource.primaryKey.name)
        .forUpdate()
        .execute()),
    );
  return rows.map((row) => rowToRecord(resource, row));
}

/** For each of `ids` that records of `resource` name in `field`, how many do, by id. */
export async function countReferencesMany(
  db: Executor,
  resource: Resource,
  field: Field,
  ids: readonly bigint[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const slice of slices(ids)) {
    const rows = await asRecordTables(db)
      .selectFrom(resource.table)
      .select([field.name, sql<string | number | bigint>`count(*)`.as('n')])
      .where(
        field.name,
        'in',
        slice.map((id) => param(field, field.kind.fromDb(id))),
      )
      .groupBy(field.name)
      .execute();
    for (const row of rows) counts.set(String(row[field.name]), Number(row.n));
  }
  return counts;
}

/** Empties the reference `field` of every record of `resource` that names one of `ids`. */
export async function clearReferences(db: Executor, resource: Resource, field: Field, ids: readonly bigint[]) {
  for (const slice of slices(ids))
    await asRecordTables(db)
      .updateTable(resource.table)
      .set({ [field.name]: null })
      .where(
        field.name,
        'in',
        slice.map((id) => param(field, field.kind.fromDb(id))),
      )
      .execute();
}

/** Deletes the rows with these ids. */
export async function deleteRows(db: Executor, resource: Resource, ids: readonly bigint[]): Promise<void> {
  const pk = resource.primaryKey;
  for (const slice of slices(ids))
    await asRecordTables(db)
      .deleteFrom(resource.table)
      .where(
        pk.name,
        'in',
        slice.map((id) => param(pk, id)),
      )
      .execute();
}
