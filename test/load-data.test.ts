// MariaDB's LOAD DATA LOCAL INFILE (src/db/connection.ts, loadDataLocal), which `leadbook seed` loads an empty table
// with: every value comes back as it went in, whatever it holds of what the format escapes, in the caller's
// transaction, which a rollback takes back whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Database, loadDataLocal, openDatabase } from '../src/db/connection.ts';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';

const TRICKY = [
  'a\ttab',
  'a\nnew line\r\nand a carriage return',
  'back\\slash\\',
  'nul\u0000byte',
  '\\N',
  'NULL',
  '',
  'déjà vu, Þóra, 漢字, 🙂',
];
// (A text that is exactly an instant is respelled as by any statement: the known gap of src/db/README.md.)

async function* inBatches<T>(rows: T[], size: number) {
  for (let start = 0; start < rows.length; start += size) yield rows.slice(start, start + size);
}

if (DIALECTS.includes('mysql'))
  describe('LOAD DATA LOCAL INFILE (mysql)', () => {
    let fresh: FreshDatabase;
    let database: Database;
    before(async () => {
      fresh = await freshDatabase('mysql');
      database = openDatabase(fresh.options);
      await sql`create table loaded (id bigint primary key, text longtext, at datetime(3), n bigint, short varchar(3))`.execute(
        database.db,
      );
    });
    after(async () => {
      await database.close();
      await fresh.drop();
    });

    test('each value comes back as it was given, NULL as NULL and an instant as the instant', async () => {
      const rows = [
        ...TRICKY.map((text, i) => [i + 1, text, '2024-05-01T10:20:30.456Z', i]),
        [TRICKY.length + 1, null, null, null],
      ];
      const loaded = await database.db
        .transaction()
        .execute((trx) => loadDataLocal(trx, 'loaded', ['id', 'text', 'at', 'n'], inBatches(rows, 4)));
      assert.equal(loaded, rows.length);
      const { rows: read } = await sql<{ id: string; text: string | null; at: Date | null; n: string | null }>`
        select id, text, at, n from loaded order by id`.execute(database.db);
      assert.deepEqual(
        read.map((r) => [Number(r.id), r.text, r.at?.toISOString() ?? null, r.n === null ? null : Number(r.n)]),
        rows,
      );
    });

    test('a row MariaDB would skip or cut (LOCAL loads as if IGNORE were given) fails the whole load', async () => {
      const load = (rows: unknown[][]) =>
        database.db
          .transaction()
          .execute((trx) => loadDataLocal(trx, 'loaded', ['id', 'text', 'short'], inBatches(rows, 2)));
      await assert.rejects(
        load([
          [5000, 'new', 'abc'],
          [1, 'its id is taken', null],
        ]),
        /did not load every row of loaded as it was given: Warning 1062: Duplicate entry '1'/,
      );
      await assert.rejects(load([[5001, 'too long', 'abcd']]), /Warning 1265: Data truncated for column 'short'/);
      const { rows } = await sql<{ n: string }>`select count(*) as n from loaded where id >= 5000`.execute(database.db);
      assert.equal(Number(rows[0]!.n), 0, 'nothing of either load stayed');
    });

    test('a rollback takes the whole load back', async () => {
      const rows = Array.from({ length: 1000 }, (_, i) => [100 + i, `row ${i}`, null, i]);
      await assert.rejects(
        database.db.transaction().execute(async (trx) => {
          await loadDataLocal(trx, 'loaded', ['id', 'text', 'at', 'n'], inBatches(rows, 300));
          throw new Error('given up after the load');
        }),
        /given up/,
      );
      const { rows: left } = await sql<{
        n: string;
      }>`select count(*) as n from loaded where id between 100 and 1099`.execute(database.db);
      assert.equal(Number(left[0]!.n), 0);
    });
  });
