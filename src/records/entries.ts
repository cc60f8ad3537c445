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
] as const;
const entryInserts = new Map<string, string>();

/**
 * Writes one entry, in the caller's transaction. Its INSERT is compiled once per kind of database and reused with
 * new values: building it anew for each write cost a create on SQLite a twentieth of its speed.
 */
export async function insertEntry(trx: Executor, entry: Insertable<ChangeLogTable>): Promise<void> {
  const dialect = dialectOf(trx);
  let text = entryInserts.get(dialect);
  if (text === undefined) {
    const blank = Object.fromEntries(ENTRY_COLUMNS.map((c) => [c, null])) as unknown as Insertable<ChangeLogTable>;
    text = trx.insertInto('change_log').values(blank).compile().sql;
    entryInserts.set(dialect, text);
  }
  await trx.executeQuery(
    CompiledQuery.raw(
      text,
      ENTRY_COLUMNS.map((c) => entry[c] ?? null),
    ),
  );
}
