// The change log, over HTTP on each database: every write through every door
// leaves its entry (actor, via, the changed fields as [before, after]) in the
// same transaction as the change; a refused write leaves none; a hidden field
// is named, never shown; the timeline pages newest first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { pageSignIn, submit } from './reliability/helpers/security.ts';

/** Every entry of the log, oldest first, as stored. */
async function entries(app: TestApp) {
  return (
    await sql<{
      action: string;
      via: string;
      resource: string | null;
      record_id: unknown;
      actor_id: unknown;
      changes: string | null;
      hidden_changed: string | null;
    }>`select action, via, resource, record_id, actor_id, changes, hidden_changed from change_log order by id`.execute(
      app.database.db,
    )
  ).rows;
}

const timelineOf = async (app: TestApp, path: string, cursor?: string): Promise<Reply> =>
  app.get(`/api/v1/${path}/activity${cursor ? `?cursor=${cursor}` : ''}`);

for (const dialect of DIALECTS) {
  describe(`change log (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('API: a create and an update are in the timeline, newest first, with the actor, the door and the values', async () => {
      const created = await app.post('/api/v1/inquiries', { name: 'Logged', status: null });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      const patched = await app.patch(`/api/v1/inquiries/${id}`, {
        status: true,
        ticket_id: 9007199254740993n,
        name: 'Logged',
      });
      assert.equal(patched.status, 200, patched.text);
      const page = await timelineOf(app, `inquiries/${id}`);
      assert.equal(page.status, 200, page.text);
      const [update, create] = page.body.data as Json[];
      assert.equal(page.body.data.length, 2);
      assert.deepEqual([create.action, create.via, String(create.actor.id)], ['created', 'api', String(app.admin.id)]);
      assert.equal(create.changes, undefined, 'a create keeps no values: they are the record');
      assert.deepEqual([update.action, update.via, update.actor.name], ['updated', 'api', 'Admin']);
      // Only what changed (the name was sent as it was), the 64-bit ticket exact.
      assert.deepEqual(Object.keys(update.changes).sort(), ['status', 'ticket_id']);
      assert.deepEqual(update.changes.status, [null, true]);
      assert.deepEqual(update.changes.ticket_id, [null, 9007199254740993n]);
      assert.ok(Date.parse(update.at) >= Date.parse(create.at));
    });

    test('a refused write leaves no entry; a delete leaves the last values; the timeline of a missing record is 404', async () => {
      const before = (await entries(app)).length;
      assert.equal((await app.post('/api/v1/contacts', { email: 'not an email' })).status, 422);
      assert.equal((await app.post('/api/v1/contacts', { name: 'x', created_by: 987654 })).status, 422);
      assert.equal((await entries(app)).length, before, 'nothing logged for refused writes');
      const created = await app.post('/api/v1/contacts', { name: 'Soon gone', city: 'Oslo' });
      assert.equal((await app.delete(`/api/v1/contacts/${created.body.data.id}`)).status, 204);
      const last = (await entries(app)).at(-1)!;
      assert.deepEqual(
        [last.action, last.resource, String(last.record_id)],
        ['deleted', 'contacts', String(created.body.data.id)],
      );
      const changes = JSON.parse(last.changes!);
      assert.deepEqual(
        [changes.name, changes.city],
        [
          ['Soon gone', null],
          ['Oslo', null],
        ],
      );
      assert.equal((await timelineOf(app, `contacts/${created.body.data.id}`)).status, 404);
    });

    test('a password change is named, never shown: not its hash, not the password', async () => {
      const password = 'a brand new passphrase 9';
      const user = await app.post('/api/v1/users', {
        name: 'Pat',
        email: 'pat@example.org',
        password: 'first passphrase 123',
        role: 'agent',
      });
      assert.equal(user.status, 201, user.text);
      assert.equal((await app.patch(`/api/v1/users/${user.body.data.id}`, { password })).status, 200);
      const page = await timelineOf(app, `users/${user.body.data.id}`);
      const update = (page.body.data as Json[]).find((e) => e.action === 'updated');
      assert.deepEqual(update.hidden_changed, ['password']);
      assert.equal(page.body.data[0].action, 'password_changed', "the account's events are in its timeline too");
      assert.equal(update.changes, undefined);
      const stored = JSON.stringify(await entries(app), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      assert.ok(
        !stored.includes(password) && !stored.includes('$argon2') && !stored.includes('$2'),
        'no secret in the log',
      );
    });

    test('the pages log as web, only the fields the form changed; a CSV import as import', async () => {
      const created = await app.post('/api/v1/contacts', { name: 'Formed', city: 'Lisbon', phone: '+351 1' });
      const id = created.body.data.id;
      const browser = await pageSignIn(app, app.admin);
      const form = await browser.get(`/contacts/${id}/edit`);
      const values = Object.fromEntries(
        [
          ...form.text.matchAll(
            /<input id="field-[a-z_]+" name="([a-z_]+)" type="(?:text|email|tel|number|url|date)" value="([^"]*)"/g,
          ),
        ].map((m) => [m[1]!, m[2]!]),
      );
      const saved = await submit(browser, `/contacts/${id}/edit`, `/contacts/${id}`, { ...values, city: 'Porto' });
      assert.ok(saved.status === 303 || saved.status === 302, `${saved.status} ${saved.text.slice(0, 200)}`);
      const [update] = (await timelineOf(app, `contacts/${id}`)).body.data as Json[];
      assert.deepEqual([update.action, update.via], ['updated', 'web']);
      assert.deepEqual(update.changes, { city: ['Lisbon', 'Porto'] });
      // The record page shows it in words, newest first.
      const page = await browser.get(`/contacts/${id}`);
      const activity = /<section class="card activity"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
      assert.match(activity, /<strong>Admin<\/strong> changed[\s\S]*?through the web app[\s\S]*?City: Lisbon → Porto/);
      assert.ok(activity.indexOf('changed') < activity.indexOf('created it'), 'newest first');

      const csv = 'name,city\nImported One,Oslo\nImported Two,Bergen\n';
      const file = new FormData();
      file.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
      const imported = await app.request('POST', '/api/v1/contacts/import', { body: file });
      assert.equal(imported.status, 200, imported.text);
      const logged = (await entries(app)).slice(-2);
      assert.deepEqual(
        logged.map((e) => [e.action, e.via, String(e.actor_id)]),
        [
          ['created', 'import', String(app.admin.id)],
          ['created', 'import', String(app.admin.id)],
        ],
      );
      const ids = (await app.get('/api/v1/contacts?filter[name][contains]=Imported&sort=id')).body.data.map((r: Json) =>
        String(r.id),
      );
      assert.deepEqual(
        logged.map((e) => String(e.record_id)),
        ids,
        'one entry per imported record, naming it',
      );
    });

    test('the timeline pages by cursor, newest first', async () => {
      const id = (await app.post('/api/v1/contacts', { name: 'Busy' })).body.data.id;
      for (let i = 1; i <= 30; i++)
        assert.equal((await app.patch(`/api/v1/contacts/${id}`, { city: `City ${i}` })).status, 200);
      const first = await timelineOf(app, `contacts/${id}`);
      assert.equal(first.body.data.length, 25);
      assert.deepEqual(first.body.data[0].changes.city, ['City 29', 'City 30']);
      const second = await timelineOf(app, `contacts/${id}`, first.body.meta.next_cursor);
      assert.equal(second.body.data.length, 6);
      assert.equal(second.body.data.at(-1).action, 'created');
      assert.equal(second.body.meta.next_cursor, null);
      assert.equal((await timelineOf(app, `contacts/${id}`, 'nonsense')).status, 422);
    });

    test('the audit log: admins only; narrowed by resource, action, actor and time; streamed as CSV without secrets', async () => {
      assert.equal((await app.request('GET', '/api/v1/activity', { token: null })).status, 401);
      const agent = { email: 'audit.agent@example.org', password: 'an agent passphrase 42' };
      assert.equal((await app.post('/api/v1/users', { name: 'Agent A', role: 'agent', ...agent })).status, 201);
      const minted = await app.request('POST', '/api/v1/auth/token', {
        json: { ...agent, device_name: 'audit' },
        token: null,
      });
      assert.equal(minted.status, 201, minted.text);
      const token = minted.body.token as string;
      assert.equal((await app.request('GET', '/api/v1/activity', { token })).status, 403, 'an agent may not read it');
      const made = await app.request('POST', '/api/v1/contacts', { json: { name: 'By the agent' }, token });
      assert.equal(made.status, 201, made.text);

      const updates = await app.get('/api/v1/activity?filter[resource]=contacts&filter[action]=updated');
      assert.equal(updates.status, 200, updates.text);
      assert.ok(updates.body.data.length > 0);
      assert.ok(updates.body.data.every((e: Json) => e.resource === 'contacts' && e.action === 'updated'));
      const ids = updates.body.data.map((e: Json) => BigInt(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => (a < b ? 1 : -1)),
        'newest first',
      );
      const byAgent = await app.get(
        `/api/v1/activity?filter[actor]=${made.body.data.created_by}&filter[resource]=contacts`,
      );
      assert.deepEqual(
        byAgent.body.data.map((e: Json) => [e.action, e.resource, String(e.record_id), e.actor.name]),
        [['created', 'contacts', String(made.body.data.id), 'Agent A']],
      );
      assert.equal((await app.get('/api/v1/activity?filter[at][gte]=2999-01-01')).body.data.length, 0);
      const today = new Date().toISOString().slice(0, 10);
      assert.ok(
        (await app.get(`/api/v1/activity?filter[at][lte]=${today}`)).body.data.length > 0,
        'a bare date ends at its last millisecond',
      );
      for (const query of ['filter[actor]=9999999999999999999', 'cursor=9999999999999999999', 'filter[actor]=x']) {
        assert.equal((await app.get(`/api/v1/activity?${query}`)).status, 422, query);
      }
      const bad = await app.get('/api/v1/activity?filter[at][gte]=yesterday');
      assert.equal(bad.status, 422);
      assert.ok(bad.body.errors['filter[at][gte]'], bad.text);

      const csv = await app.get('/api/v1/activity/export?format=csv&filter[resource]=users');
      assert.equal(csv.status, 200, csv.text);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = csv.text.trim().split('\r\n');
      assert.equal(lines[0], 'id,at,actor_id,actor,via,action,resource,record_id,changes,hidden_changed');
      assert.ok(
        lines.some((l) => l.endsWith(',password')),
        'the password change is named',
      );
      assert.ok(!csv.text.includes(agent.password) && !csv.text.includes('$argon2'), 'no secret in the export');
      assert.equal((await app.request('GET', '/api/v1/activity/export', { token })).status, 403);
    });

    test('security events go to the same log: sign-ins and failures by door, a lockout, tokens, password and role changes', async () => {
      const who = { email: 'events@example.org', password: 'an events passphrase 7' };
      const user = await app.post('/api/v1/users', { name: 'Eve Events', role: 'agent', ...who });
      assert.equal(user.status, 201, user.text);
      const id = String(user.body.data.id);
      const events = async (action: string) =>
        (
          (await app.get(`/api/v1/activity?filter[resource]=users&filter[action]=${action}`)).body.data as Json[]
        ).filter((e) => String(e.record_id) === id);
      const login = (password: string) =>
        app.request('POST', '/api/v1/auth/login', { json: { email: who.email, password }, token: null });
      assert.equal((await login('wrong passphrase here')).status, 401);
      assert.equal((await login(who.password)).status, 200);
      await pageSignIn(app, who);
      const failed = await events('sign_in_failed');
      assert.deepEqual(
        failed.map((e) => [e.via, e.actor]),
        [['api', null]],
      );
      const signedIn = await events('sign_in');
      assert.deepEqual(
        signedIn.map((e) => [e.via, e.actor.name]),
        [
          ['web', 'Eve Events'],
          ['api', 'Eve Events'],
        ],
      );

      const minted = await app.request('POST', '/api/v1/auth/token', {
        json: { ...who, device_name: 'cli' },
        token: null,
      });
      assert.equal(minted.status, 201, minted.text);
      assert.equal((await events('token_created')).length, 1);
      assert.equal((await app.patch(`/api/v1/users/${id}`, { role: 'admin' })).status, 200);
      assert.equal((await app.patch(`/api/v1/users/${id}`, { password: 'another passphrase 88' })).status, 200);
      assert.deepEqual(
        (await events('role_changed')).map((e) => [e.via, e.actor.name]),
        [['api', 'Admin']],
      );
      assert.deepEqual(
        (await events('password_changed')).map((e) => [e.via, e.actor.name]),
        [['api', 'Admin']],
      );
    });

    test('the Activity page (admins): entries newest first, narrowed by its filters, with the CSV of the same view', async () => {
      const browser = await pageSignIn(app, app.admin);
      const page = await browser.get('/activity?filter[resource]=contacts&filter[action]=deleted');
      assert.equal(page.status, 200, page.text.slice(0, 300));
      assert.match(page.text, /<a href="\/activity" aria-current="page">Activity<\/a>/, 'in the navigation');
      const rows = [...page.text.matchAll(/<tr><td><time[\s\S]*?<\/tr>/g)].map((m) => m[0]);
      assert.ok(rows.length > 0 && rows.every((r) => r.includes('deleted')), 'only deletions of contacts');
      assert.match(
        page.text,
        /href="\/api\/v1\/activity\/export\?filter%5Bresource%5D=contacts&amp;filter%5Baction%5D=deleted&amp;format=csv"/,
      );
      const bad = await browser.get('/activity?filter[at][gte]=soon');
      assert.equal(bad.status, 200);
      assert.match(bad.text, /class="flash flash-error" role="alert"/);
      const who = { email: 'page.agent@example.org', password: 'a page agent passphrase 3' };
      assert.equal((await app.post('/api/v1/users', { name: 'Page Agent', role: 'agent', ...who })).status, 201);
      const agent = await pageSignIn(app, who);
      assert.equal((await agent.get('/activity')).status, 403);
      assert.doesNotMatch((await agent.get('/')).text, /href="\/activity"/, "not in an agent's navigation");
    });
  });
}
