// The change log, over HTTP on each database: every write through every door
// leaves its entry (actor, via, the changed fields as [before, after]) in the
// same transaction as the change; a refused write leaves none; a hidden field
// is named, never shown; the timeline pages newest first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';
import {
  Ledger,
  mailsOf,
  nextMail,
  oathtool,
  pageSignIn,
  REMEMBER,
  submit,
  waitForRoom,
} from './reliability/helpers/security.ts';

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

/** Every page of a JSON list that pages by `meta.next_cursor`. */
async function allPages(app: TestApp, path: string): Promise<Reply[]> {
  const pages: Reply[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const reply = await app.get(cursor ? `${path}${path.includes('?') ? '&' : '?'}cursor=${cursor}` : path);
    assert.equal(reply.status, 200, `${path}: ${reply.text.slice(0, 300)}`);
    pages.push(reply);
    cursor = reply.body.meta.next_cursor ?? null;
  }
  return pages;
}

/** JSON text of stored rows (64-bit ids as digits, dates as ISO text). */
const rowsText = (rows: unknown) => JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

/** The hidden columns of a user as stored (hashes, sealed secrets, the remember token). */
async function storedSecrets(app: TestApp, id: unknown) {
  const row = await app.database.db
    .selectFrom('users')
    .select(['password', 'remember_token', 'two_factor_secret', 'two_factor_recovery_codes'])
    .where('id', '=', BigInt(String(id)))
    .executeTakeFirstOrThrow();
  return row;
}

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

    test('no secret reaches the activity, its exports, the trash, notes, record exports, the stored log or the app log', async () => {
      // Its own app, logging everything, with mail written to files: besides the places below, every response and
      // log line of it is scanned too.
      const own = await startApp(dialect, { env: { LOG_LEVEL: 'trace' } });
      try {
        const ledger = new Ledger(own);
        ledger.used(own.admin.password, 'admin password');
        ledger.items.push({
          value: own.admin.token,
          what: 'admin token',
          issuedBy: own.responses.findIndex((r) => r.includes(own.admin.token)),
        });
        const hex = () => randomBytes(6).toString('hex');
        const anon = (method: string, path: string, json: unknown) => own.request(method, path, { json, token: null });
        const mint = async (email: string, password: string) => {
          const minted = await anon('POST', '/api/v1/auth/token', { email, password, device_name: 'scan' });
          assert.equal(minted.status, 201, minted.text);
          return ledger.issued(minted.body.token, 'bearer token');
        };

        // A user created with a password; a token from signing in, and one made at /me/tokens (shown once).
        const email = 'sam.secret@example.org';
        let password = ledger.used(`first pass ${hex()}`, 'password given at creation');
        const created = await own.post('/api/v1/users', { name: 'Sam Secret', email, password, role: 'agent' });
        assert.equal(created.status, 201, created.text);
        const sam = created.body.data.id;
        let token = await mint(email, password);
        const personal = await own.request('POST', '/api/v1/me/tokens', { json: { name: 'ci', password }, token });
        assert.equal(personal.status, 201, personal.text);
        ledger.issued(personal.body.token, 'personal access token');

        // The password changed by an admin (PATCH /users/:id), by its owner (PUT /me/password), by a mailed reset.
        password = ledger.used(`patched pass ${hex()}`, 'password set by an admin');
        assert.equal((await own.patch(`/api/v1/users/${sam}`, { password })).status, 200);
        token = await mint(email, password);
        const chosen = ledger.used(`own pass ${hex()}`, 'password set by its owner');
        const put = await own.request('PUT', '/api/v1/me/password', {
          json: { current_password: password, password: chosen },
          token,
        });
        assert.equal(put.status, 204, put.text);
        password = chosen;
        const mails = mailsOf(own).length;
        assert.equal((await anon('POST', '/api/v1/auth/forgot-password', { email })).status, 202);
        const resetMail = await nextMail(own, mails, (m) => m.link?.pathname === '/reset-password');
        const resetToken = ledger.used(resetMail.link!.searchParams.get('token')!, 'reset token');
        password = ledger.used(`reset pass ${hex()}`, 'password set through a reset');
        const reset = await anon('POST', '/api/v1/auth/reset-password', { token: resetToken, email, password });
        assert.equal(reset.status, 200, reset.text);

        // Remembered by a browser (a remember token is stored), then two-factor on and its codes renewed.
        const browser = await pageSignIn(own, { email, password }, true);
        assert.ok(browser.cookies.get(REMEMBER), 'remember me set its cookie');
        token = await mint(email, password);
        const setup = await own.request('POST', '/api/v1/me/two-factor', { json: { password }, token });
        assert.equal(setup.status, 200, setup.text);
        const totp = ledger.issued(setup.body.secret, 'TOTP secret');
        await waitForRoom(1);
        const confirmed = await own.request('POST', '/api/v1/me/two-factor/confirm', {
          json: { code: oathtool(totp, Date.now()) },
          token,
        });
        assert.equal(confirmed.status, 200, confirmed.text);
        for (const code of confirmed.body.recovery_codes) ledger.issued(code, 'recovery code');
        const renewed = await own.request('POST', '/api/v1/me/two-factor/recovery-codes', {
          json: { password },
          token,
        });
        assert.equal(renewed.status, 200, renewed.text);
        for (const code of renewed.body.recovery_codes) ledger.issued(code, 'recovery code');
        // What the database keeps of them: a hash, the remember token, the sealed secret, the codes' hashes.
        const stored = await storedSecrets(own, sam);
        assert.ok(stored.remember_token && stored.two_factor_secret && stored.two_factor_recovery_codes, 'all kept');
        ledger.used(stored.password, 'password hash');
        ledger.used(stored.remember_token, 'remember token');
        ledger.used(stored.two_factor_secret, 'sealed TOTP secret');
        for (const hash of JSON.parse(stored.two_factor_recovery_codes) as string[])
          ledger.used(hash, 'recovery code hash');

        // An invitation, accepted through its mailed link.
        const ivy = 'ivy.invited@example.org';
        const beforeInvitation = mailsOf(own).length;
        const invited = await own.post('/api/v1/users', { name: 'Ivy Invited', email: ivy, role: 'agent' });
        assert.equal(invited.status, 201, invited.text);
        const invitation = await nextMail(own, beforeInvitation, (m) => m.link?.pathname === '/invitation');
        const invitationToken = ledger.used(invitation.link!.searchParams.get('token')!, 'invitation token');
        const ivyPassword = ledger.used(`invited pass ${hex()}`, 'password chosen through an invitation');
        const accepted = await anon('POST', '/api/v1/auth/accept-invitation', {
          token: invitationToken,
          email: ivy,
          password: ivyPassword,
        });
        assert.equal(accepted.status, 200, accepted.text);
        ledger.used((await storedSecrets(own, invited.body.data.id)).password, "the invited user's password hash");

        // A user with a password, a token and a remembered browser, deleted: the log keeps their last values.
        const dee = {
          email: 'dee.deleted@example.org',
          password: ledger.used(`gone pass ${hex()}`, "a deleted user's password"),
        };
        const doomed = await own.post('/api/v1/users', { name: 'Dee Deleted', role: 'agent', ...dee });
        assert.equal(doomed.status, 201, doomed.text);
        await mint(dee.email, dee.password);
        await pageSignIn(own, dee, true);
        const deeStored = await storedSecrets(own, doomed.body.data.id);
        assert.ok(deeStored.remember_token);
        ledger.used(deeStored.password, "a deleted user's password hash");
        ledger.used(deeStored.remember_token, "a deleted user's remember token");
        assert.equal((await own.delete(`/api/v1/users/${doomed.body.data.id}`)).status, 204);

        // Records with notes, one of them in the trash.
        const kept = (await own.post('/api/v1/contacts', { name: 'Kept Contact' })).body.data;
        assert.equal((await own.post(`/api/v1/contacts/${kept.id}/notes`, { body: 'Called back, fine.' })).status, 201);
        const binned = (await own.post('/api/v1/contacts', { name: 'Binned Contact' })).body.data;
        assert.equal((await own.post(`/api/v1/contacts/${binned.id}/notes`, { body: 'Trashed with it.' })).status, 201);
        assert.equal((await own.delete(`/api/v1/contacts/${binned.id}`)).status, 204);
        const inquiry = await own.post('/api/v1/inquiries', { name: 'Asked', contact_id: kept.id, assigned_to: sam });
        assert.equal(inquiry.status, 201, inquiry.text);

        // A changed password is in its user's timeline by name only: the admin's change and the owner's (a reset
        // writes no record change, only its event).
        const samEntries = (await allPages(own, `/api/v1/users/${sam}/activity`)).flatMap((p) => p.body.data as Json[]);
        const updates = samEntries.filter((e) => e.action === 'updated');
        assert.equal(updates.length, 2, JSON.stringify(updates));
        for (const update of updates) {
          assert.deepEqual(update.hidden_changed, ['password']);
          assert.equal(update.changes, undefined, 'no value, not even null or a hash');
        }
        assert.equal(updates.at(-1).actor?.name, 'Admin', 'the older one is the admin’s');
        const events = samEntries.map((e) => e.action);
        assert.equal(events.filter((a) => a === 'password_changed').length, 3, events.join());
        for (const action of ['token_created', 'two_factor_enabled', 'sign_in'])
          assert.ok(events.includes(action), `${action} in ${events.join()}`);

        // Every place the log, the records and the app's own output show.
        const places = new Map<string, string>();
        const audit = await allPages(own, '/api/v1/activity');
        const keep = (label: string, pages: Reply[]) => {
          for (const [i, p] of pages.entries()) places.set(`${label}, page ${i + 1}`, p.text);
        };
        keep('GET /api/v1/activity', audit);
        const auditEntries = audit.flatMap((p) => p.body.data as Json[]);
        assert.ok(auditEntries.length > 30, `entries: ${auditEntries.length}`);
        for (const entry of auditEntries) {
          if (entry.hidden_changed) assert.deepEqual(entry.hidden_changed, ['password'], JSON.stringify(entry));
          for (const hidden of ['password', 'remember_token', 'two_factor_secret', 'two_factor_recovery_codes'])
            assert.ok(!(hidden in (entry.changes ?? {})), `${hidden} in ${JSON.stringify(entry)}`);
        }
        const csv = await own.get('/api/v1/activity/export?format=csv');
        assert.equal(csv.status, 200, csv.text);
        places.set('GET /api/v1/activity/export', csv.text);
        const csvUpdates = csv.text.split('\r\n').filter((l) => l.includes(`,updated,users,${sam},`));
        assert.equal(csvUpdates.length, 2, csv.text);
        for (const line of csvUpdates) assert.match(line, /,updated,users,\d+,,password$/, 'named, no values');
        for (const id of [sam, invited.body.data.id])
          keep(`GET /api/v1/users/${id}/activity`, await allPages(own, `/api/v1/users/${id}/activity`));
        for (const path of [`/api/v1/contacts/${kept.id}/activity`, '/api/v1/trash', '/api/v1/notes?per_page=100'])
          keep(`GET ${path}`, await allPages(own, path));
        assert.match(places.get('GET /api/v1/trash, page 1')!, /Binned Contact/);
        assert.match(places.get('GET /api/v1/notes?per_page=100, page 1')!, /Called back/);
        for (const resource of ['contacts', 'inquiries', 'users', 'notes']) {
          const exported = await own.get(`/api/v1/${resource}/export?format=csv`);
          assert.equal(exported.status, 200, `${resource}: ${exported.text}`);
          places.set(`GET /api/v1/${resource}/export`, exported.text);
        }
        assert.match(places.get('GET /api/v1/users/export')!, /sam\.secret@example\.org/);
        const admin = await pageSignIn(own, own.admin);
        let next: string | undefined = '/activity';
        for (let page = 1; next; page++) {
          const shown = await admin.get(next);
          assert.equal(shown.status, 200, shown.text.slice(0, 300));
          places.set(`the page ${next}`, shown.text);
          next = /<a href="([^"]+)">Older entries<\/a>/.exec(shown.text)?.[1]?.replaceAll('&amp;', '&');
          assert.ok(page < 20, 'the pages end');
        }
        assert.match(places.get('the page /activity')!, /password changed/, 'the page names the change');
        for (const path of [`/users/${sam}`, '/users', '/trash', `/contacts/${kept.id}`, '/users/export.csv']) {
          const shown = await admin.get(path);
          assert.equal(shown.status, 200, `${path}: ${shown.text.slice(0, 300)}`);
          places.set(`the page ${path}`, shown.text);
        }
        const logged = await sql`select * from change_log order by id`.execute(own.database.db);
        places.set('the change_log rows', rowsText(logged.rows));
        const gone = logged.rows.filter(
          (r: Json) =>
            r.action === 'deleted' && r.resource === 'users' && String(r.record_id) === String(doomed.body.data.id),
        ) as Json[];
        assert.equal(gone.length, 1, 'the deleted user is logged');
        const last = JSON.parse(gone[0].changes);
        assert.deepEqual(last.name, ['Dee Deleted', null], 'with their last visible values');
        for (const hidden of ['password', 'remember_token', 'two_factor_secret', 'two_factor_recovery_codes'])
          assert.ok(!(hidden in last), `not ${hidden}`);
        await new Promise((r) => setTimeout(r, 200)); // the last log lines (mails go out after the answer)
        assert.ok(own.logs.length > 50, `log lines: ${own.logs.length}`);
        places.set('the app log', own.logs.join('\n'));

        assert.ok(ledger.items.length >= 40, `secrets tracked: ${ledger.items.length}`);
        const leaks: string[] = [];
        for (const [place, text] of places) {
          for (const secret of ledger.items)
            if (text.includes(secret.value)) leaks.push(`the ${secret.what} in ${place}`);
          if (/\$argon2|\$2[aby]\$/.test(text)) leaks.push(`a password hash in ${place}`);
        }
        assert.deepEqual(leaks, []);
        assert.deepEqual(ledger.problems(), []);
      } finally {
        await own.close();
      }
    });

    test('a password changed by its owner is logged as theirs, through the door they used', async () => {
      const owner = await teammate(app, 'agent', 'Olive Owner');
      const put = await app.request('PUT', '/api/v1/me/password', {
        json: { current_password: owner.password, password: 'olive has a new passphrase 5' },
        token: owner.token,
      });
      assert.equal(put.status, 204, put.text);
      const [event, update] = (await timelineOf(app, `users/${owner.id}`)).body.data as Json[];
      assert.deepEqual([update.action, update.hidden_changed, update.changes], ['updated', ['password'], undefined]);
      assert.equal(event.action, 'password_changed');
      for (const entry of [event, update]) {
        assert.deepEqual(
          [String(entry.actor?.id), entry.actor?.name, entry.via],
          [String(owner.id), 'Olive Owner', 'api'],
          JSON.stringify(entry),
        );
      }
    });
  });
}
