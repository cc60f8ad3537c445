// The floor of a bulk load on SQLite (issue 18: "CSV import ≥ 0.75 × the floor's bulk insert of the same rows into
// the same schema"). Before the import, the database is copied as it then is (schema, indexes, triggers, the search
// index, the lookup rows); after it, the contacts the import wrote are inserted into that copy by bare
// better-sqlite3: one prepared INSERT of every stored column, the app's pragmas, no validation, change log or
// matching. What the import takes beyond this is what Leadbook adds to the database's own work.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import { withSqliteSettings } from '../src/db/connection.ts';

function open(file: string, readonly = false): SQLite.Database {
  const db = withSqliteSettings(new SQLite(file, { readonly }));
  db.defaultSafeIntegers(true); // exact 64-bit integers, as the app reads them
  return db;
}

/** A consistent copy of the database file at `file` (VACUUM INTO), to insert into later. */
export function copyDatabase(file: string, copy: string): void {
  fs.rmSync(copy, { force: true });
  const db = open(file, true);
  try {
    db.prepare('VACUUM INTO ?').run(copy);
  } finally {
    db.close();
  }
}

/**
 * Inserts the contacts of `from` that `into` lacks (by id), as the floor does, in transactions of `batch` rows (all
 * in one when not given), the first `limit` of them when given; how many, and the seconds it took.
 */
function insertRows(from: string, into: string, batch = Infinity, limit = Infinity): { rows: number; seconds: number } {
  const source = open(from, true);
  const target = open(into);
  try {
    // Stored columns only (a generated column is not inserted): table_info leaves the hidden ones out.
    const columns = (target.pragma('table_info(contacts)') as { name: string }[]).map((c) => `"${c.name}"`);
    const have = (target.prepare('SELECT coalesce(max(id), 0) AS id FROM contacts').get() as { id: bigint }).id;
    const read = source.prepare(`SELECT ${columns.join(', ')} FROM contacts WHERE id > ? ORDER BY id LIMIT ?`).raw();
    const insert = target.prepare(
      `INSERT INTO contacts (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    const started = performance.now();
    let rows = 0;
    target.exec('BEGIN');
    for (const row of read.iterate(have, Number.isFinite(limit) ? limit : -1) as IterableIterator<unknown[]>) {
      insert.run(row);
      if (++rows % batch === 0) target.exec('COMMIT; BEGIN');
    }
    target.exec('COMMIT');
    return { rows, seconds: (performance.now() - started) / 1000 };
  } finally {
    source.close();
    target.close();
  }
}

/** The rows --quick has the floor insert: a rate on the first rows, which the growing indexes slow least. */
export const QUICK_FLOOR_ROWS = 20_000;

/**
 * The floor's bulk insert of the contacts `from` holds into the copy `into`: the faster of one transaction and
 * transactions of 5,000 rows (one large transaction spills SQLite's page cache; the import commits in batches), or
 * with `quick` (the bench's --quick) the first QUICK_FLOOR_ROWS of them in transactions of 5,000 rows, as the import
 * commits.
 */
export function floorBulkInsert(
  from: string,
  into: string,
  quick = false,
): { rows: number; seconds: number; how: string } {
  const how = 'transactions of 5,000 rows';
  if (quick) return { ...insertRows(from, into, 5000, QUICK_FLOOR_ROWS), how };
  const batched = (file: string) => ({ ...insertRows(from, file, 5000), how });
  const again = `${into}.again`;
  copyDatabase(into, again);
  try {
    const whole = { ...insertRows(from, into), how: 'one transaction' };
    const inBatches = batched(again);
    return whole.seconds <= inBatches.seconds ? whole : inBatches;
  } finally {
    for (const f of [again, `${again}-wal`, `${again}-shm`]) fs.rmSync(f, { force: true });
  }
}
