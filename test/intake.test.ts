// Intake forms over HTTP, on each database, as a stranger would send them: a form's JSON and form-encoded doors
// create an inquiry (its contact matched or made, its source set, the assignment rules run) with no sign-in; unknown
// and missing fields are refused by name and write nothing; a filled trap field and a hosted form sent within 2 s are
// answered the same and stored nowhere, only counted; an Idempotency-Key answers a retry the same and creates one
// inquiry even when the retries race; the 11th submission in a minute is throttled; CORS and framing are the allowed
// origins' alone; a closed form is 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const ALLOWED = 'https://www.example.com';

for (const dialect of DIALECTS) {
  describe(`intake forms (${dialect})`, () => {
    let app: TestApp;
    let agent: Teammate;
    let formId: string;
    let sourceId: number;

    /** A stranger's request: no token, no cookie. */
    const send = (path: string, json: unknown, headers: Record<string, string> = {}) =>
      app.request('POST', path, { json, token: null, headers });
    const inquiriesNamed = async (name: string) =>
      (await app.get(`/api/v1/inquiries?filter[name]=${encodeURIComponent(name)}`)).body.data as Record<
        string,
        unknown
      >[];
    /** The form's spam count, kept outside its record. */
    const droppedCount = async (id = formId) =>
      Number(
        (
          await app.database.db
            .selectFrom('intake_form_drops')
            .select('dropped')
            .where('form_id', '=', BigInt(id))
            .executeTakeFirst()
        )?.dropped ?? 0,
      );

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      agent = await teammate(app, 'agent', 'Ivy Intake');
      sourceId = (await app.post('/api/v1/sources', { name: 'Website form' })).body.data.id;
      const made = await app.post('/api/v1/intake-forms', {
        name: 'Contact us',
        slug: 'contact-us',
        fields: ['name', 'email', 'detail', 'country'],
        required: ['email'],
        source_id: sourceId,
        allowed_origins: [ALLOWED],
      });
      assert.equal(made.status, 201, made.text);
      formId = String(made.body.data.id);
      await app.post('/api/v1/assignment-rules', {
        name: 'Web leads',
        position: 1,
        match: { source_id: sourceId },
        users: [Number(agent.id)],
        respond_within_minutes: 60,
      });
    });
    after(() => app?.close());

    test('a form that cannot work is refused by field', async () => {
      const base = { name: `Bad ${Math.random()}`, fields: ['name', 'email'] };
      const cases: [Record<string, unknown>, string][] = [
        [{ slug: 'Contact Us' }, 'slug'],
        [{ slug: 'ok-slug-2', fields: ['name', 'ticket_id'] }, 'fields'],
        [{ slug: 'contact-us' }, 'slug'],
        [{ slug: 'ok-slug-3', allowed_origins: ['https://example.com/form'] }, 'allowed_origins'],
      ];
      for (const [bad, field] of cases) {
        const res = await app.post('/api/v1/intake-forms', { ...base, ...bad });
        assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${res.text}`);
        assert.ok(res.body.errors[field], `${field}: ${res.text}`);
      }
    });

    test('JSON and form-encoded submissions become inquiries: contact linked, source set, rule run, via intake', async () => {
      const sent = await send('/api/v1/intake/contact-us', {
        name: 'Wanda Web',
        email: 'Wanda@Example.org',
        detail: 'A quote, please',
      });
      assert.equal(sent.status, 202, sent.text);
      assert.match(sent.body.reference, /^[\w-]{8,}$/);
      const [made] = await inquiriesNamed('Wanda Web');
      assert.ok(made, 'the inquiry is there');
      assert.equal(made.source_id, sourceId);
      assert.equal(made.created_by, null, 'made by nobody signed in');
      assert.equal(String(made.assigned_to), String(agent.id), 'the rule gave it to Ivy');
      assert.notEqual(made.due_at, null);
      assert.notEqual(made.contact_id, null, 'a contact was made for it');
      const [entry] = (await app.get(`/api/v1/inquiries/${made.id}/activity`)).body.data;
      assert.deepEqual([entry.action, entry.via, entry.actor], ['created', 'intake', null]);

      const form = new URLSearchParams({ name: 'Fred Form', email: 'fred@example.org' });
      const encoded = await app.request('POST', '/api/v1/intake/contact-us', {
        body: form.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        token: null,
      });
      assert.equal(encoded.status, 202, encoded.text);
      assert.equal((await inquiriesNamed('Fred Form')).length, 1);
      // A browser posting the settings page's HTML snippet is answered with the form's message, as a page.
      const browser = await app.request('POST', '/api/v1/intake/contact-us', {
        body: new URLSearchParams({ name: 'Bea Browser', email: 'bea@example.org', website: '' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,*/*' },
        token: null,
      });
      assert.equal(browser.status, 202);
      assert.match(browser.headers.get('content-type') ?? '', /text\/html/);
      assert.match(browser.text, /Thank you: we have your message/);
      assert.equal((await inquiriesNamed('Bea Browser')).length, 1);
    });

    test('unknown and missing fields are refused by name, and nothing is written', async () => {
      const before = (await app.get('/api/v1/inquiries')).body.meta.total;
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ email: 'a@example.org', phone: '123' }, 'phone', /not asked/],
        [{ email: 'a@example.org', favourite_colour: 'blue' }, 'favourite_colour', /not a field/],
        [{ name: 'No address' }, 'email', /required/],
        [{ email: 'not an address' }, 'email', /valid email/],
      ];
      for (const [body, field, message] of cases) {
        const res = await send('/api/v1/intake/contact-us', body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
        assert.match(String(res.body.errors?.[field]), message, res.text);
      }
      assert.equal((await app.get('/api/v1/inquiries')).body.meta.total, before);
      assert.equal((await send('/api/v1/intake/no-such-form', { email: 'a@example.org' })).status, 404);
    });

    test('a filled trap field is answered 202 and stored nowhere, only counted (not a change of the form)', async () => {
      const before = await droppedCount();
      const form = await app.get(`/api/v1/intake-forms/${formId}`);
      const logged = (await app.get(`/api/v1/intake-forms/${formId}/activity`)).body.data.length;
      const res = await send('/api/v1/intake/contact-us', {
        name: 'Spam Bot',
        email: 'bot@example.org',
        website: 'http://spam.example',
      });
      assert.equal(res.status, 202, res.text);
      assert.ok(res.body.reference);
      assert.equal((await inquiriesNamed('Spam Bot')).length, 0);
      assert.equal(await droppedCount(), before + 1);
      const after = await app.get(`/api/v1/intake-forms/${formId}`);
      assert.equal(after.headers.get('etag'), form.headers.get('etag'), 'the form is unchanged: same ETag');
      assert.equal((await app.get(`/api/v1/intake-forms/${formId}/activity`)).body.data.length, logged, 'no entry');
      // Admins see the count, and the snippets that put the form on their site, on the settings page.
      const settings = (await (await pageSignIn(app, app.admin)).get('/settings')).text;
      assert.match(settings, new RegExp(`Contact us[\\s\\S]*?${before + 1} dropped as spam`));
      assert.match(settings, /iframe src=(?:"|&quot;)http:\/\/127\.0\.0\.1:\d+\/f\/contact-us/);
      assert.match(settings, /action=(?:"|&quot;)http:\/\/127\.0\.0\.1:\d+\/api\/v1\/intake\/contact-us/);
    });

    test('20 racing retries with one Idempotency-Key: one inquiry, 20 same answers; another body is refused', async () => {
      // A form of its own: each form takes 10 submissions a minute from one address (a kept key's retry is free).
      const made = await app.post('/api/v1/intake-forms', { name: 'Retry', slug: 'retry', fields: ['name', 'email'] });
      assert.equal(made.status, 201, made.text);
      const body = { name: 'Ida Potent', email: 'ida@example.org' };
      const key = { 'idempotency-key': `key-${dialect}-1` };
      const results = await Promise.all(Array.from({ length: 20 }, () => send('/api/v1/intake/retry', body, key)));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(20).fill(202),
        results.map((r) => r.text).join('\n'),
      );
      assert.equal(new Set(results.map((r) => r.text)).size, 1, 'one answer, 20 times');
      assert.equal((await inquiriesNamed('Ida Potent')).length, 1, 'one inquiry');
      const other = await send('/api/v1/intake/retry', { ...body, name: 'Someone else' }, key);
      assert.equal(other.status, 422, other.text);
      assert.equal(other.body.code, 'idempotency_key_reused');
    });

    test('CORS answers the allowed origins only', async () => {
      const preflight = (origin: string) =>
        app.request('OPTIONS', '/api/v1/intake/contact-us', {
          token: null,
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
      const allowed = await preflight(ALLOWED);
      assert.equal(allowed.headers.get('access-control-allow-origin'), ALLOWED);
      const other = await preflight('https://evil.example');
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const sent = await send('/api/v1/intake/contact-us', { email: 'cors@example.org' }, { origin: ALLOWED });
      assert.equal(sent.headers.get('access-control-allow-origin'), ALLOWED);
    });

    test('the hosted page works without JavaScript, may be framed by the allowed origins, drops what is sent too fast', async () => {
      const hosted = await app.post('/api/v1/intake-forms', {
        name: 'Hosted',
        slug: 'hosted',
        fields: ['name', 'email', 'country'],
        required: ['email'],
        allowed_origins: [ALLOWED],
        success_message: 'Thank you: we have your message.',
      });
      assert.equal(hosted.status, 201, hosted.text);
      const page = await app.request('GET', '/f/hosted', { token: null });
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', new RegExp(`frame-ancestors ${ALLOWED}`));
      assert.equal(page.headers.get('x-frame-options'), null);
      const token = /name="_t" value="([^"]+)"/.exec(page.text)?.[1];
      assert.ok(token, 'the page carries its render token');
      assert.match(page.text, /<label for="field-email">Email \(required\)/);
      const post = (fields: Record<string, string>) =>
        app.request('POST', '/f/hosted', {
          body: new URLSearchParams({ _t: token!, website: '', ...fields }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          token: null,
        });
      const before = await droppedCount(hosted.body.data.id);
      const fast = await post({ name: 'Too Fast', email: 'fast@example.org' });
      assert.equal(fast.status, 200);
      assert.match(fast.text, /we have your message/);
      assert.equal((await inquiriesNamed('Too Fast')).length, 0, 'within 2 s: dropped');
      assert.equal(await droppedCount(hosted.body.data.id), before + 1);
      await new Promise((r) => setTimeout(r, 2100));
      const missing = await post({ name: 'Forgot Mail', email: '' });
      assert.equal(missing.status, 422);
      assert.match(missing.text, /Please correct the fields below[\s\S]*is required/);
      assert.match(missing.text, /value="Forgot Mail"/, 'what was typed is kept');
      const ok = await post({ name: 'Hosted Hal', email: 'hal@example.org', country: 'Norway' });
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await inquiriesNamed('Hosted Hal')).length, 1);
      // A form that allows no origin may not be framed at all.
      await app.post('/api/v1/intake-forms', { name: 'Closed', slug: 'closed', fields: ['email'], active: false });
      assert.equal((await app.request('GET', '/f/closed', { token: null })).status, 404);
    });

    test('the 11th submission a minute from one address is throttled', async () => {
      const made = await app.post('/api/v1/intake-forms', { name: 'Busy', slug: 'busy', fields: ['email'] });
      assert.equal(made.status, 201, made.text);
      const statuses = [];
      for (let i = 0; i < 11; i++)
        statuses.push((await send('/api/v1/intake/busy', { email: `busy${i}@example.org` })).status);
      assert.deepEqual(statuses, [...Array(10).fill(202), 429]);
      const refused = await send('/api/v1/intake/busy', { email: 'again@example.org' });
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    });
  });
}
