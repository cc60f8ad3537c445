// Suite 7, security: the list, each item one test, on each database,
// against the real app over HTTP (the JSON API and the pages). Some of these
// are also touched by the account suites; here they are in one place, as a
// checklist a reviewer can read from top to bottom.
import assert from 'node:assert/strict';
import type { Role } from '../../src/schema/roles.ts';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Client, type Reply, startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { digestChanges, digestOf, type OpenApiDocument, operationsOf } from './helpers/fuzz.ts';
import {
  apiSignIn,
  assertProblem,
  csrfOf,
  form,
  headerProblems,
  Ledger,
  mailsOf,
  nextMail,
  oathtool,
  pageSignIn,
  REMEMBER,
  SESSION,
  setCookie,
  STEP_MS,
  submit,
  waitForRoom,
  wrongCode,
} from './helpers/security.ts';

const hex = (bytes = 4) => randomBytes(bytes).toString('hex');
const EVIL = 'http://evil.example';

interface User {
  id: bigint;
  email: string;
  password: string;
}

/** Values that would do harm if a query or a page ran them instead of showing them. */
const HOSTILE = {
  name: "Robert'); drop table contacts; --",
  // A valid address (the rule since the second wave) that still quotes and comments like SQL.
  email: "o'neil'--+1=1@example.com",
  city: '<script>alert(1)</script>',
  detail: '"><img src=x onerror=alert(1)>',
  occupation: "' or '1'='1",
  address: '</textarea><svg onload=alert(1)>',
};

for (const dialect of DIALECTS) {
  describe(`security (${dialect})`, () => {
    let app: TestApp;
    const apps: TestApp[] = [];

    before(async () => {
      app = await startApp(dialect);
      apps.push(app);
    });
    after(async () => {
      for (const each of apps) await each.close();
    });

    async function makeUser(on: TestApp, label: string, role: Role = 'agent'): Promise<User> {
      const user = { email: `${label}-${hex()}@example.com`, password: `${label} pass ${hex(6)}` };
      const created = await on.post('/api/v1/users', { name: label, ...user, role });
      assert.equal(created.status, 201, created.text);
      return { ...user, id: BigInt(created.body.data.id) };
    }

    async function tokenFor(on: TestApp, user: User, extra: Record<string, unknown> = {}): Promise<Reply> {
      const issued = await on.request('POST', '/api/v1/auth/token', {
        json: { email: user.email, password: user.password, device_name: 'security', ...extra },
        token: null,
      });
      assert.equal(issued.status, 201, issued.text);
      return issued;
    }

    /** Turns two-factor on for a token user; answers the secret and the recovery codes. */
    async function enableTwoFactor(
      on: TestApp,
      user: User,
      token: string,
      ledger?: Ledger,
    ): Promise<{ secret: string; codes: string[]; step: number }> {
      const setup = await on.request('POST', '/api/v1/me/two-factor', { json: { password: user.password }, token });
      assert.equal(setup.status, 200, setup.text);
      const secret: string = setup.body.secret;
      ledger?.issued(secret, 'TOTP secret');
      // One step of drift is allowed: a code stays good if the step ends between here and the server.
      await waitForRoom(1);
      const now = Date.now();
      const confirmed = await on.request('POST', '/api/v1/me/two-factor/confirm', {
        json: { code: oathtool(secret, now) },
        token,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      const codes: string[] = confirmed.body.recovery_codes;
      for (const code of codes) ledger?.issued(code, 'recovery code');
      return { secret, codes, step: Math.floor(now / STEP_MS) };
    }

    /** A browser that passed the password step of a two-factor account. */
    async function halfSignIn(on: TestApp, user: User): Promise<Client> {
      const client = on.client();
      const reply = await client.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.deepEqual(reply.body, { two_factor: true }, reply.text);
      return client;
    }

    // ------------------------------------------------------------------ 1
    test('secrets never show in responses or logs: only the one response that issues a token, TOTP secret or recovery code', async () => {
      // Its own app, logging everything, with mail going to files (no SMTP_URL): the log must not carry the reset link.
      const own = await startApp(dialect, { env: { LOG_LEVEL: 'trace' } });
      apps.push(own);
      const ledger = new Ledger(own);
      ledger.used(own.admin.password, 'admin password');
      ledger.items.push({
        value: own.admin.token,
        what: 'admin token',
        issuedBy: own.responses.findIndex((r) => r.includes(own.admin.token)),
      });
      const user = await makeUser(own, 'secretive');
      ledger.used(user.password, 'password');

      // Tokens, from /auth/token and /me/tokens and the profile page.
      const first = (await tokenFor(own, user)).body.token;
      ledger.issued(first, 'bearer token');
      const second = await own.request('POST', '/api/v1/me/tokens', {
        json: { name: 'ci', password: user.password },
        token: first,
      });
      assert.equal(second.status, 201, second.text);
      ledger.issued(second.body.token, 'bearer token');
      const browser = await pageSignIn(own, user, true);
      assert.ok(browser.cookies.get(REMEMBER), 'remember me set its cookie');
      const pageToken = await submit(browser, '/profile', '/profile/tokens', {
        name: 'page token',
        password: user.password,
      });
      assert.equal(pageToken.status, 200, pageToken.text.slice(0, 300));
      ledger.issued(/id="new-token">(lb_[^<]+)</.exec(pageToken.text)![1]!, 'bearer token');
      assert.equal((await browser.get('/profile')).status, 200);

      // Two-factor: set up, signed in with a code and with a recovery code, codes renewed, a token with a code.
      const { secret, codes } = await enableTwoFactor(own, user, first, ledger);
      const challenged = await halfSignIn(own, user);
      assert.equal(
        (await challenged.post('/api/v1/auth/two-factor-challenge', { code: oathtool(secret, Date.now() + STEP_MS) }))
          .status,
        200,
      );
      const recovering = await halfSignIn(own, user);
      assert.equal(
        (await recovering.post('/api/v1/auth/two-factor-challenge', { recovery_code: codes[0] })).status,
        200,
      );
      const renewed = await own.request('POST', '/api/v1/me/two-factor/recovery-codes', {
        json: { password: user.password },
        token: first,
      });
      assert.equal(renewed.status, 200, renewed.text);
      for (const code of renewed.body.recovery_codes) ledger.issued(code, 'recovery code');
      ledger.issued(
        (await tokenFor(own, user, { recovery_code: renewed.body.recovery_codes[1] })).body.token,
        'bearer token',
      );

      // A password reset by mail (written to a file), the reset page opened from its link, and a new password.
      const mails = mailsOf(own).length;
      assert.equal(
        (await own.request('POST', '/api/v1/auth/forgot-password', { json: { email: user.email }, token: null }))
          .status,
        202,
      );
      const mail = await nextMail(own, mails, (m) => m.link?.pathname === '/reset-password');
      const resetToken = mail.link!.searchParams.get('token')!;
      // The page the link opens carries the token on into its form: that answer, and no other, shows it.
      assert.equal(
        (
          await own
            .client()
            .get(`/reset-password?token=${encodeURIComponent(resetToken)}&email=${encodeURIComponent(user.email)}`)
        ).status,
        200,
      );
      ledger.issued(resetToken, 'reset token');
      const newPassword = ledger.used(`reset pass ${hex(6)}`, 'new password');
      const reset = await own.request('POST', '/api/v1/auth/reset-password', {
        json: { token: resetToken, email: user.email, password: newPassword },
        token: null,
      });
      assert.equal(reset.status, 200, reset.text);
      const again = await own
        .client()
        .post('/api/v1/auth/login', { email: user.email, password: newPassword, remember: true });
      assert.deepEqual(again.body, { two_factor: true });

      // The verification link's signature, and a password change.
      const fresh = ledger.issued(
        (await tokenFor(own, { ...user, password: newPassword }, { recovery_code: renewed.body.recovery_codes[2] }))
          .body.token,
        'bearer token',
      );
      const before = mailsOf(own).length;
      assert.equal(
        (await own.request('POST', '/api/v1/auth/email/verification-notification', { token: fresh })).status,
        202,
      );
      const verification = await nextMail(own, before, (m) => m.link?.searchParams.has('signature') === true);
      ledger.used(verification.link!.searchParams.get('signature')!, 'verification signature');
      assert.equal(
        (
          await own.request('GET', `/api/v1/auth${verification.link!.pathname}${verification.link!.search}`, {
            token: null,
          })
        ).status,
        200,
      );
      const changed = ledger.used(`changed pass ${hex(6)}`, 'changed password');
      assert.equal(
        (
          await own.request('PUT', '/api/v1/me/password', {
            json: { current_password: newPassword, password: changed },
            token: fresh,
          })
        ).status,
        204,
      );

      await new Promise((r) => setTimeout(r, 200)); // the last log lines
      assert.ok(
        own.logs.some((line) => /mail written to a file/.test(line)),
        'the mails were logged (by file name)',
      );
      assert.ok(ledger.items.length >= 25, `secrets tracked: ${ledger.items.length}`);
      assert.deepEqual(ledger.problems(), []);
    });

    // ------------------------------------------------------------------ 2
    test('agents cannot reach any admin route: every /api/v1/users route and every users page answer 403', async () => {
      const agent = await makeUser(app, 'agent');
      const token = (await tokenFor(app, agent)).body.token;
      const openapi = await app.request('GET', '/api/v1/openapi.json', { token: null });
      const routes = operationsOf(openapi.body as OpenApiDocument).filter((op) => op.path.startsWith('/api/v1/users'));
      assert.ok(routes.length >= 7, `the users routes (${routes.length})`);
      const before = await digestOf(app.database);
      const victim = String(app.admin.id);
      for (const op of routes) {
        const path = op.path.replace(/\{[^}]+\}/g, victim);
        let reply: Reply;
        if (op.bodies[0]?.type === 'multipart/form-data') {
          const upload = new FormData();
          upload.append(
            'file',
            new Blob([`name,email,password,role\nMallory,mallory-${hex()}@example.com,mallory pass 123,admin\n`], {
              type: 'text/csv',
            }),
            'users.csv',
          );
          reply = await app.request(op.method, path, { body: upload, token });
        } else if (op.bodies.length) {
          reply = await app.request(op.method, path, {
            json: {
              name: 'Mallory',
              email: `mallory-${hex()}@example.com`,
              password: 'mallory pass 123',
              role: 'admin',
            },
            token,
          });
        } else {
          reply = await app.request(op.method, path, { token });
        }
        assert.equal(
          reply.status,
          403,
          `${op.method} ${path} as an agent: ${reply.status} ${reply.text.slice(0, 200)}`,
        );
        assertProblem(reply, 403, 'forbidden');
      }

      const browser = await pageSignIn(app, agent);
      const pages = [
        '/users',
        '/users/new',
        `/users/${victim}`,
        `/users/${victim}/edit`,
        `/users/${victim}/delete`,
        '/users/export.csv',
        '/users/import',
      ];
      for (const page of pages) {
        const reply = await browser.get(page);
        assert.equal(reply.status, 403, `GET ${page}: ${reply.status}`);
        assert.match(reply.headers.get('content-type') ?? '', /text\/html/, page);
      }
      const csrf = csrfOf((await browser.get('/profile')).text);
      for (const action of ['/users', `/users/${victim}`, `/users/${victim}/delete`]) {
        const f = form({
          name: 'Mallory',
          email: `mallory-${hex()}@example.com`,
          password: 'mallory pass 123',
          role: 'admin',
          _csrf: csrf,
        });
        const reply = await browser.request('POST', action, f);
        assert.equal(reply.status, 403, `POST ${action}: ${reply.status}`);
      }
      const upload = new FormData();
      upload.append(
        'file',
        new Blob([`name,email,password\nMallory,m-${hex()}@example.com,mallory pass 123\n`], { type: 'text/csv' }),
        'users.csv',
      );
      upload.set('_csrf', csrf);
      assert.equal(
        (await browser.request('POST', '/users/import', { body: upload })).status,
        403,
        'POST /users/import',
      );
      assert.doesNotMatch((await browser.get('/')).text, /href="\/users"/, 'the agent is not even shown the way');
      assert.deepEqual(
        digestChanges(before, await digestOf(app.database)),
        [],
        'no user was created, changed or deleted',
      );
    });

    // ------------------------------------------------------------------ 3
    test("no user can read or end another's sessions or tokens (every id tried)", async () => {
      const mallory = await makeUser(app, 'mallory');
      const victim = await makeUser(app, 'victim');
      const victimTokens: string[] = [];
      for (let i = 0; i < 3; i++) victimTokens.push((await tokenFor(app, victim)).body.token);
      const victimBrowsers = [await apiSignIn(app, victim), await pageSignIn(app, victim)];
      const victimSessions = (await victimBrowsers[0]!.get('/api/v1/me/sessions')).body.data.map(
        (s: { id: string }) => s.id,
      ) as string[];
      const victimTokenIds = (await app.request('GET', '/api/v1/me/tokens', { token: victimTokens[0] })).body.data.map(
        (t: { id: bigint | number }) => String(t.id),
      ) as string[];
      assert.equal(victimSessions.length, 2);
      assert.equal(victimTokenIds.length, 3);

      const token = (await tokenFor(app, mallory)).body.token;
      const browser = await pageSignIn(app, mallory);
      const mine = (await app.request('GET', '/api/v1/me/tokens', { token })).body.data.map(
        (t: { id: bigint | number }) => String(t.id),
      ) as string[];
      assert.ok(!mine.some((id) => victimTokenIds.includes(id)), "another's tokens are not listed");
      const sessions = await browser.get('/api/v1/me/sessions');
      assert.equal(sessions.status, 200);
      assert.ok(
        !sessions.body.data.some((s: { id: string }) => victimSessions.includes(s.id)),
        "another's sessions are not listed",
      );
      const profile = await browser.get('/profile');
      for (const id of victimTokenIds)
        assert.ok(!profile.text.includes(`/profile/tokens/${id}/delete`), 'the profile page lists no token of another');

      // Every token id there is, through the API and through the page.
      const top = Math.max(...victimTokenIds.map(Number), ...mine.map(Number)) + 5;
      let tried = 0;
      const csrf = csrfOf(profile.text);
      for (let id = 1; id <= top; id++) {
        if (mine.includes(String(id))) continue;
        assertProblem(await app.request('DELETE', `/api/v1/me/tokens/${id}`, { token }), 404, 'not_found');
        const viaPage = await browser.request('POST', `/profile/tokens/${id}/delete`, form({ _csrf: csrf }));
        assert.equal(viaPage.status, 303, `page revoke of #${id}`);
        tried++;
      }
      assert.ok(tried >= victimTokenIds.length, `${tried} ids tried`);
      // Ending "all other sessions" ends only one's own.
      assert.equal(
        (await browser.request('DELETE', '/api/v1/me/sessions', { json: { password: mallory.password } })).status,
        204,
      );
      assert.equal(
        (await app.request('DELETE', '/api/v1/me/sessions', { json: { password: mallory.password }, token })).status,
        204,
      );

      for (const t of victimTokens)
        assert.equal(
          (await app.request('GET', '/api/v1/me', { token: t })).status,
          200,
          "the victim's tokens still work",
        );
      for (const b of victimBrowsers)
        assert.equal((await b.get('/api/v1/me')).status, 200, "the victim's sessions still work");
      assert.deepEqual(
        (await app.request('GET', '/api/v1/me/tokens', { token: victimTokens[0] })).body.data.map(
          (t: { id: bigint | number }) => String(t.id),
        ),
        victimTokenIds,
      );
      const stillTwo = (await victimBrowsers[0]!.get('/api/v1/me/sessions')).body.data
        .map((s: { id: string }) => s.id)
        .sort();
      assert.deepEqual(stillTwo, [...victimSessions].sort());
    });

    // ------------------------------------------------------------------ 4
    test('a cross-origin state-changing request with a valid session cookie is refused (API and forms)', async () => {
      const user = await makeUser(app, 'origin');
      const api = await apiSignIn(app, user);
      const page = await pageSignIn(app, user);
      const contact = (await app.post('/api/v1/contacts', { name: 'Target' })).body.data;
      const before = await digestOf(app.database);
      const crossSite: Record<string, string>[] = [
        { origin: EVIL },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { origin: 'null' },
      ];
      for (const headers of crossSite) {
        assertProblem(
          await api.request('POST', '/api/v1/contacts', { json: { name: 'Forged' }, headers }),
          403,
          'cross_origin',
        );
        assertProblem(
          await api.request('PATCH', `/api/v1/contacts/${contact.id}`, { json: { name: 'Forged' }, headers }),
          403,
          'cross_origin',
        );
        assertProblem(await api.request('DELETE', `/api/v1/contacts/${contact.id}`, { headers }), 403, 'cross_origin');
        assertProblem(
          await api.request('PUT', '/api/v1/me/password', {
            json: { current_password: user.password, password: 'forged pass 1234' },
            headers,
          }),
          403,
          'cross_origin',
        );
        assertProblem(await api.request('POST', '/api/v1/auth/logout', { headers }), 403, 'cross_origin');
        // Forms, even with the right CSRF token: the origin alone refuses them.
        const csrf = csrfOf((await page.get('/contacts/new')).text);
        for (const [action, values] of [
          ['/contacts', { name: 'Forged' }],
          [`/contacts/${contact.id}`, { name: 'Forged' }],
          [`/contacts/${contact.id}/delete`, {}],
          ['/profile', { name: 'Forged', email: user.email }],
          ['/logout', {}],
        ] as const) {
          const f = form({ ...values, _csrf: csrf });
          const reply = await page.request('POST', action, { body: f.body, headers: { ...f.headers, ...headers } });
          assert.equal(reply.status, 403, `POST ${action} with ${JSON.stringify(headers)}: ${reply.status}`);
        }
      }
      assert.equal((await api.get('/api/v1/me')).status, 200, 'still signed in (no forged sign-out)');
      assert.equal((await page.get('/api/v1/me')).status, 200, 'still signed in (no forged sign-out)');
      assert.deepEqual(digestChanges(before, await digestOf(app.database)), [], 'nothing was written');
      // The same browser, from this origin, may.
      assert.equal(
        (await api.request('POST', '/api/v1/contacts', { json: { name: 'Same origin' }, headers: { origin: app.url } }))
          .status,
        201,
      );
      assert.equal(
        (
          await submit(
            page,
            '/contacts/new',
            '/contacts',
            { name: 'Same origin form' },
            { origin: app.url, 'sec-fetch-site': 'same-origin' },
          )
        ).status,
        303,
      );
    });

    // ------------------------------------------------------------------ 5
    test('HTML forms posted without a valid CSRF token are refused', async () => {
      // A manager: every form here is one they may send, so only the missing token refuses it.
      const user = await makeUser(app, 'csrf', 'manager');
      const browser = await pageSignIn(app, user);
      const other = await pageSignIn(app, await makeUser(app, 'csrf-other'));
      const otherToken = csrfOf((await other.get('/profile')).text);
      const contact = (await app.post('/api/v1/contacts', { name: 'CSRF target' })).body.data;
      const inquiry = (await app.post('/api/v1/inquiries', { name: 'CSRF inquiry', status: true })).body.data;
      await browser.get('/profile'); // the browser has its CSRF cookie
      const actions: [string, Record<string, string>][] = [
        ['/contacts', { name: 'Forged' }],
        [`/contacts/${contact.id}`, { name: 'Forged' }],
        [`/contacts/${contact.id}/delete`, {}],
        [`/inquiries/${inquiry.id}/cycle/status`, {}],
        ['/profile', { name: 'Forged', email: user.email }],
        [
          '/profile/password',
          { current_password: user.password, password: 'forged pass 1234', password_confirmation: 'forged pass 1234' },
        ],
        ['/profile/tokens', { name: 'forged', password: user.password }],
        ['/profile/sessions/delete', { password: user.password }],
        ['/profile/two-factor', { password: user.password }],
        ['/profile/delete', { password: user.password }],
        ['/verify-email', {}],
        ['/logout', {}],
      ];
      const before = await digestOf(app.database);
      const tokensBefore = (await browser.get('/api/v1/me/tokens')).body.data.length;
      for (const [action, values] of actions) {
        for (const [label, extra] of [
          ['no token', {}],
          ['a wrong token', { _csrf: 'forged-token' }],
          ["another browser's token", { _csrf: otherToken }],
        ] as const) {
          const reply = await browser.request('POST', action, form({ ...values, ...extra }));
          assert.equal(reply.status, 403, `POST ${action} with ${label}: ${reply.status}`);
          assert.match(reply.text, /This form has expired/, `POST ${action} with ${label}`);
        }
      }
      // The multipart forms (their token in a field before the file), and the public forms from a fresh browser.
      for (const [action, field, file] of [
        ['/contacts/import', 'file', 'contacts.csv'],
        ['/profile/avatar', 'avatar', 'me.png'],
      ] as const) {
        for (const token of [undefined, 'forged']) {
          const upload = new FormData();
          if (token) upload.append('_csrf', token);
          upload.append(field, new Blob(['name\nForged import\n'], { type: 'text/csv' }), file);
          const reply = await browser.request('POST', action, { body: upload });
          assert.equal(reply.status, 403, `${action} with ${token ?? 'no'} token`);
          assert.match(reply.text, /This form has expired/);
        }
      }
      const stranger = app.client();
      await stranger.get('/login');
      for (const [action, values] of [
        ['/login', { email: user.email, password: user.password }],
        ['/forgot-password', { email: user.email }],
        ['/reset-password', { token: 'x', email: user.email, password: 'forged pass 1234' }],
      ] as const) {
        assert.equal(
          (await stranger.request('POST', action, form(values))).status,
          403,
          `POST ${action} without a token`,
        );
      }
      assert.equal(stranger.cookies.has(SESSION), false, 'no sign-in without a token');
      assert.equal((await browser.get('/api/v1/me')).status, 200, 'still signed in');
      assert.equal((await browser.get('/api/v1/me/tokens')).body.data.length, tokensBefore, 'no token was made');
      assert.deepEqual(digestChanges(before, await digestOf(app.database)), [], 'nothing was written');
      // With its own token the same form goes through.
      assert.equal((await submit(browser, '/contacts/new', '/contacts', { name: 'With a token' })).status, 303);
    });

    // ------------------------------------------------------------------ 6
    test('session cookies: HttpOnly, SameSite, Path=/; Secure and __Host- behind TRUST_PROXY over HTTPS', async () => {
      const proxied = await startApp(dialect, { env: { TRUST_PROXY: 'true' } });
      apps.push(proxied);
      const user = await makeUser(proxied, 'cookies');
      const check = (cookie: { attributes: string } | undefined, name: string, secure: boolean) => {
        assert.ok(cookie, `${name} is set`);
        assert.match(cookie.attributes, /;\s*HttpOnly/i, `${name} HttpOnly`);
        assert.match(cookie.attributes, /;\s*SameSite=(Lax|Strict)/i, `${name} SameSite`);
        assert.match(cookie.attributes, /(^|;)\s*Path=\/\s*(;|$)/i, `${name} Path=/`);
        assert.doesNotMatch(cookie.attributes, /Domain=/i, `${name} has no Domain`);
        if (secure) assert.match(cookie.attributes, /;\s*Secure/i, `${name} Secure`);
        else assert.doesNotMatch(cookie.attributes, /Secure/i, `${name} not Secure over plain HTTP`);
      };
      for (const https of [false, true]) {
        const prefix = https ? '__Host-' : '';
        const headers: Record<string, string> = https ? { 'x-forwarded-proto': 'https' } : {};
        const viaApi = await proxied.request('POST', '/api/v1/auth/login', {
          json: { email: user.email, password: user.password, remember: true },
          headers,
          token: null,
        });
        assert.equal(viaApi.status, 200, viaApi.text);
        check(setCookie(viaApi, `${prefix}${SESSION}`), `${prefix}${SESSION} (API)`, https);
        check(setCookie(viaApi, `${prefix}${REMEMBER}`), `${prefix}${REMEMBER} (API)`, https);
        if (https) assert.equal(setCookie(viaApi, SESSION), undefined, 'over HTTPS only the __Host- cookie');

        // The sign-in page: its CSRF cookie, then the session cookies.
        const browser = proxied.client();
        const shown = await browser.request('GET', '/login', { headers });
        check(setCookie(shown, 'leadbook_csrf'), 'leadbook_csrf', https);
        const f = form({ email: user.email, password: user.password, remember: '1', _csrf: csrfOf(shown.text) });
        const viaPage = await browser.request('POST', '/login', {
          body: f.body,
          headers: { ...f.headers, ...headers },
        });
        assert.equal(viaPage.status, 303, viaPage.text.slice(0, 200));
        check(setCookie(viaPage, `${prefix}${SESSION}`), `${prefix}${SESSION} (page)`, https);
        check(setCookie(viaPage, `${prefix}${REMEMBER}`), `${prefix}${REMEMBER} (page)`, https);
        assert.ok(
          Number(/Max-Age=(\d+)/i.exec(setCookie(viaPage, `${prefix}${REMEMBER}`)!.attributes)?.[1]) > 86_400,
          'remember me lasts days',
        );
        assert.doesNotMatch(
          setCookie(viaPage, `${prefix}${SESSION}`)!.attributes,
          /Max-Age|Expires/i,
          'the session cookie ends with the browser',
        );
      }
      // Without TRUST_PROXY a forged X-Forwarded-Proto changes nothing.
      const plain = await app.request('POST', '/api/v1/auth/login', {
        json: { email: app.admin.email, password: app.admin.password },
        headers: { 'x-forwarded-proto': 'https' },
        token: null,
      });
      assert.ok(
        setCookie(plain, SESSION) && !setCookie(plain, `__Host-${SESSION}`),
        'the proxy headers are not trusted by default',
      );
    });

    // ------------------------------------------------------------------ 7
    test('sign-in and two-factor throttling: 429 with Retry-After, on the API and the pages', async () => {
      const user = await makeUser(app, 'throttle');
      for (let i = 0; i < 5; i++)
        assertProblem(
          await app.request('POST', '/api/v1/auth/login', {
            json: { email: user.email, password: `wrong ${i} pass` },
            token: null,
          }),
          401,
          'invalid_credentials',
        );
      const retry = (reply: Reply) => {
        const seconds = Number(reply.headers.get('retry-after'));
        assert.ok(
          Number.isInteger(seconds) && seconds >= 1 && seconds <= 60,
          `Retry-After ${reply.headers.get('retry-after')}`,
        );
      };
      const right = await app.request('POST', '/api/v1/auth/login', {
        json: { email: user.email, password: user.password },
        token: null,
      });
      assertProblem(right, 429, 'throttled');
      retry(right);
      assert.equal(setCookie(right, SESSION), undefined, 'no session while throttled');
      const viaToken = await app.request('POST', '/api/v1/auth/token', {
        json: { email: user.email, password: user.password, device_name: 'x' },
        token: null,
      });
      assertProblem(viaToken, 429, 'throttled');
      const browser = app.client();
      const viaPage = await submit(browser, '/login', '/login', { email: user.email, password: user.password });
      assert.equal(viaPage.status, 429, 'the sign-in page is throttled too');
      retry(viaPage);
      assert.equal(browser.cookies.has(SESSION), false);

      const twoFactor = await makeUser(app, 'throttle2fa');
      const token = (await tokenFor(app, twoFactor)).body.token;
      const { secret, codes } = await enableTwoFactor(app, twoFactor, token);
      const half = await halfSignIn(app, twoFactor);
      const wrong = wrongCode(secret);
      for (let i = 0; i < 5; i++)
        assertProblem(
          await half.post('/api/v1/auth/two-factor-challenge', { code: wrong }),
          422,
          'validation_failed',
          'code',
        );
      const sixth = await half.post('/api/v1/auth/two-factor-challenge', {
        code: oathtool(secret, Date.now() + STEP_MS),
      });
      assertProblem(sixth, 429, 'throttled');
      retry(sixth);
      assertProblem(
        await half.post('/api/v1/auth/two-factor-challenge', { recovery_code: codes[0] }),
        429,
        'throttled',
      );
      assertProblem(await half.get('/api/v1/me'), 401, 'unauthenticated');
    });

    // ------------------------------------------------------------------ 8
    test('a TOTP code is accepted once: replays are refused on the API, the token route and the page', async () => {
      const user = await makeUser(app, 'replay');
      const token = (await tokenFor(app, user)).body.token;
      const { secret, step } = await enableTwoFactor(app, user, token);
      // The code that confirmed the set-up does not sign in.
      const confirmedCode = oathtool(secret, step * STEP_MS + 1000);
      const first = await halfSignIn(app, user);
      if (Math.floor(Date.now() / STEP_MS) <= step + 1)
        assertProblem(
          await first.post('/api/v1/auth/two-factor-challenge', { code: confirmedCode }),
          422,
          'validation_failed',
          'code',
        );
      const code = oathtool(secret, Date.now() + STEP_MS);
      const passed = await first.post('/api/v1/auth/two-factor-challenge', { code });
      assert.equal(passed.status, 200, passed.text);
      const replay = await halfSignIn(app, user);
      assertProblem(await replay.post('/api/v1/auth/two-factor-challenge', { code }), 422, 'validation_failed', 'code');
      assertProblem(await replay.get('/api/v1/me'), 401, 'unauthenticated');
      assertProblem(
        await app.request('POST', '/api/v1/auth/token', {
          json: { email: user.email, password: user.password, device_name: 'x', code },
          token: null,
        }),
        401,
        'two_factor_invalid',
      );
      const page = app.client();
      const signedIn = await submit(page, '/login', '/login', { email: user.email, password: user.password });
      assert.equal(signedIn.status, 303);
      assert.match(signedIn.headers.get('location') ?? '', /^\/two-factor-challenge/);
      const refused = await submit(page, '/two-factor-challenge', '/two-factor-challenge', { code });
      assert.equal(refused.status, 422, 'the page refuses the replayed code');
      assert.equal((await page.get('/api/v1/me')).status, 401);
    });

    // ------------------------------------------------------------------ 9
    test('reset tokens are single-use, bound to their address, and expire after 60 minutes', async () => {
      const user = await makeUser(app, 'reset');
      const other = await makeUser(app, 'reset-other');
      const ask = async (email: string) => {
        const count = mailsOf(app).length;
        assert.equal(
          (await app.request('POST', '/api/v1/auth/forgot-password', { json: { email }, token: null })).status,
          202,
        );
        const mail = await nextMail(app, count, (m) => m.link?.pathname === '/reset-password');
        return mail.link!.searchParams.get('token')!;
      };
      const reset = (token: string, email: string, password: string) =>
        app.request('POST', '/api/v1/auth/reset-password', { json: { token, email, password }, token: null });
      const signIn = (email: string, password: string) =>
        app.request('POST', '/api/v1/auth/login', { json: { email, password }, token: null });

      const token = await ask(user.email);
      assertProblem(await reset(token, other.email, 'stolen pass 1234'), 422, 'validation_failed', 'token');
      const next = `next pass ${hex()}`;
      assert.equal((await reset(token, user.email, next)).status, 200);
      assertProblem(await reset(token, user.email, `again pass ${hex()}`), 422, 'validation_failed', 'token');
      const page = app.client();
      const viaPage = await submit(
        page,
        `/reset-password?token=${token}&email=${encodeURIComponent(user.email)}`,
        '/reset-password',
        { token, email: user.email, password: `page pass ${hex()}` },
      );
      assert.equal(viaPage.status, 422, 'the page refuses a spent token too');
      assert.equal((await signIn(user.email, next)).status, 200, 'the password is the one set once');
      assert.equal((await signIn(other.email, other.password)).status, 200, 'the other account is untouched');

      const late = await ask(user.email);
      await app.database.db
        .updateTable('password_resets')
        .set({ created_at: new Date(Date.now() - 61 * 60_000).toISOString() })
        .where('user_id', '=', Number(user.id))
        .execute();
      assertProblem(await reset(late, user.email, `late pass ${hex()}`), 422, 'validation_failed', 'token');
      const inTime = await ask(user.email);
      await app.database.db
        .updateTable('password_resets')
        .set({ created_at: new Date(Date.now() - 59 * 60_000).toISOString() })
        .where('user_id', '=', Number(user.id))
        .execute();
      assert.notEqual(inTime, late);
      assertProblem(await reset(late, user.email, `late pass ${hex()}`), 422, 'validation_failed', 'token');
      assert.equal(
        (await reset(inTime, user.email, `in time ${hex()}`)).status,
        200,
        'a 59-minute-old token still works',
      );
    });

    // ------------------------------------------------------------------ 10
    test('forgot-password and sign-in answer alike for a known and an unknown email', async () => {
      const user = await makeUser(app, 'known');
      const unknown = `unknown-${hex()}@example.com`;
      const anon = (path: string, json: unknown) => app.request('POST', path, { json, token: null });
      const same = (a: Reply, b: Reply, what: string) => {
        assert.equal(a.status, b.status, `${what}: the same status`);
        assert.equal(a.text, b.text, `${what}: the same body`);
        assert.equal(a.headers.get('content-type'), b.headers.get('content-type'), `${what}: the same type`);
      };
      same(
        await anon('/api/v1/auth/forgot-password', { email: user.email }),
        await anon('/api/v1/auth/forgot-password', { email: unknown }),
        'forgot-password',
      );
      same(
        await anon('/api/v1/auth/login', { email: user.email, password: 'not the password' }),
        await anon('/api/v1/auth/login', { email: unknown, password: 'not the password' }),
        'sign-in',
      );
      same(
        await anon('/api/v1/auth/token', { email: user.email, password: 'not the password', device_name: 'x' }),
        await anon('/api/v1/auth/token', { email: unknown, password: 'not the password', device_name: 'x' }),
        'token',
      );
      same(
        await anon('/api/v1/auth/reset-password', {
          email: user.email,
          token: 'x'.repeat(43),
          password: 'a new pass 1234',
        }),
        await anon('/api/v1/auth/reset-password', {
          email: unknown,
          token: 'x'.repeat(43),
          password: 'a new pass 1234',
        }),
        'reset-password',
      );

      // The pages: the same answer but for the address typed (shown back) and the form's CSRF token.
      const pageAnswer = async (action: string, email: string, values: Record<string, string>) => {
        const reply = await submit(app.client(), action, action, { email, ...values });
        const token = /name="_csrf" value="([^"]+)"/.exec(reply.text)?.[1];
        return {
          status: reply.status,
          location: reply.headers.get('location'),
          text: reply.text.replaceAll(email, 'EMAIL').replaceAll(token ?? 'no token', 'CSRF'),
        };
      };
      assert.deepEqual(
        await pageAnswer('/login', user.email, { password: 'not the password' }),
        await pageAnswer('/login', unknown, { password: 'not the password' }),
        'the sign-in page',
      );
      assert.deepEqual(
        await pageAnswer('/forgot-password', user.email, {}),
        await pageAnswer('/forgot-password', unknown, {}),
        'the forgot-password page',
      );
    });

    // ------------------------------------------------------------------ 11
    test('SQL-looking and HTML-looking values round-trip literally and render inert in the pages', async () => {
      const created = await app.post('/api/v1/contacts', HOSTILE);
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      const stored = (await app.get(`/api/v1/contacts/${id}`)).body.data;
      for (const [field, value] of Object.entries(HOSTILE))
        assert.equal(stored[field], value, `${field} is stored as sent`);
      const inquiry = await app.post('/api/v1/inquiries', { ...HOSTILE, status: true });
      assert.equal(inquiry.status, 201, inquiry.text);
      // Searched and filtered for, literally.
      for (const [field, value] of Object.entries(HOSTILE)) {
        const found = await app.get(`/api/v1/contacts?filter[${field}]=${encodeURIComponent(value)}`);
        assert.equal(found.status, 200, found.text);
        assert.deepEqual(
          found.body.data.map((r: { id: unknown }) => String(r.id)),
          [String(id)],
          `filter[${field}] finds exactly it`,
        );
      }
      const searched = await app.get(`/api/v1/contacts?search=${encodeURIComponent('drop table contacts; --')}`);
      assert.deepEqual(
        searched.body.data.map((r: { id: unknown }) => String(r.id)),
        [String(id)],
      );
      // The name of a user too (it shows in every page's header) and a value typed into a form.
      // A manager sees every page of every record (an agent edits only their own).
      const user = await makeUser(app, 'hostile', 'manager');
      const named = await app.patch(`/api/v1/users/${user.id}`, { name: HOSTILE.city, city: HOSTILE.detail });
      assert.equal(named.status, 200, named.text);
      const browser = await pageSignIn(app, user);
      const typed = await submit(browser, '/contacts/new', '/contacts', {
        name: HOSTILE.detail,
        city: HOSTILE.city,
        address: HOSTILE.address,
      });
      assert.equal(typed.status, 303, typed.text.slice(0, 300));
      const typedId = /\/contacts\/(\d+)/.exec(typed.headers.get('location') ?? '')![1];
      assert.equal(
        (await app.get(`/api/v1/contacts/${typedId}`)).body.data.address,
        HOSTILE.address,
        'a form stores it literally too',
      );
      const invalid = await submit(browser, '/contacts/new', '/contacts', {
        name: HOSTILE.city,
        service_id: HOSTILE.detail,
      });
      assert.equal(invalid.status, 422, 'a refused form shows the typed values again');

      const pages = [
        '/',
        '/contacts',
        `/contacts?search=${encodeURIComponent('<script>')}`,
        `/contacts/${id}`,
        `/contacts/${id}/edit`,
        `/contacts/${id}/delete`,
        `/contacts/${typedId}`,
        `/inquiries/${inquiry.body.data.id}`,
        '/inquiries',
        '/profile',
        `/contacts?filter[city]=${encodeURIComponent(HOSTILE.city)}`,
      ];
      const rendered = [
        ...(await Promise.all(pages.map(async (p) => ({ page: p, reply: await browser.get(p) })))),
        { page: 'the refused form', reply: invalid },
      ];
      for (const { page, reply } of rendered) {
        assert.ok([200, 422].includes(reply.status), `${page}: ${reply.status}`);
        for (const raw of ['<script>alert(1)</script>', '<img src=x onerror', '<svg onload', '</textarea><svg'])
          assert.ok(!reply.text.includes(raw), `${page} carries ${raw} unescaped`);
      }
      const detail = rendered.find((r) => r.page === `/contacts/${id}`)!.reply.text;
      assert.match(detail, /&lt;script(>|&gt;)alert\(1\)&lt;\/script(>|&gt;)/, 'the script is shown as text');
      assert.match(detail, /Robert(&#39;|&#x27;|')\); drop table contacts; --/, 'the SQL is shown as text');
      assert.ok(
        rendered.some((r) => r.page === '/profile' && /&lt;script(>|&gt;)alert/.test(r.reply.text)),
        "the user's own name is escaped in the page",
      );
      assert.ok(
        (await app.get('/api/v1/contacts?per_page=1')).body.meta.total >= 2,
        'the contacts table is still there',
      );
    });

    // ------------------------------------------------------------------ 12
    test('an oversized body gets 413 before it is read whole (JSON, CSV upload, avatar; API and page)', async () => {
      const browser = await pageSignIn(app, app.admin);
      const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const boundary = `----leadbook${hex()}`;
      const multipartHead = (field: string, filename: string, type: string) =>
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
        );
      const cases = [
        {
          what: 'JSON',
          path: '/api/v1/contacts',
          headers: { authorization: `Bearer ${app.admin.token}`, 'content-type': 'application/json' },
          declared: 100 * 1024 * 1024,
          head: Buffer.from('{"name":"'),
        },
        {
          what: 'CSV upload',
          path: '/api/v1/contacts/import',
          headers: {
            authorization: `Bearer ${app.admin.token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
          },
          declared: 200 * 1024 * 1024,
          head: multipartHead('file', 'big.csv', 'text/csv'),
        },
        {
          what: 'CSV upload page',
          path: '/contacts/import',
          headers: { cookie, origin: app.url, 'content-type': `multipart/form-data; boundary=${boundary}` },
          declared: 200 * 1024 * 1024,
          head: multipartHead('file', 'big.csv', 'text/csv'),
        },
        {
          what: 'avatar',
          path: '/api/v1/me/avatar',
          headers: {
            authorization: `Bearer ${app.admin.token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
          },
          declared: 100 * 1024 * 1024,
          head: multipartHead('avatar', 'big.png', 'image/png'),
        },
        {
          what: 'avatar page',
          path: '/profile/avatar',
          headers: { cookie, origin: app.url, 'content-type': `multipart/form-data; boundary=${boundary}` },
          declared: 100 * 1024 * 1024,
          head: multipartHead('avatar', 'big.png', 'image/png'),
        },
      ];
      for (const c of cases) {
        const outcome = await new Promise<{ status: number; type: string; text: string; sent: number }>(
          (resolve, reject) => {
            let sent = 0;
            let timer: NodeJS.Timeout | undefined;
            const request = http.request(
              app.url + c.path,
              { method: 'POST', headers: { ...c.headers, 'content-length': String(c.declared) } },
              (res) => {
                clearInterval(timer);
                let text = '';
                res.setEncoding('utf8');
                res.on('data', (d) => (text += d));
                res.on('end', () => {
                  resolve({ status: res.statusCode!, type: String(res.headers['content-type']), text, sent });
                  request.destroy();
                });
              },
            );
            request.on('error', (error) => {
              clearInterval(timer);
              reject(error);
            });
            request.write(c.head);
            sent += c.head.length;
            // A slow sender: 16 KiB every 50 ms, far from ever finishing; the answer must not wait for it.
            timer = setInterval(() => {
              const chunk = Buffer.alloc(16 * 1024, 'a');
              request.write(chunk);
              sent += chunk.length;
            }, 50);
            setTimeout(() => {
              clearInterval(timer);
              request.destroy();
              reject(new Error(`${c.what}: no answer within 5 s (${sent} of ${c.declared} bytes sent)`));
            }, 5000).unref();
          },
        );
        assert.equal(outcome.status, 413, `${c.what}: ${outcome.status} ${outcome.text.slice(0, 200)}`);
        assert.ok(outcome.sent < c.declared / 10, `${c.what}: answered after ${outcome.sent} of ${c.declared} bytes`);
        if (c.path.startsWith('/api/')) assert.match(outcome.type, /^application\/problem\+json/, c.what);
        if (c.path.startsWith('/api/')) assert.equal(JSON.parse(outcome.text).code, 'payload_too_large', c.what);
      }
    });

    // ------------------------------------------------------------------ 13 (last: it also checks every answer the tests above received)
    test('security headers on every page and API response: CSP without unsafe-inline scripts, nosniff, Referrer-Policy, frame protection', async () => {
      const browser = await pageSignIn(app, app.admin);
      const contact = (await app.post('/api/v1/contacts', { name: 'Headers' })).body.data;
      const stranger = app.client();
      const answers: [string, Promise<Reply>][] = [];
      const pages = [
        '/',
        '/contacts',
        '/contacts/new',
        `/contacts/${contact.id}`,
        `/contacts/${contact.id}/edit`,
        `/contacts/${contact.id}/delete`,
        '/contacts/import',
        '/contacts/export.csv',
        '/inquiries',
        '/inquiries/new',
        '/users',
        '/users/new',
        `/users/${app.admin.id}`,
        '/profile',
        '/verify-email',
        '/nope',
        '/assets/app.css',
        '/assets/app.js',
        '/assets/htmx.min.js',
        '/assets/favicon.svg',
      ];
      for (const p of pages)
        answers.push([`page ${p}`, browser.request('GET', p, { headers: { accept: 'text/html' } })]);
      for (const p of [
        '/login',
        '/forgot-password',
        '/reset-password?token=x&email=y',
        '/register',
        '/setup',
        '/two-factor-challenge',
        '/contacts',
        '/docs',
        '/docs/',
      ])
        answers.push([`anonymous page ${p}`, stranger.request('GET', p, { headers: { accept: 'text/html' } })]);
      answers.push(['a form answer', browser.request('POST', '/contacts', form({ name: 'x', _csrf: 'wrong' }))]);
      const openapi = await app.request('GET', '/api/v1/openapi.json', { token: null });
      for (const op of operationsOf(openapi.body as OpenApiDocument)) {
        if (op.method !== 'GET') continue;
        const path = op.path.replace(/\{id\}|\{userId\}/g, String(app.admin.id)).replace(/\{[^}]+\}/g, 'x');
        answers.push([`GET ${path}`, app.get(path)]);
        answers.push([`anonymous GET ${path}`, app.request('GET', path, { token: null })]);
      }
      answers.push(['a 422', app.get('/api/v1/contacts?per_page=0')]);
      answers.push([
        'a 400',
        app.request('POST', '/api/v1/contacts', { body: '{', headers: { 'content-type': 'application/json' } }),
      ]);
      answers.push([
        'a 415',
        app.request('POST', '/api/v1/contacts', { body: 'x', headers: { 'content-type': 'text/plain' } }),
      ]);
      answers.push(['a 404 route', app.get('/api/v1/nope')]);
      answers.push(['a 414 (an over-long path id)', app.get(`/api/v1/contacts/${'9'.repeat(150)}`)]);
      answers.push(['a 400 (a malformed path)', app.get('/api/v1/contacts/%zz')]);
      answers.push(['a 201', app.post('/api/v1/contacts', { name: 'created' })]);
      answers.push(['a 204', app.delete(`/api/v1/contacts/${contact.id}`)]);
      answers.push([
        'a 304',
        app.get(`/api/v1/users/${app.admin.id}`, {
          'if-none-match': (await app.get(`/api/v1/users/${app.admin.id}`)).headers.get('etag')!,
        }),
      ]);
      const problems: string[] = [];
      for (const [what, pending] of answers) {
        const reply = await pending;
        for (const p of headerProblems(reply.headers)) problems.push(`${what} (${reply.status}): ${p}`);
      }
      // And every answer this suite's other tests received from this app.
      for (const [index, response] of app.responses.entries()) {
        const [status, ...lines] = response.slice(0, response.indexOf('\n\n')).split('\n');
        const headers = new Headers();
        for (const line of lines) {
          const i = line.indexOf(': ');
          if (i > 0) headers.append(line.slice(0, i), line.slice(i + 2));
        }
        for (const p of headerProblems(headers)) problems.push(`response #${index} (${status}): ${p}`);
      }
      assert.ok(
        answers.length > 60 && app.responses.length > 200,
        `${answers.length} answers checked here, ${app.responses.length} in all`,
      );
      assert.deepEqual([...new Set(problems)], []);
    });
  });
}
