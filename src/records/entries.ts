// Writing one change-log entry, for the write path (records/repository.ts) and the log (records/change-log.ts).
import { CompiledQuery, type Insertable } from 'kysely';
import { dialectOf } from '../db/dialect.ts';
import type { ChangeLogTable, Executor } from '../db/tables.ts';

/** An entry's values but the record's id (which a create learns with the insert); null when the log is off. */
export type EntryValues = Omit<Insertable<ChangeLogTable>, 'record_id'>;

const ENTRY_COLUMNS = [
  'at',
  'actor_id',
  'via',
  'action',
  'resource',
  'record_id',
  'changes',
  'hidden_changed',
  'cause_id',
  'import_id',
] as const;
const entryInserts = new Map<string, string>();

/**
 * Writes one entry, in the caller's transaction. Its INSERT is compiled once per kind of database and reused with
 * new values: building it anew for each write cost a create on SQLite a twentieth of its speed.
 */
export async function insertEntry(trx: Executor, entry: Insertable<ChangeLogTable>): Promise<bigint | undefined> {
  const dialect = dialectOf(trx);
  let text = entryInserts.get(dialect);
  if (text === undefined) {
    const blank = Object.fromEntries(ENTRY_COLUMNS.map((c) => [c, null])) as unknown as Insertable<ChangeLogTable>;
    text = trx.insertInto('change_log').values(blank).compile().sql;
    entryInserts.set(dialect, text);
  }
  const result = await trx.executeQuery(
    CompiledQuery.raw(
      text,
      ENTRY_COLUMNS.map((c) => entry[c] ?? null),
    ),
  );
  // SQLite tells the new row's id; PostgreSQL would need RETURNING, which only the callers that need the id ask for.
  return result.insertId;
}

/** Most entries one INSERT carries (nine parameters each, under SQLite's limit). */
const ENTRIES_PER_STATEMENT = 3000;

/**
 * Writes many entries with multi-row INSERTs, in the caller's transaction (a bulk action's, one per record); answers
 * each entry's id by the id of its record (a record has one entry in such a batch).
 */
export async function insertEntries(
  trx: Executor,
  entries: readonly Insertable<ChangeLogTable>[],
): Promise<Map<string, bigint>> {
  const ids = new Map<string, bigint>();
  for (let start = 0; start < entries.length; start += ENTRIES_PER_STATEMENT) {
    const written = await trx
      .insertInto('change_log')
      .values(entries.slice(start, start + ENTRIES_PER_STATEMENT))
      .returning(['id', 'record_id'])
      .execute();
    for (const row of written) ids.set(String(row.record_id), BigInt(row.id));
  }
  return ids;
}
