// Webhooks across real `leadbook serve` processes on one database, on each
// database (issue 16's acceptance): 1,000 changes across 50 records while the
// app is SIGKILLed 10 times (50 with LEADBOOK_SOAK=1) and restarted, to a
// receiver that fails the first 3 attempts of each message and verifies every
// signature with the `standardwebhooks` package: every event arrives, in order
// per record, a repeat only ever under the same webhook-id. Then two processes
// at once, the lease holder frozen (SIGSTOP) past its lease (1.5 s here) while
// its sends are under way, and thawed: no message is ever being answered twice
// at the same time.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, type FreshDatabase, migratedDatabase } from '../helpers/database.ts';
import { call, crash, type Served, serveCli } from '../helpers/process.ts';
import { type Delivered, type Receiver, startReceiver, until } from '../helpers/webhook-receiver.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const password = 'a passphrase for the hooks 42';
const KILLS = process.env.LEADBOOK_SOAK ? 50 : 10;

/** Each record's events as the receiver first accepted them: its step numbers (created: 0), in arrival order. */
function stepsPerRecord(accepted: readonly Delivered[]): Map<number, number[]> {
  const first = new Map<string, Delivered>();
  for (const d of accepted) if (!first.has(d.id)) first.set(d.id, d);
  const steps = new Map<number, number[]>();
  for (const d of first.values()) {
    const id = Number(d.event.data.id);
    const step = d.event.type === 'contact.created' ? 0 : Number(String(d.event.changes.city[1]).slice(5));
    steps.set(id, [...(steps.get(id) ?? []), step]);
  }
  return steps;
}

for (const dialect of DIALECTS) {
  describe(`webhooks across processes (${dialect})`, { timeout: 600_000 }, () => {
    let fresh: FreshDatabase;
    let env: Record<string, string>;
    let token: string;
    const running: Served[] = [];
    const receivers: Receiver[] = [];
    const serve = async () => {
      const served = await serveCli(env, 30_000);
      running.push(served);
      return served;
    };
    const endpoint = async (base: string, to: Receiver) => {
      const made = await call(base, 'POST', '/api/v1/webhooks', token, {
        url: to.url,
        events: ['contact.created', 'contact.updated'],
      });
      assert.equal(made.status, 201, made.text);
      to.secrets.push(made.body.secret);
      return made.body.data;
    };

    before(async () => {
      fresh = await migratedDatabase(dialect);
      env = {
        DATA_DIR: fresh.options.dataDir,
        APP_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
        SCHEDULER_TICK_MS: '100',
        // A killed holder's lease runs out in 1.5 s, so the next process takes the deliveries over at once.
        SCHEDULER_LEASE_MS: '1500',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_CONCURRENCY: '16',
        WEBHOOKS_RETRY_BASE_MS: '20',
        ...(fresh.options.databaseUrl ? { DATABASE_URL: fresh.options.databaseUrl } : {}),
      };
      const first = await serve();
      const admin = { name: 'Admin', email: `admin.${dialect}@example.org`, password };
      assert.equal((await call(first.url, 'POST', '/api/v1/auth/register', null, admin)).status, 201);
      const issued = await call(first.url, 'POST', '/api/v1/auth/token', null, {
        email: admin.email,
        password,
        device_name: 'test',
      });
      assert.equal(issued.status, 201, issued.text);
      token = issued.body.token;
      await first.stop();
    });
    after(async () => {
      for (const s of running) {
        if (s.child.signalCode === null && s.child.exitCode === null) s.child.kill('SIGCONT');
        await s.stop();
      }
      for (const r of receivers) await r.close();
      await fresh?.drop();
    });

    test(`1,000 changes across 50 records, the app SIGKILLed ${KILLS} times: no event lost, order kept`, async () => {
      const to = await startReceiver({ failFirst: 3 });
      receivers.push(to);
      let app = await serve();
      await endpoint(app.url, to);
      const ids: number[] = [];
      for (let i = 0; i < 50; i++) {
        const made = await call(app.url, 'POST', '/api/v1/contacts', token, { name: `Kill ${i}`, city: 'step 0' });
        assert.equal(made.status, 201, made.text);
        ids.push(made.body.data.id);
      }
      // 950 updates in KILLS chunks; after each chunk, while its deliveries are under way, the app is killed.
      const updates = Array.from({ length: 950 }, (_, n) => ({ id: ids[n % 50]!, step: Math.floor(n / 50) + 1 }));
      const chunk = Math.ceil(updates.length / KILLS);
      for (let start = 0; start < updates.length; start += chunk) {
        for (const step of new Set(updates.slice(start, start + chunk).map((u) => u.step)))
          await Promise.all(
            updates
              .slice(start, start + chunk)
              .filter((u) => u.step === step)
              .map(async (u) => {
                const changed = await call(app.url, 'PATCH', `/api/v1/contacts/${u.id}`, token, {
                  city: `step ${u.step}`,
                });
                assert.equal(changed.status, 200, changed.text);
              }),
          );
        // Killed while it is the one sending: once attempts reach the receiver from it, at a random moment.
        const seen = to.attempts.length;
        for (let i = 0; i < 100 && to.attempts.length === seen; i++) await sleep(50);
        await sleep(50 + Math.random() * 250);
        await crash(app);
        app = await serve();
      }
      const distinct = () => new Set(to.accepted.map((d) => d.id)).size;
      await until(
        () => distinct() >= 1000,
        240_000,
        () => `${distinct()} of 1000 accepted`,
      );
      await sleep(500);
      assert.equal(distinct(), 1000);
      assert.equal(to.badSignatures.length, 0);
      // A message accepted twice (its process killed before it was marked sent) is the same message: same id, body.
      const bodies = new Map<string, string>();
      for (const d of to.accepted) {
        assert.equal(bodies.get(d.id) ?? d.body, d.body);
        bodies.set(d.id, d.body);
      }
      const steps = stepsPerRecord(to.accepted);
      assert.equal(steps.size, 50);
      for (const id of ids)
        assert.deepEqual(
          steps.get(id),
          Array.from({ length: 20 }, (_, n) => n),
          `record ${id}`,
        );
      await app.stop();
    });

    test('two processes, the lease holder frozen past its lease: no message is sent twice at once', async () => {
      const to = await startReceiver({ failFirst: 1, delayMs: 40 });
      receivers.push(to);
      const [a, b] = [await serve(), await serve()];
      await endpoint(a.url, to);
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const made = await call(i % 2 ? b.url : a.url, 'POST', '/api/v1/contacts', token, {
          name: `Pair ${i}`,
          city: 'step 0',
        });
        assert.equal(made.status, 201, made.text);
        ids.push(made.body.data.id);
      }
      for (let step = 1; step <= 14; step++)
        await Promise.all(
          ids.map((id, i) =>
            call(i % 2 ? b.url : a.url, 'PATCH', `/api/v1/contacts/${id}`, token, { city: `step ${step}` }),
          ),
        );
      // Freeze whichever holds the lease (sends are under way), past its lease, then let it go on.
      await until(
        () => to.accepted.length > 20,
        30_000,
        () => 'deliveries under way',
      );
      const frozen = (await isSending(a, to)) ? a : b;
      frozen.child.kill('SIGSTOP');
      await sleep(4000);
      frozen.child.kill('SIGCONT');
      const distinct = () => new Set(to.accepted.map((d) => d.id)).size;
      await until(
        () => distinct() >= 300,
        120_000,
        () => `${distinct()} of 300 accepted`,
      );
      assert.deepEqual(to.overlapping, []);
      assert.equal(to.badSignatures.length, 0);
      const steps = stepsPerRecord(to.accepted);
      for (const id of ids)
        assert.deepEqual(
          steps.get(id),
          Array.from({ length: 15 }, (_, n) => n),
        );
    });
  });
}

/** Whether `served` is the process sending: no attempt reaches the receiver while it is frozen for 300 ms. */
async function isSending(served: Served, to: Receiver): Promise<boolean> {
  served.child.kill('SIGSTOP');
  const before = to.attempts.length;
  await sleep(300);
  const seen = to.attempts.length - before;
  served.child.kill('SIGCONT');
  return seen === 0;
}
