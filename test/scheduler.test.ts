// The scheduler's lease, on each database: of several processes' schedulers on
// one database exactly one runs the timed work; when it stops or dies another
// takes over. And its first job: deletions older than TRASH_DAYS are emptied
// from the trash (their values are gone; restoring answers 410). And webhook
// deliveries done for 30 days are forgotten.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { purgeTrash } from '../src/records/trash.ts';
import { forgetOldDeliveries } from '../src/webhooks/dispatch.ts';
import { startScheduler } from '../src/scheduler.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

const quiet = { error() {}, warn() {} } as never;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const dialect of DIALECTS) {
  describe(`scheduler (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      // The app's own scheduler ticks once at start and then not again during these tests: ticking every 5 s, it
      // could take the lease in the moment between its running out and the competitor's tick below.
      app = await startApp(dialect, {
        env: { SCHEDULER_TICK_MS: String(60 * 60 * 1000), WEBHOOKS_ALLOW_PRIVATE: 'true' },
      });
    });
    after(() => app.close());

    test('one holder at a time runs the jobs; a stopped or dead holder is replaced', async () => {
      // These two compete for a lease of their own. The app's scheduler may still be in its first tick, and its
      // jobs renew the app's lease as they go: on a slow machine one did so in the moment the holder's ran out.
      const runs: string[] = [];
      const job = (who: string) => [{ name: 'count', everyMs: 0, run: async () => void runs.push(who) }];
      const options = { tickMs: 60_000, leaseMs: 400, lease: 'scheduler test' };
      const one = startScheduler(app.database, job('one'), quiet, options);
      const two = startScheduler(app.database, job('two'), quiet, options);
      await sleep(50);
      runs.length = 0;
      const held = await Promise.all([one.tick(), two.tick(), one.tick(), two.tick()]);
      assert.equal(held.filter(Boolean).length, 2, 'one of them holds it, on both of its ticks');
      assert.equal(new Set(runs).size, 1, `only the holder ran: ${runs.join(',')}`);
      const [holder, other] = runs[0] === 'one' ? [one, two] : [two, one];
      // A holder that dies stops renewing: once the lease runs out, the other takes it.
      assert.equal(await other.tick(), false);
      await sleep(500);
      assert.equal(await other.tick(), true, 'taken over after the lease ran out');
      assert.equal(await holder.tick(), false, 'the old holder does not run any more');
      // Stopping hands the lease back at once.
      await other.stop();
      assert.equal(await holder.tick(), true);
      await holder.stop();
    });

    test('deletions older than TRASH_DAYS are emptied: gone from the trash, and restoring says so', async () => {
      const old = (await app.post('/api/v1/contacts', { name: 'Long gone', city: 'Oslo' })).body.data;
      const recent = (await app.post('/api/v1/contacts', { name: 'Just deleted' })).body.data;
      for (const c of [old, recent]) assert.equal((await app.delete(`/api/v1/contacts/${c.id}`)).status, 204);
      const trash = (await app.get('/api/v1/trash')).body.data as { id: unknown; change_id: unknown }[];
      const item = trash.find((t) => String(t.id) === String(old.id))!;
      const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
      await app.database.db
        .updateTable('change_log')
        .set({ at: longAgo })
        .where('id', '=', BigInt(String(item.change_id)))
        .execute();
      assert.equal(await purgeTrash(app.database.db, 30), 1);
      const left = (await app.get('/api/v1/trash')).body.data as { id: unknown }[];
      assert.deepEqual(
        left.filter((t) => [String(old.id), String(recent.id)].includes(String(t.id))).map((t) => String(t.id)),
        [String(recent.id)],
      );
      const restore = await app.post(`/api/v1/trash/${item.change_id}/restore`);
      assert.equal(restore.status, 410, restore.text);
      const { rows } = await sql<{ changes: string | null }>`select changes from change_log where id = ${BigInt(
        String(item.change_id),
      )}`.execute(app.database.db);
      assert.equal(rows[0]!.changes, null, 'the values are gone from the log');
    });

    test('webhook deliveries done for 30 days are forgotten, in batches; pending and recent ones are kept', async () => {
      const made = await app.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] });
      assert.equal(made.status, 201, made.text);
      const day = 24 * 3600 * 1000;
      const delivery = (status: 'pending' | 'succeeded' | 'failed', daysAgo: number, n: number) => ({
        webhook_id: BigInt(made.body.data.id),
        event: 'contact.created',
        queue: `contacts:${n}`,
        payload: '{}',
        status,
        // Pending ones are not due while the test runs: the app's dispatcher leaves them be.
        next_attempt_at: new Date(Date.now() + day).toISOString(),
        created_at: new Date(Date.now() - daysAgo * day + n).toISOString(),
      });
      // More than one batch (2,000) of old ones, a pending one among them, then the recent ones.
      const old = Array.from({ length: 2_100 }, (_, n) => delivery(n % 2 ? 'failed' : 'succeeded', 31, n));
      old[1_000] = delivery('pending', 31, 1_000);
      const recent = [delivery('succeeded', 29, 0), delivery('failed', 1, 1), delivery('pending', 0, 2)];
      const { db } = app.database;
      for (const rows of [old.slice(0, 1_000), old.slice(1_000), recent])
        await db.insertInto('webhook_deliveries').values(rows).execute();
      const left = async () =>
        (
          await db
            .selectFrom('webhook_deliveries')
            .select(['queue', 'status'])
            .where('webhook_id', '=', BigInt(made.body.data.id))
            .orderBy('id')
            .execute()
        ).map((d) => `${d.queue} ${d.status}`);
      assert.equal((await left()).length, 2_103);
      let asked = 0;
      await forgetOldDeliveries.run(db, async () => ++asked > 0);
      assert.deepEqual(await left(), [
        'contacts:1000 pending',
        'contacts:0 succeeded',
        'contacts:1 failed',
        'contacts:2 pending',
      ]);
      assert.equal(asked, 1, 'the lease is renewed between batches');
    });
  });
}
