// Suite 8, load: `leadbook serve` as a separate process, driven over HTTP by a
// closed loop of concurrent workers with a mixed workload — 80% reads (get,
// list, search), 15% writes (create, patch), 5% sign-ins — as fast as the
// machine answers. Every answer must be the expected 2xx. The resident memory
// of the served process is reported at the start, after the warm-up and at the
// end; the soak run (LEADBOOK_SOAK=1, 60 s, both databases) also holds it flat.
// CI runs about 5 s on SQLite.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { toJson } from '../helpers/app.ts';
import { DIALECTS, type FreshDatabase, migratedDatabase } from '../helpers/database.ts';
import { type Served, serveCli } from '../helpers/process.ts';
import { mb, type Outcome, runClosedLoop, summary, treeRss } from './helpers/load.ts';
import type { Json } from '../helpers/json.ts';

const SOAK = Boolean(process.env.LEADBOOK_SOAK);
const DURATION_MS = SOAK ? 60_000 : 5_000;
const WARM_UP_MS = SOAK ? 5_000 : 1_000;
const WORKERS = 8;
const RUN_DIALECTS = SOAK ? DIALECTS : DIALECTS.includes('sqlite') ? ['sqlite' as const] : DIALECTS.slice(0, 1);
const SEED_ROWS = SOAK ? 2000 : 300;
const WORDS = [
  'Lisbon',
  'Oslo',
  'Nairobi',
  'Quito',
  'Osaka',
  'Perth',
  'Tromsø',
  'Zürich',
  'ada',
  'grace',
  'linus',
  'hopper',
];

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

for (const dialect of RUN_DIALECTS) {
  describe(`load: a mixed workload on leadbook serve (${dialect})`, () => {
    let fresh: FreshDatabase | undefined;
    let served: Served | undefined;
    after(async () => {
      await served?.stop();
      await fresh?.drop();
    });

    test(`${DURATION_MS / 1000} s of 80% reads, 15% writes, 5% sign-ins with ${WORKERS} workers: zero errors${SOAK ? ', memory flat' : ''}`, {
      timeout: DURATION_MS + WARM_UP_MS + 60_000,
    }, async (t) => {
      fresh = await migratedDatabase(dialect);
      served = await serveCli({
        DATA_DIR: fresh.options.dataDir,
        ...(fresh.options.databaseUrl ? { DATABASE_URL: fresh.options.databaseUrl } : {}),
        APP_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
      });
      const pid = served.child.pid!;
      const url = served.url;
      const rssAtStart = treeRss(pid);

      const call = async (
        method: string,
        path: string,
        options: { json?: unknown; token?: string; body?: FormData } = {},
      ) => {
        const headers: Record<string, string> = {};
        if (options.token) headers.authorization = `Bearer ${options.token}`;
        if (options.json !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(url + path, {
          method,
          headers,
          body: options.json !== undefined ? toJson(options.json) : options.body,
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        return {
          status: res.status,
          text,
          body: /json/.test(res.headers.get('content-type') ?? '') && text ? JSON.parse(text) : undefined,
        };
      };

      // The team: an admin and four managers, who change anyone's records (they sign in during the run), and their tokens.
      const admin = {
        name: 'Admin',
        email: 'admin@example.com',
        password: `admin pass ${randomBytes(6).toString('hex')}`,
      };
      assert.equal((await call('POST', '/api/v1/auth/register', { json: admin })).status, 201);
      const adminToken = (
        await call('POST', '/api/v1/auth/token', {
          json: { email: admin.email, password: admin.password, device_name: 'load' },
        })
      ).body.token as string;
      const agents: { email: string; password: string; token: string }[] = [];
      for (let i = 0; i < 4; i++) {
        const agent = { email: `agent${i}@example.com`, password: `agent pass ${i} ${randomBytes(4).toString('hex')}` };
        assert.equal(
          (
            await call('POST', '/api/v1/users', {
              json: { name: `Manager ${i}`, role: 'manager', ...agent },
              token: adminToken,
            })
          ).status,
          201,
        );
        const issued = await call('POST', '/api/v1/auth/token', { json: { ...agent, device_name: 'load' } });
        assert.equal(issued.status, 201, issued.text);
        agents.push({ ...agent, token: issued.body.token });
      }
      // Records to read, imported as CSV in one request per resource.
      const ids: Record<'contacts' | 'inquiries', number[]> = { contacts: [], inquiries: [] };
      for (const resource of ['contacts', 'inquiries'] as const) {
        const rows = Array.from(
          { length: SEED_ROWS },
          (_, i) =>
            `${pick(WORDS)} ${pick(WORDS)} ${i},person${i}@example.com,${pick(WORDS)}${resource === 'inquiries' ? `,${i % 2 === 0}` : ''}`,
        );
        const csv = `name,email,city${resource === 'inquiries' ? ',status' : ''}\n${rows.join('\n')}\n`;
        const upload = new FormData();
        upload.append('file', new Blob([csv], { type: 'text/csv' }), `${resource}.csv`);
        const imported = await call('POST', `/api/v1/${resource}/import`, { body: upload, token: adminToken });
        assert.equal(imported.status, 200, imported.text);
        assert.equal(imported.body.created, SEED_ROWS, imported.text);
        const newest = await call('GET', `/api/v1/${resource}?per_page=1`, { token: adminToken });
        const top = Number(newest.body.data[0].id);
        ids[resource] = Array.from({ length: SEED_ROWS }, (_, i) => top - i);
      }

      const timed = async (
        op: string,
        expected: number,
        send: () => Promise<{ status: number; text: string; body?: Json }>,
        check?: (body: Json) => boolean,
      ): Promise<Outcome> => {
        const started = performance.now();
        try {
          const reply = await send();
          const ms = performance.now() - started;
          const ok = reply.status === expected && (check ? check(reply.body) : true);
          return { op, ok, ms, ...(ok ? {} : { detail: `${reply.status} ${reply.text.slice(0, 200)}` }) };
        } catch (error) {
          return { op, ok: false, ms: performance.now() - started, detail: String(error) };
        }
      };
      const next = (): Promise<Outcome> => {
        const r = Math.random();
        const resource = Math.random() < 0.6 ? 'contacts' : 'inquiries';
        const { token } = pick(agents);
        if (r < 0.3)
          return timed(
            'get',
            200,
            () => call('GET', `/api/v1/${resource}/${pick(ids[resource])}`, { token }),
            (b) => b?.data?.id !== undefined,
          );
        if (r < 0.55) {
          const query = pick([
            `page=${1 + Math.floor(Math.random() * 20)}`,
            'sort=name',
            'sort=-city,name',
            `filter[city]=${pick(WORDS)}`,
            'cursor=&per_page=50',
            resource === 'inquiries' ? 'filter[status]=true' : 'per_page=100',
          ]);
          return timed(
            'list',
            200,
            () => call('GET', `/api/v1/${resource}?${query}`, { token }),
            (b) => Array.isArray(b?.data),
          );
        }
        if (r < 0.8)
          return timed(
            'search',
            200,
            () => call('GET', `/api/v1/${resource}?search=${encodeURIComponent(pick(WORDS).slice(0, 4))}`, { token }),
            (b) => Array.isArray(b?.data),
          );
        if (r < 0.875) {
          return timed('create', 201, async () => {
            const reply = await call('POST', `/api/v1/${resource}`, {
              json: { name: `${pick(WORDS)} created`, email: 'new@example.com', city: pick(WORDS) },
              token,
            });
            if (reply.status === 201) ids[resource].push(Number(reply.body.data.id));
            return reply;
          });
        }
        if (r < 0.95)
          return timed('patch', 200, () =>
            call('PATCH', `/api/v1/${resource}/${pick(ids[resource])}`, {
              json: { city: pick(WORDS), phone: `+1 555 ${Math.floor(Math.random() * 10_000)}` },
              token,
            }),
          );
        const agent = pick(agents);
        return timed(
          'sign-in',
          200,
          () => call('POST', '/api/v1/auth/login', { json: { email: agent.email, password: agent.password } }),
          (b) => b?.data?.email === agent.email,
        );
      };

      const warmUp = await runClosedLoop(WORKERS, WARM_UP_MS, next);
      assert.equal(warmUp.errors, 0, `warm-up errors:\n${warmUp.samples.join('\n')}`);
      const rssWarm = treeRss(pid);
      const tally = await runClosedLoop(WORKERS, DURATION_MS, next);
      const rssEnd = treeRss(pid);

      for (const line of summary(tally).split('\n')) t.diagnostic(`${dialect}: ${line}`);
      t.diagnostic(
        `${dialect}: RSS of leadbook serve: ${mb(rssAtStart)} at start, ${mb(rssWarm)} after the warm-up (${warmUp.requests} requests), ${mb(rssEnd)} at the end`,
      );
      assert.ok(rssAtStart > 0 && rssEnd > 0, 'the RSS of the served process was read');
      assert.deepEqual(tally.samples, [], 'no request failed');
      assert.equal(tally.errors, 0);
      assert.ok(tally.requests >= WORKERS * 10, `the load ran (${tally.requests} requests)`);
      const reads =
        ['get', 'list', 'search'].reduce((n, op) => n + (tally.byOp.get(op)?.count ?? 0), 0) / tally.requests;
      assert.ok(reads > 0.7 && reads < 0.9, `about 80% reads (${(reads * 100).toFixed(1)}%)`);
      for (const op of ['get', 'list', 'search', 'create', 'patch', 'sign-in'])
        assert.ok((tally.byOp.get(op)?.count ?? 0) > 0, `some ${op} requests ran`);
      if (SOAK)
        assert.ok(
          rssEnd <= rssWarm * 1.2 + 20 * 1024 * 1024,
          `memory stays flat: ${mb(rssEnd)} at the end against ${mb(rssWarm)} after the warm-up`,
        );
      assert.ok(served!.child.exitCode === null, 'the server is still up');
    });
  });
}
