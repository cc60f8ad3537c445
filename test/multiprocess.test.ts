// More than one app process on one database: two separate `leadbook serve`
// processes on one PostgreSQL database (as behind any load balancer), and
// `leadbook serve --workers 2` on each database. A session, a token, an ETag
// and the sign-in throttle made through one process hold on the other.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';
import { type Served, serveCli } from './helpers/process.ts';

const password = 'correct horse battery staple 12';
const email = 'admin@example.test';

async function call(
  base: string,
  method: string,
  url: string,
  options: { json?: unknown; cookie?: string; token?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { accept: 'application/json', origin: base, ...options.headers };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (options.cookie) headers.cookie = options.cookie;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(base + url, {
    method,
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text };
}

const sessionCookie = (headers: Headers) =>
  headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');

/** The process id that answered, read from the app's own log line for a fresh connection's request. */
function pidsServing(served: Served, requests: number): Promise<Set<string>> {
  const url = new URL(`${served.url}/healthz`);
  return Promise.all(
    Array.from(
      { length: requests },
      () =>
        new Promise<void>((resolve, reject) => {
          // A new connection each time: the cluster primary hands connections to workers in turn.
          http
            .get({ host: url.hostname, port: url.port, path: url.pathname, agent: false }, (res) => {
              res.resume();
              res.on('end', resolve);
            })
            .on('error', reject);
        }),
    ),
  ).then(() => new Set([...served.output().matchAll(/"pid":(\d+)[^\n]*"url":"\/healthz"/g)].map((m) => m[1]!)));
}

describe('two app processes on one PostgreSQL database', {
  skip: !DIALECTS.includes('postgres') && 'PostgreSQL is not among LEADBOOK_TEST_DIALECTS',
  timeout: 120_000,
}, () => {
  let fresh: FreshDatabase;
  let dataDir: string;
  let a: Served;
  let b: Served;
  before(async () => {
    fresh = await freshDatabase('postgres');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-mp-'));
    // Processes behind one balancer share the database and the app key, nothing else.
    const env = {
      DATABASE_URL: fresh.options.databaseUrl!,
      APP_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
    [a, b] = await Promise.all([
      serveCli({ ...env, DATA_DIR: path.join(dataDir, 'a') }),
      serveCli({ ...env, DATA_DIR: path.join(dataDir, 'b') }),
    ]);
    const registered = await call(a.url, 'POST', '/api/v1/auth/register', { json: { name: 'Admin', email, password } });
    assert.equal(registered.status, 201, registered.text);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await fresh?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('a session made by one process is honoured, and ended, by the other', async () => {
    const login = await call(a.url, 'POST', '/api/v1/auth/login', { json: { email, password } });
    assert.equal(login.status, 200, login.text);
    const cookie = sessionCookie(login.headers);
    assert.match(cookie, /=/, 'a session cookie was set');
    const me = await call(b.url, 'GET', '/api/v1/me', { cookie });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.email, email);
    // State-changing with the cookie on B (same-origin for B).
    const created = await call(b.url, 'POST', '/api/v1/contacts', {
      cookie,
      json: { name: 'Made on B' },
      headers: { origin: b.url },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(
      (await call(b.url, 'POST', '/api/v1/auth/logout', { cookie, headers: { origin: b.url } })).status,
      204,
    );
    assert.equal(
      (await call(a.url, 'GET', '/api/v1/me', { cookie })).status,
      401,
      'signed out on B means signed out on A',
    );
  });

  test('a token made by one process works on the other; its revocation, a role changed and a deactivation too', async () => {
    const issued = await call(a.url, 'POST', '/api/v1/auth/token', {
      json: { email, password, device_name: 'script' },
    });
    assert.equal(issued.status, 201, issued.text);
    const token = issued.body.token as string;
    // A has read the token (and keeps what it read while nothing changes), then B changes things.
    assert.equal((await call(a.url, 'GET', '/api/v1/contacts', { token })).status, 200);
    const listed = await call(b.url, 'GET', '/api/v1/contacts', { token });
    assert.equal(listed.status, 200, listed.text);
    const made = await call(b.url, 'POST', '/api/v1/users', {
      token,
      json: { name: 'Agent', email: 'agent@example.test', password, role: 'agent' },
    });
    assert.equal(made.status, 201, made.text);
    const agent = (
      await call(a.url, 'POST', '/api/v1/auth/token', {
        json: { email: 'agent@example.test', password, device_name: 'a' },
      })
    ).body.token as string;
    assert.equal((await call(a.url, 'GET', '/api/v1/me', { token: agent })).body.data.role, 'agent');
    const promoted = await call(b.url, 'PATCH', `/api/v1/users/${made.body.data.id}`, {
      token,
      json: { role: 'admin' },
    });
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(
      (await call(a.url, 'GET', '/api/v1/me', { token: agent })).body.data.role,
      'admin',
      'a role changed on B is the role on A',
    );
    const deactivated = await call(b.url, 'PATCH', `/api/v1/users/${made.body.data.id}`, {
      token,
      json: { active: false },
    });
    assert.equal(deactivated.status, 200, deactivated.text);
    assert.equal(
      (await call(a.url, 'GET', '/api/v1/me', { token: agent })).status,
      401,
      'deactivated on B means refused on A',
    );
    const tokens = await call(b.url, 'GET', '/api/v1/me/tokens', { token });
    const id = tokens.body.data.find((t: { name: string }) => t.name === 'script').id;
    assert.equal((await call(b.url, 'DELETE', `/api/v1/me/tokens/${id}`, { token })).status, 204);
    assert.equal(
      (await call(a.url, 'GET', '/api/v1/contacts', { token })).status,
      401,
      'revoked on B means revoked on A',
    );
  });

  test('an ETag read from one process guards a write on the other', async () => {
    const token = (await call(a.url, 'POST', '/api/v1/auth/token', { json: { email, password, device_name: 'etag' } }))
      .body.token as string;
    const created = await call(a.url, 'POST', '/api/v1/contacts', { token, json: { name: 'Versioned' } });
    const etag = created.headers.get('etag')!;
    const path = `/api/v1/contacts/${created.body.data.id}`;
    const first = await call(b.url, 'PATCH', path, { token, json: { city: 'Oslo' }, headers: { 'if-match': etag } });
    assert.equal(first.status, 200, first.text);
    const stale = await call(a.url, 'PATCH', path, { token, json: { city: 'Bergen' }, headers: { 'if-match': etag } });
    assert.equal(stale.status, 412, stale.text);
    assert.equal((await call(a.url, 'GET', path, { token })).body.data.city, 'Oslo');
  });

  test('the sign-in throttle counts failures on both processes together', async () => {
    const victim = 'nobody@example.test';
    const attempts = [];
    for (let i = 0; i < 5; i++)
      attempts.push(
        await call(i % 2 ? b.url : a.url, 'POST', '/api/v1/auth/login', {
          json: { email: victim, password: `wrong ${i}` },
        }),
      );
    assert.deepEqual(
      attempts.map((r) => r.status),
      [401, 401, 401, 401, 401],
      attempts.map((r) => r.text).join('\n'),
    );
    for (const server of [a, b]) {
      const refused = await call(server.url, 'POST', '/api/v1/auth/login', {
        json: { email: victim, password: 'wrong again' },
      });
      assert.equal(refused.status, 429, refused.text);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After is given');
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`leadbook serve --workers 2 (${dialect})`, { timeout: 120_000 }, () => {
    let fresh: FreshDatabase;
    let served: Served;
    before(async () => {
      fresh = await freshDatabase(dialect);
      const env: Record<string, string> = { DATA_DIR: fresh.options.dataDir, LOG_LEVEL: 'info' };
      if (fresh.options.databaseUrl) env.DATABASE_URL = fresh.options.databaseUrl;
      served = await serveCli(env, 30_000, ['--workers', '2']);
    });
    after(async () => {
      await served?.stop();
      await fresh?.drop();
    });

    test('both workers answer, share sessions, and stop together on SIGTERM', async () => {
      // serveCli returns once one worker answers; the other may still be starting.
      let pids = new Set<string>();
      for (let round = 0; round < 40 && pids.size < 2; round++) {
        pids = await pidsServing(served, 8);
        if (pids.size < 2) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(pids.size, 2, `requests were answered by ${pids.size} worker(s): ${[...pids].join(', ')}`);
      const registered = await call(served.url, 'POST', '/api/v1/auth/register', {
        json: { name: 'Admin', email, password },
      });
      assert.equal(registered.status, 201, registered.text);
      const cookie = sessionCookie(registered.headers);
      // Whichever worker each request reaches, the session holds.
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => call(served.url, 'GET', '/api/v1/me', { cookie })),
      );
      assert.deepEqual(
        answers.map((r) => r.status),
        Array(12).fill(200),
      );
      // Writes from both workers at once: each transaction waits its turn for
      // the write lock (SQLite: BEGIN IMMEDIATE), none is refused as locked.
      const token = (
        await call(served.url, 'POST', '/api/v1/auth/token', { json: { email, password, device_name: 'writer' } })
      ).body.token as string;
      const created = await call(served.url, 'POST', '/api/v1/contacts', { token, json: { name: 'Contended' } });
      const writes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2
            ? call(served.url, 'PATCH', `/api/v1/contacts/${created.body.data.id}`, {
                token,
                json: { city: `City ${i}` },
              })
            : call(served.url, 'POST', '/api/v1/contacts', { token, json: { name: `Writer ${i}` } }),
        ),
      );
      assert.deepEqual(
        writes.map((r) => r.status).filter((s) => s >= 300),
        [],
        writes
          .filter((r) => r.status >= 300)
          .map((r) => r.text)
          .join('\n'),
      );
      const exited = new Promise<number | null>((resolve) => served.child.once('exit', (code) => resolve(code)));
      served.child.kill('SIGTERM');
      assert.equal(await exited, 0, 'the primary exits 0 once its workers have stopped');
    });
  });
}
