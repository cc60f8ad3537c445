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

    test('notes and tasks done on one unanswered inquiry at once: all written, its first response set once', async () => {
      const made = await app.post('/api/v1/inquiries', { name: 'Rush Hour', email: 'rush@example.org' });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id;
      const tasks = await Promise.all(
        Array.from({ length: 6 }, (_, i) => app.post('/api/v1/tasks', { title: `Call ${i}`, inquiry_id: id })),
      );
      for (const t of tasks) assert.equal(t.status, 201, t.text);
      // Each write names the inquiry (its foreign key) and, being a response, updates it: on MariaDB and PostgreSQL
      // they would deadlock if each took the inquiry's row lock only after its own write.
      const answers = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) => app.post(`/api/v1/inquiries/${id}/notes`, { body: `Note ${i}` })),
        ...tasks.map((t) =>
          app.patch(`/api/v1/tasks/${t.body.data.id}`, { inquiry_id: id, done_at: new Date().toISOString() }),
        ),
      ]);
      assert.deepEqual(
        answers.filter((a) => a.status >= 300).map((a) => `${a.status} ${a.text}`),
        [],
      );
      const entries = await app.database.db
        .selectFrom('change_log')
        .select('changes')
        .where('resource', '=', 'inquiries')
        .where('record_id', '=', id)
        .where('action', '=', 'updated')
        .execute();
      assert.equal(entries.filter((e) => String(e.changes).includes('first_response_at')).length, 1);
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
