// Database outage (PostgreSQL): the app reaches its database through a TCP
// proxy of the test's own, which is stopped under load (the port refuses, open
// connections are cut) and started again. Meanwhile requests answer 503
// problem+json quickly, /readyz fails and /healthz answers; afterwards the
// same process recovers by itself and no acknowledged write is lost.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIALECTS, freshDatabase } from '../helpers/database.ts';
import { type Answer, api, asListed, envOf, recordsById, serve, signUpAdmin, sleep, SOAK } from './helpers/served.ts';
import { TcpProxy } from './helpers/tcp-proxy.ts';
import type { Json } from '../helpers/json.ts';

const OUTAGES = SOAK ? 20 : 2;
const OUTAGE_MS = 2000;
const WRITERS = 4;
const READERS = 2;
/** How long any answer may take while the database is away. */
const QUICK_MS = 2000;

type Phase = 'up' | 'down' | 'back';
interface Outcome {
  phase: Phase;
  what: string;
  status: number | 'no answer';
  at: number;
  ms: number;
  detail: string;
}

const isUnavailable = (a: Answer) =>
  a.status === 503 &&
  /^application\/problem\+json/.test(a.headers.get('content-type') ?? '') &&
  a.body?.code === 'unavailable' &&
  a.headers.get('retry-after') !== null;

describe('database outage (postgres)', {
  skip: !DIALECTS.includes('postgres') && 'PostgreSQL is not among LEADBOOK_TEST_DIALECTS',
}, () => {
  test(`requests answer 503 quickly while the database is away, and the app recovers by itself (${OUTAGES} outages)`, {
    timeout: SOAK ? 900_000 : 120_000,
  }, async (t) => {
    const fresh = await freshDatabase('postgres');
    const direct = new URL(fresh.options.databaseUrl!);
    const proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.port = String(await proxy.start());
    const server = await serve(envOf(fresh, { DATABASE_URL: viaProxy.toString() }));
    const stats = {
      outages: 0,
      requests: 0,
      unavailable: 0,
      failures: 0,
      lost: 0,
      slowestMs: 0,
      recoveryMs: [] as number[],
    };
    try {
      const admin = await signUpAdmin(server.url);
      const client = api(server.url, admin.token);
      // The services the writes name (a reference names a record that exists).
      const services: unknown[] = [];
      for (const name of ['Heat pumps', 'Roof panels', 'Batteries']) {
        const made = await client.request('POST', '/api/v1/services', { json: { name } });
        assert.equal(made.status, 201, made.text);
        services.push(made.body.data.id);
      }
      let phase: Phase = 'up';
      let running = true;
      const outcomes: Outcome[] = [];
      const acked = new Map<string, Record<string, unknown>>();
      const sent = new Map<string, Record<string, unknown>>();
      let n = 0;
      const stops: number[] = [];
      const backs: number[] = [];

      const timed = async (what: string, call: () => Promise<Answer>): Promise<Answer | undefined> => {
        const startedIn = phase;
        const t0 = Date.now();
        try {
          const answer = await call();
          outcomes.push({
            phase: startedIn,
            what,
            status: answer.status,
            at: t0,
            ms: Date.now() - t0,
            detail: answer.text.slice(0, 200),
          });
          return answer;
        } catch (error) {
          outcomes.push({
            phase: startedIn,
            what,
            status: 'no answer',
            at: t0,
            ms: Date.now() - t0,
            detail: String((error as Error).cause ?? error),
          });
          return undefined;
        }
      };
      const writer = async () => {
        while (running) {
          const body = {
            name: `outage write ${++n}`,
            city: `city ${n}`,
            detail: `detail ${n} ✓`,
            service_id: services[n % services.length],
          };
          sent.set(body.name, body);
          const answer = await timed('create', () =>
            client.request('POST', '/api/v1/contacts', { json: body, timeoutMs: 5000 }),
          );
          if (answer?.status === 201) acked.set(String(answer.body.data.id), asListed(answer.body.data));
          else await sleep(20);
        }
      };
      const reader = async () => {
        while (running) {
          const ids = [...acked.keys()];
          const path =
            ids.length && n % 2
              ? `/api/v1/contacts/${ids[n % ids.length]}`
              : '/api/v1/contacts?per_page=20&search=outage';
          const answer = await timed('read', () => client.request('GET', path, { timeoutMs: 5000 }));
          if (answer?.status !== 200) await sleep(20);
        }
      };
      const load = [...Array.from({ length: WRITERS }, writer), ...Array.from({ length: READERS }, reader)];

      for (let outage = 1; outage <= OUTAGES; outage++) {
        await sleep(500);
        phase = 'down';
        const stoppedAt = Date.now();
        stops.push(stoppedAt);
        await proxy.stop();
        // While it is away: health answers, readiness fails, both quickly.
        await sleep(300);
        const health = await timed('healthz', () => client.request('GET', '/healthz', { timeoutMs: 5000 }));
        assert.equal(health?.status, 200, '/healthz answers while the database is away');
        const ready = await timed('readyz', () => client.request('GET', '/readyz', { timeoutMs: 5000 }));
        assert.ok(
          ready && isUnavailable(ready),
          `/readyz answers 503 problem+json while the database is away: ${ready?.status} ${ready?.text}`,
        );
        await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));

        backs.push(Date.now());
        await proxy.start();
        const backAt = Date.now();
        phase = 'back';
        let readyAgain = false;
        while (!readyAgain && Date.now() - backAt < 15_000) {
          readyAgain = (await client.request('GET', '/readyz', { timeoutMs: 5000 })).status === 200;
          if (!readyAgain) await sleep(50);
        }
        assert.ok(readyAgain, `the app is ready again within 15 s of the database coming back (outage ${outage})`);
        stats.recoveryMs.push(Date.now() - backAt);
        await sleep(300);
        phase = 'up';
        stats.outages++;
      }
      await sleep(300);
      running = false;
      await Promise.all(load);
      assert.equal(server.child.exitCode, null, 'the same process served throughout: no restart');

      stats.requests = outcomes.length;
      stats.unavailable = outcomes.filter((o) => o.status === 503).length;
      stats.slowestMs = Math.max(...outcomes.filter((o) => o.phase === 'down').map((o) => o.ms));
      const wrong = outcomes.filter((o) => {
        if (o.status === 'no answer') return true; // a hanging or dropped socket
        if (o.phase === 'down') {
          // One sent just before the database came back may reach it, and succeed.
          const metReturn = backs.some((b) => b >= o.at && b <= o.at + o.ms);
          return (
            !(o.status === 503 || (o.what === 'healthz' && o.status === 200) || (metReturn && o.status < 300)) ||
            o.ms > QUICK_MS
          );
        }
        // While up, a request fails only when the cut came while it ran (503); a 5xx other than 503 never.
        if (o.phase === 'up' && !stops.some((s) => s >= o.at && s <= o.at + o.ms)) return o.status >= 300;
        return o.status >= 500 && o.status !== 503;
      });
      stats.failures = wrong.length;
      assert.deepEqual(
        wrong,
        [],
        'every request while the database is away answers 503 within 2 s, and every other one succeeds; none hangs',
      );
      assert.ok(stats.unavailable > OUTAGES, `requests met the outage (${stats.unavailable} answered 503)`);
      // Each 503 is logged by its request's own logger (made when the request first logs): with the request's id, and
      // nothing secret.
      const warned = server
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"database unavailable"'))
        .map((l) => JSON.parse(l));
      assert.ok(warned.length >= OUTAGES, `${warned.length} lines say the database is unavailable`);
      for (const line of warned) assert.match(line.reqId ?? '', /^[\w.:-]+$/, JSON.stringify(line));
      assert.ok(!server.output().includes(admin.token), 'the token is never logged');

      // Every acknowledged write is there as acknowledged; one that was not is there wholly or not at all.
      const stored = await recordsById(client, 'contacts', [...acked.keys()].map(BigInt));
      const lost = [...acked].filter(([id, record]) => {
        try {
          assert.deepStrictEqual(stored.get(id), record);
          return false;
        } catch {
          return true;
        }
      });
      stats.lost = lost.length;
      assert.deepEqual(
        lost.map(([id]) => id),
        [],
        'no acknowledged write is lost',
      );
      const records: Record<string, Json>[] = [];
      for (let cursor = ''; ; ) {
        const page = await client.get(`/api/v1/contacts?per_page=100&cursor=${encodeURIComponent(cursor)}`);
        assert.equal(page.status, 200, page.text);
        records.push(...page.body.data);
        if (!page.body.meta.next_cursor) break;
        cursor = page.body.meta.next_cursor;
      }
      for (const record of records.filter((r) => !acked.has(String(r.id)))) {
        const body = sent.get(record.name);
        assert.ok(body, `record ${record.id} (${record.name}) was never sent`);
        for (const [field, value] of Object.entries(body))
          assert.equal(record[field], value, `the unanswered write ${record.name} is there wholly (${field})`);
      }
      assert.ok(records.length >= acked.size, `${records.length} records hold the ${acked.size} acknowledged`);
    } finally {
      t.diagnostic(
        `reliability outage postgres: outages=${stats.outages} requests=${stats.requests} answered_503=${stats.unavailable} failures=${stats.failures} lost_writes=${stats.lost} slowest_answer_while_down_ms=${stats.slowestMs} recovery_ms=${stats.recoveryMs.join(',')}`,
      );
      // What the app logged as errors, by message: the first place to look when this fails.
      const errors = new Map<string, number>();
      for (const line of server.output().split('\n')) {
        if (!line.includes('"level":50')) continue;
        const message = String(JSON.parse(line).err?.message ?? JSON.parse(line).msg).replace(/:\d+$/, '');
        errors.set(message, (errors.get(message) ?? 0) + 1);
      }
      t.diagnostic(`errors the app logged: ${JSON.stringify(Object.fromEntries(errors))}`);
      if (server.child.exitCode !== null)
        t.diagnostic(`the server exited with ${server.child.exitCode}:\n${server.output().slice(-3000)}`);
      await server.kill('SIGKILL');
      await proxy.stop();
      await fresh.drop();
    }
  });
});
