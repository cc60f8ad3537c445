// Creates sent at once, over HTTP on each database (on SQLite they share one transaction, each in a savepoint of its
// own: src/db/group-commit.ts): those that collide on a unique value are refused by field, alone, and the others are
// written whole, each with its one change-log entry; a refused one leaves no entry and no row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { groupedTransaction } from '../src/db/group-commit.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

for (const dialect of DIALECTS) {
  describe(`creates sent at once (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
    });
    after(() => app?.close());

    test('40 at once, 10 of them one name: 31 written with their entries, 9 refused on name, nothing half-written', async () => {
      const names = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? 'Shared fair' : `Fair ${i}`));
      const answers = await Promise.all(names.map((name) => app.post('/api/v1/sources', { name })));
      const refused = answers.filter((a) => a.status !== 201);
      assert.equal(answers.length - refused.length, 31, answers.map((a) => a.status).join(','));
      for (const a of refused) {
        assert.ok([409, 422].includes(a.status), a.text);
        assert.ok(a.body.errors?.name, `the refusal names the field: ${a.text}`);
      }
      const rows = await app.database.db.selectFrom('sources').select(['id', 'name']).execute();
      assert.deepEqual(rows.map((r) => r.name).sort(), [...new Set(names)].sort(), 'each name once');
      const entries = await app.database.db
        .selectFrom('change_log')
        .select('record_id')
        .where('resource', '=', 'sources')
        .where('action', '=', 'created')
        .execute();
      assert.deepEqual(
        entries.map((e) => String(e.record_id)).sort(),
        rows.map((r) => String(r.id)).sort(),
        'one entry per row written, none for a refusal',
      );
    });

    test('writes asked for together: one failing after it wrote is undone alone, the others are kept', async () => {
      const write = (name: string, fail: boolean) =>
        groupedTransaction(app.database, async (trx) => {
          await trx.insertInto('sources').values({ name, active: true }).execute();
          if (fail) throw new Error(`${name} fails after writing`);
          return name;
        });
      const names = ['Grouped A', 'Grouped B', 'Grouped C', 'Grouped D'];
      const outcomes = await Promise.allSettled(names.map((name, i) => write(name, i === 1)));
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
      );
      const stored = await app.database.db
        .selectFrom('sources')
        .select('name')
        .where('name', 'like', 'Grouped %')
        .orderBy('name')
        .execute();
      assert.deepEqual(
        stored.map((r) => r.name),
        ['Grouped A', 'Grouped C', 'Grouped D'],
      );
    });
  });
}
