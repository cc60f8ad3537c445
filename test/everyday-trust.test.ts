// The everyday paths that broke trust (issue 10), over HTTP on each database:
// blank and invalid records kept out through the API, the pages and CSV
// import while stored values stay readable and editable; the invitation of a
// new team member end to end with a real SMTP peer; messages that say what
// happened (a code already used, a number too large); a signed-in 404 with
// its navigation; a set-up that asks only for what it needs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { encrypt, loadAppKey } from '../src/accounts/secrets.ts';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { linkIn, type MailCatcher, startMailCatcher } from './helpers/smtp.ts';
import { csrfOf, form, oathtool, submit, waitForRoom } from './reliability/helpers/security.ts';

const hex = () => randomBytes(4).toString('hex');

function assertProblem(reply: Reply, status: number, fields: string[]) {
  assert.equal(reply.status, status, reply.text.slice(0, 400));
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
  for (const field of fields)
    assert.ok(reply.body.errors?.[field]?.length, `errors names ${field}: ${reply.text.slice(0, 400)}`);
}

function csvUpload(text: string): FormData {
  const body = new FormData();
  body.append('file', new Blob([text], { type: 'text/csv' }), 'rows.csv');
  return body;
}

for (const dialect of DIALECTS) {
  describe(`everyday trust (${dialect})`, () => {
    let app: TestApp;
    let smtp: MailCatcher;
    let browser: Client;

    before(async () => {
      smtp = await startMailCatcher();
      app = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
      browser = app.client();
      const signedIn = await submit(browser, '/login', '/login', {
        email: app.admin.email,
        password: app.admin.password,
      });
      assert.equal(signedIn.status, 303, signedIn.text);
    });
    after(async () => {
      await app?.close();
      await smtp?.close();
    });

    const total = async (resource: string) => Number((await app.get(`/api/v1/${resource}?per_page=1`)).body.meta.total);

    test('API: an invalid email and a record with no name, email or phone are refused, naming the fields', async () => {
      for (const resource of ['contacts', 'inquiries']) {
        const before = await total(resource);
        assertProblem(await app.post(`/api/v1/${resource}`, { name: 'Ann', email: 'not an email at all' }), 422, [
          'email',
        ]);
        const blank = await app.post(`/api/v1/${resource}`, { name: '', email: null, city: 'Porto' });
        assertProblem(blank, 422, ['name', 'email', 'phone']);
        assert.equal(await total(resource), before, `${resource}: nothing was written`);

        const created = await app.post(`/api/v1/${resource}`, { phone: '+351 912 345 678' });
        assert.equal(created.status, 201, 'a phone alone is enough');
        const path = `/api/v1/${resource}/${created.body.data.id}`;
        assertProblem(await app.patch(path, { phone: null }), 422, ['name', 'email', 'phone']);
        assert.equal((await app.get(path)).body.data.phone, '+351 912 345 678', 'the refused change wrote nothing');
        assert.equal(
          (await app.patch(path, { phone: null, name: 'Now named' })).status,
          200,
          'another of the three may take its place',
        );
      }
    });

    test('pages: an empty New contact form and an invalid email come back with messages, and create nothing', async () => {
      const before = await total('contacts');
      const empty = await submit(browser, '/contacts/new', '/contacts', { name: '', email: '', phone: '', detail: '' });
      assert.equal(empty.status, 422);
      for (const field of ['name', 'email', 'phone']) {
        assert.match(
          empty.text,
          new RegExp(`id="field-${field}-error">is needed: give at least one of name, email or phone<`),
        );
      }
      const invalid = await submit(browser, '/contacts/new', '/contacts', {
        name: 'Ann',
        email: 'not an email at all',
      });
      assert.equal(invalid.status, 422);
      assert.match(invalid.text, /id="field-email-error">must be a valid email address</);
      assert.match(invalid.text, /value="not an email at all"/, 'what was typed is kept');
      assert.equal(await total('contacts'), before);
    });

    test('CSV import: a row with an invalid email or with no name, email or phone is a row error; good rows are kept', async () => {
      const before = await total('contacts');
      const csv =
        'name,email,phone,city\nGood Row,good@example.com,,Lisbon\nBad Mail,not an email at all,,Porto\n,,,Faro\n';
      const reply = await app.request('POST', '/api/v1/contacts/import', { body: csvUpload(csv) });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.created, 1);
      const failed = reply.body.failed as { row: number; errors: Record<string, string[]> }[];
      assert.deepEqual(
        failed.map((f) => f.row),
        [2, 3],
      );
      assert.deepEqual(Object.keys(failed[0]!.errors), ['email']);
      assert.deepEqual(Object.keys(failed[1]!.errors).sort(), ['email', 'name', 'phone']);
      assert.equal(await total('contacts'), before + 1);
    });

    test('a bad email stored before the rule (by the original service) stays readable and the record editable in its other fields', async () => {
      const { db } = app.database;
      const now = new Date().toISOString();
      const inserted = await db
        .insertInto('contacts')
        .values({ name: 'Legacy', email: 'not an email at all', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const path = `/api/v1/contacts/${String(inserted.id)}`;
      const read = await app.get(path);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.email, 'not an email at all', 'served as stored');

      assert.equal((await app.patch(path, { city: 'Braga' })).status, 200, 'another field alone');
      const { id, created_at, updated_at, ...whole } = (await app.get(path)).body.data;
      const resent = await app.patch(path, { ...whole, city: 'Évora' });
      assert.equal(resent.status, 200, `the record sent back whole, email unchanged: ${resent.text.slice(0, 300)}`);
      assert.equal(resent.body.data.city, 'Évora');

      const page = await browser.get(`/contacts/${String(inserted.id)}/edit`);
      const etag = (/name="_etag" value="([^"]+)"/.exec(page.text)?.[1] ?? '').replaceAll('&quot;', '"');
      const saved = await browser.request(
        'POST',
        `/contacts/${String(inserted.id)}`,
        form({ _csrf: csrfOf(page.text), _etag: etag, name: 'Legacy', email: 'not an email at all', city: 'Faro' }),
      );
      assert.equal(saved.status, 303, `the edit page saves the other fields: ${saved.text.slice(0, 300)}`);
      assert.equal((await app.get(path)).body.data.city, 'Faro');

      assertProblem(await app.patch(path, { email: 'still not an email' }), 422, ['email']);
      assert.equal((await app.get(path)).body.data.email, 'not an email at all', 'a new invalid value is refused');
    });

    test('an invitation: created without a password, mailed, the password chosen through the link, then signing in', async () => {
      const email = `invitee-${hex()}@example.com`;
      const created = await app.post('/api/v1/users', { name: 'Invitee', email });
      assert.equal(created.status, 201, created.text);
      const [mail] = await smtp.waitFor((m) => m.to.includes(email));
      assert.match(mail!.subject, /invited/i);
      assert.match(mail!.text, /within 7 days/);
      const link = linkIn(mail!);
      assert.equal(link.pathname, '/invitation');

      const stranger = app.client();
      assert.equal(
        (await stranger.post('/api/v1/auth/login', { email, password: '' })).status,
        422,
        'no password to sign in with',
      );
      assert.equal(
        (await stranger.post('/api/v1/auth/login', { email, password: 'any guess at all' })).status,
        401,
        'the account cannot sign in yet',
      );

      const password = `invited pass ${hex()}`;
      const short = await submit(stranger, link.pathname + link.search, '/invitation', {
        token: link.searchParams.get('token')!,
        email,
        password: 'short',
      });
      assert.equal(short.status, 422);
      const accepted = await submit(stranger, link.pathname + link.search, '/invitation', {
        token: link.searchParams.get('token')!,
        email,
        password,
      });
      assert.equal(accepted.status, 303, accepted.text.slice(0, 300));
      assert.equal(accepted.headers.get('location'), '/login');

      const signedIn = await stranger.post('/api/v1/auth/login', { email, password });
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.ok(
        signedIn.body.data.email_verified_at,
        'choosing the password through the mailed link confirmed the address',
      );

      const again = await submit(app.client(), link.pathname + link.search, '/invitation', {
        token: link.searchParams.get('token')!,
        email,
        password: `another pass ${hex()}`,
      });
      assert.equal(again.status, 422, 'the link works once');
      assert.match(again.text, /invalid, was used already, or is older than 7 days/);
    });

    test('an invitation older than 7 days is refused, through the API too; a fresh one works', async () => {
      const email = `late-${hex()}@example.com`;
      const created = await app.post('/api/v1/users', { name: 'Late', email });
      const [mail] = await smtp.waitFor((m) => m.to.includes(email));
      const token = linkIn(mail!).searchParams.get('token')!;
      const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
      await app.database.db
        .updateTable('invitations')
        .set({ created_at: eightDaysAgo })
        .where('user_id', '=', Number(created.body.data.id))
        .execute();
      const password = `late pass ${hex()}`;
      const expired = await app.request('POST', '/api/v1/auth/accept-invitation', {
        json: { token, email, password },
        token: null,
      });
      assertProblem(expired, 422, ['token']);
      assert.equal((await app.client().post('/api/v1/auth/login', { email, password })).status, 401);

      // Six days old still works.
      await app.database.db
        .updateTable('invitations')
        .set({ created_at: new Date(Date.now() - 6 * 86_400_000).toISOString() })
        .where('user_id', '=', Number(created.body.data.id))
        .execute();
      const accepted = await app.request('POST', '/api/v1/auth/accept-invitation', {
        json: { token, email, password },
        token: null,
      });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal((await app.client().post('/api/v1/auth/login', { email, password })).status, 200);
    });

    test('the New user page invites by default and says so; a user given a password gets the address check that the banner promises', async () => {
      const page = await browser.get('/users/new');
      assert.match(
        page.text,
        /<label for="field-password">Password<\/label><input id="field-password" name="password" type="password" value(="")? autocomplete="new-password" aria-describedby="field-password-hint"\/>/,
        'not required, described by its hint',
      );
      assert.match(page.text, /Leave empty to email an invitation/);
      const email = `page-invite-${hex()}@example.com`;
      const created = await browser.request(
        'POST',
        '/users',
        form({ _csrf: csrfOf(page.text), name: 'From the page', email, password: '', role: 'agent' }),
      );
      assert.equal(created.status, 303, created.text.slice(0, 300));
      const shown = await browser.get(created.headers.get('location')!);
      assert.match(
        shown.text,
        new RegExp(`We emailed an invitation to ${email.replace(/[.+]/g, '\\$&')}; the link works for 7 days\\.`),
      );
      await smtp.waitFor((m) => m.to.includes(email) && /invited/i.test(m.subject));

      const withPassword = `given-${hex()}@example.com`;
      assert.equal(
        (await app.post('/api/v1/users', { name: 'Given', email: withPassword, password: `given pass ${hex()}` }))
          .status,
        201,
      );
      const [check] = await smtp.waitFor((m) => m.to.includes(withPassword));
      assert.match(check!.subject, /Confirm your Leadbook email address/);
    });

    test('a two-factor code used to confirm the app is refused at sign-in as "already used", not "not valid"', async () => {
      const email = `totp-${hex()}@example.com`;
      const password = `totp pass ${hex()}`;
      await app.post('/api/v1/users', { name: 'Totp', email, password });
      const token = (
        await app.request('POST', '/api/v1/auth/token', { json: { email, password, device_name: 'x' }, token: null })
      ).body.token;
      const setup = await app.request('POST', '/api/v1/me/two-factor', { json: { password }, token });
      await waitForRoom(5);
      const code = oathtool(setup.body.secret, Date.now());
      assert.equal((await app.request('POST', '/api/v1/me/two-factor/confirm', { json: { code }, token })).status, 200);

      const client = app.client();
      assert.deepEqual((await client.post('/api/v1/auth/login', { email, password })).body, { two_factor: true });
      const reused = await client.post('/api/v1/auth/two-factor-challenge', { code });
      assertProblem(reused, 422, ['code']);
      assert.equal(
        reused.body.errors.code[0],
        'was already used; wait for the next code from your app (a new one appears every 30 seconds)',
      );
      const wrong = await client.post('/api/v1/auth/two-factor-challenge', {
        code: code === '000000' ? '111111' : '000000',
      });
      assert.equal(wrong.body.errors.code[0], 'is not valid');
    });

    test('phone fields are type="tel" on every form that has one (the phone keypad on phones), as GET /schema says', async () => {
      const schema = (await app.get('/api/v1/schema')).body.data as {
        name: string;
        fields: { name: string; input: string }[];
      }[];
      // The seed's three resources each have a phone (a note has none).
      for (const resource of schema.filter((r) => ['contacts', 'inquiries', 'users'].includes(r.name))) {
        const phones = resource.fields.filter((f) => /phone/.test(f.name));
        assert.ok(phones.length > 0, resource.name);
        for (const f of phones) assert.equal(f.input, 'tel', `${resource.name}.${f.name}`);
      }
      for (const page of ['/contacts/new', '/inquiries/new', '/users/new', '/profile']) {
        const html = (await browser.get(page)).text;
        // Every control named for a phone, wherever it sits in the form.
        const inputs = [...html.matchAll(/<(input|textarea|select)\b[^>]*\bname="[^"]*phone[^"]*"[^>]*>/g)].map(
          (m) => m[0],
        );
        assert.ok(inputs.length > 0, `${page} has a phone field`);
        for (const input of inputs) {
          assert.match(input, /^<input\b/, `${page}: ${input}`);
          assert.match(input, /\btype="tel"/, `${page}: ${input}`);
          assert.match(input, /\bautocomplete="tel"/, `${page}: ${input}`);
        }
      }
    });

    test('the list answers htmx with a fragment that varies on HX-Request and is never stored; a page otherwise', async () => {
      const fragment = await browser.request('GET', '/contacts?search=zz', {
        headers: { 'hx-request': 'true', 'hx-target': 'results' },
      });
      assert.equal(fragment.status, 200);
      assert.doesNotMatch(fragment.text, /<html/);
      assert.match(fragment.headers.get('vary') ?? '', /HX-Request/i);
      assert.equal(fragment.headers.get('cache-control'), 'no-store');
      const page = await browser.request('GET', '/contacts?search=zz');
      assert.match(page.text, /^<!doctype html>/);
      assert.match(
        page.headers.get('vary') ?? '',
        /HX-Request/i,
        'the page says it varies too, so a cache never serves one for the other',
      );
    });

    test('after the session ends: htmx is told to go to sign-in (never a blank 200); a typed form is kept, sealed, and comes back after signing in', async () => {
      const email = `expiring-${hex()}@example.com`;
      const password = `expiring pass ${hex()}`;
      const user = (await app.post('/api/v1/users', { name: 'Expiring', email, password })).body.data;
      const client = app.client();
      assert.equal((await submit(client, '/login', '/login', { email, password })).status, 303);
      const newPage = await client.get('/contacts/new');
      const endSession = () => app.database.db.deleteFrom('sessions').where('user_id', '=', Number(user.id)).execute();
      await endSession();

      const search = await client.request('GET', '/contacts?search=solar', {
        headers: { 'hx-request': 'true', 'hx-target': 'results', 'hx-current-url': `${app.url}/contacts?search=solar` },
      });
      assert.equal(search.status, 401);
      assert.equal(search.headers.get('hx-redirect'), `/login?next=${encodeURIComponent('/contacts?search=solar')}`);
      assert.match(
        (await client.get(search.headers.get('hx-redirect')!)).text,
        /Your session had ended, so this page could not be updated\. Sign in again/,
        'the sign-in page says why',
      );
      const foreign = await client.request('GET', '/contacts', {
        headers: { 'hx-request': 'true', 'hx-target': 'results', 'hx-current-url': 'https://elsewhere.example/steal' },
      });
      assert.equal(
        foreign.headers.get('hx-redirect'),
        `/login?next=${encodeURIComponent('/')}`,
        "another origin's address is never followed back",
      );

      const detail = `A long detail typed over many minutes ${hex()} `.repeat(8).trim().slice(0, 480);
      const before = await total('contacts');
      const sent = await client.request('POST', '/contacts', {
        ...form({ _csrf: csrfOf(newPage.text), name: 'Kept Person', email: 'kept@example.com', detail }),
        headers: { ...form({}).headers, referer: `${app.url}/contacts/new` },
      });
      assert.equal(sent.status, 303);
      assert.equal(sent.headers.get('location'), `/login?next=${encodeURIComponent('/contacts/new')}`);
      const sealed = client.cookies.get('leadbook_kept_form');
      assert.ok(sealed, 'the typed values are kept in a cookie of this browser');
      assert.ok(
        !decodeURIComponent(sealed).includes('Kept Person') && !decodeURIComponent(sealed).includes('kept@example.com'),
        'sealed, not readable',
      );
      assert.equal(await total('contacts'), before, 'nothing was saved');
      assert.match(
        (await client.get(sent.headers.get('location')!)).text,
        /Your session had ended, so nothing was saved yet/,
      );

      const again = await submit(client, '/login', '/login', { email, password, next: '/contacts/new' });
      assert.equal(again.headers.get('location'), '/contacts/new');
      const back = await client.get('/contacts/new');
      assert.match(back.text, /Your session had ended, so this was not saved\. What you typed is back/);
      assert.match(back.text, /value="Kept Person"/);
      assert.ok(back.text.includes(`>${detail}</textarea>`), 'the long detail is back');
      assert.equal(await total('contacts'), before, 'still not saved by itself');
      assert.doesNotMatch((await client.get('/contacts/new')).text, /Kept Person/, 'given back once');
    });

    test('an edit form kept across an ended session and a two-factor sign-in comes back with its ETag: a change saved meanwhile is still caught', async () => {
      const email = `kept-edit-${hex()}@example.com`;
      const password = `kept edit pass ${hex()}`;
      const user = (await app.post('/api/v1/users', { name: 'Kept Edit', email, password })).body.data;
      const client = app.client();
      assert.equal((await submit(client, '/login', '/login', { email, password })).status, 303);
      // Two-factor on, with a code of the step before: the sign-in below takes the current step's.
      const token = (
        await app.request('POST', '/api/v1/auth/token', { json: { email, password, device_name: 'x' }, token: null })
      ).body.token;
      const setup = await app.request('POST', '/api/v1/me/two-factor', { json: { password }, token });
      await waitForRoom(15);
      const now = Date.now();
      assert.equal(
        (
          await app.request('POST', '/api/v1/me/two-factor/confirm', {
            json: { code: oathtool(setup.body.secret, now - 30_000) },
            token,
          })
        ).status,
        200,
      );

      // Theirs to edit: an agent edits the records they created.
      const contact = (
        await app.post('/api/v1/contacts', {
          name: 'Before',
          email: `before-${hex()}@example.com`,
          created_by: user.id,
        })
      ).body.data;
      const editPath = `/contacts/${contact.id}/edit`;
      const edit = await client.get(editPath);
      const etagHtml = /name="_etag" value="([^"]+)"/.exec(edit.text)?.[1];
      assert.ok(etagHtml, 'the edit form carries the ETag');
      const etag = etagHtml.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
      await app.database.db.deleteFrom('sessions').where('user_id', '=', Number(user.id)).execute();

      const detail = `Mine, typed while someone else saved ${hex()}`;
      const sent = await client.request('POST', `/contacts/${contact.id}`, {
        ...form({
          _csrf: csrfOf(edit.text),
          _etag: etag,
          name: 'Mine',
          email: contact.email,
          detail,
          password: 'never kept',
        }),
        headers: { ...form({}).headers, referer: `${app.url}${editPath}` },
      });
      assert.equal(sent.status, 303);
      assert.equal(sent.headers.get('location'), `/login?next=${encodeURIComponent(editPath)}`);
      assert.equal(
        (await app.patch(`/api/v1/contacts/${contact.id}`, { name: 'Theirs' })).status,
        200,
        'someone else saves meanwhile',
      );

      const first = await submit(client, `/login?next=${encodeURIComponent(editPath)}`, '/login', {
        email,
        password,
        next: editPath,
      });
      assert.equal(first.headers.get('location'), `/two-factor-challenge?next=${encodeURIComponent(editPath)}`);
      const second = await submit(client, first.headers.get('location')!, '/two-factor-challenge', {
        code: oathtool(setup.body.secret, now),
        next: editPath,
      });
      assert.equal(second.status, 303, second.text.slice(0, 300));
      assert.equal(second.headers.get('location'), editPath);
      const back = await client.get(editPath);
      assert.match(back.text, /What you typed is back/);
      assert.match(back.text, /value="Mine"/);
      assert.ok(back.text.includes(`>${detail}</textarea>`));
      assert.ok(back.text.includes(`name="_etag" value="${etagHtml}"`), 'the ETag of when the typing began');
      assert.doesNotMatch(back.text, /never kept/, 'no password is carried');
      assert.equal(
        (await app.get(`/api/v1/contacts/${contact.id}`)).body.data.name,
        'Theirs',
        'nothing saved by itself',
      );

      const saved = await client.request(
        'POST',
        `/contacts/${contact.id}`,
        form({ _csrf: csrfOf(back.text), _etag: etag, name: 'Mine', email: contact.email, detail }),
      );
      assert.equal(saved.status, 409, 'the change saved meanwhile is caught');
      assert.equal((await app.get(`/api/v1/contacts/${contact.id}`)).body.data.name, 'Theirs');
    });

    test('kept values are sealed with an expiry of their own: a stale or foreign sealed cookie gives nothing back', async () => {
      const key = loadAppKey(undefined, app.dataDir);
      const seal = (kept: unknown) => encrypt(key, deflateRawSync(JSON.stringify(kept)).toString('base64'));
      const values = { name: 'Stale Person', detail: 'typed long ago' };
      const cases = {
        'expired a second ago': seal({
          purpose: 'leadbook kept form v1',
          expiresAt: Date.now() - 1000,
          path: '/contacts/new',
          values,
        }),
        'sealed for something else': seal({
          purpose: 'something else',
          expiresAt: Date.now() + 60_000,
          path: '/contacts/new',
          values,
        }),
        'not sealed with this key': encrypt(
          loadAppKey(randomBytes(32).toString('base64'), app.dataDir),
          deflateRawSync(
            JSON.stringify({
              purpose: 'leadbook kept form v1',
              expiresAt: Date.now() + 60_000,
              path: '/contacts/new',
              values,
            }),
          ).toString('base64'),
        ),
      };
      for (const [what, sealed] of Object.entries(cases)) {
        browser.cookies.set('leadbook_kept_form', sealed);
        const page = await browser.get('/contacts/new');
        assert.equal(page.status, 200);
        assert.doesNotMatch(page.text, /Stale Person|What you typed is back/, what);
        assert.equal(browser.cookies.has('leadbook_kept_form'), false, `${what}: the cookie is cleared`);
      }
      browser.cookies.set(
        'leadbook_kept_form',
        seal({ purpose: 'leadbook kept form v1', expiresAt: Date.now() + 60_000, path: '/contacts/new', values }),
      );
      assert.match((await browser.get('/contacts/new')).text, /value="Stale Person"/, 'the same, fresh, is given back');
    });

    test('a number out of range is said in words a person reads', async () => {
      const reply = await app.post('/api/v1/contacts', { name: 'Big', service_id: 2147483648 });
      assertProblem(reply, 422, ['service_id']);
      assert.deepEqual(reply.body.errors.service_id, ['is too large: at most 2,147,483,647']);
      assert.deepEqual(
        (await app.post('/api/v1/contacts', { name: 'Small', source_id: -2147483649 })).body.errors.source_id,
        ['is too small: at least -2,147,483,648'],
      );
    });

    test('an unknown page keeps the navigation for a signed-in person; a stranger gets the plain page', async () => {
      const html = { accept: 'text/html,application/xhtml+xml' };
      const signedIn = await browser.request('GET', '/no-such-page', { headers: html });
      assert.equal(signedIn.status, 404);
      assert.match(signedIn.text, /This page does not exist/);
      assert.match(signedIn.text, /<nav aria-label="Main">/);
      assert.match(signedIn.text, /Sign out/);
      const stranger = await app.client().request('GET', '/no-such-page', { headers: html });
      assert.equal(stranger.status, 404);
      assert.doesNotMatch(stranger.text, /<nav aria-label="Main">/);
      const api = await browser.request('GET', '/api/v1/no-such-route', { headers: html });
      assert.match(api.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });
  });

  describe(`first set-up (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect, { admin: false });
    });
    after(() => app?.close());

    test('asks for a name, an email and a password, nothing more, and creates the admin', async () => {
      const client = app.client();
      const page = await client.get('/setup');
      const names = [...page.text.matchAll(/<(?:input|select|textarea)[^>]* name="([^"]+)"/g)]
        .map((m) => m[1])
        .filter((n) => n !== '_csrf');
      assert.deepEqual(names, ['name', 'email', 'password']);
      const created = await client.request(
        'POST',
        '/setup',
        form({ _csrf: csrfOf(page.text), name: 'Owner', email: 'owner@example.com', password: `owner pass ${hex()}` }),
      );
      assert.equal(created.status, 303, created.text.slice(0, 300));
      const empty = await app
        .client()
        .request('POST', '/api/v1/auth/register', { json: { name: 'Second', email: 'second@example.com' } });
      assert.equal(empty.status, 403, 'registration is closed after the first account');
    });
  });
}
