// Every account flow over HTTP, against the real app on each database: the
// first admin and registration, users as records, sessions and remember-me,
// personal access tokens, two-factor sign-in (codes from Debian's oathtool, an
// independent TOTP implementation), reset and verification mails through a
// real SMTP peer, password change, avatars, access rules, throttling, and at
// the end a scan of every response and log line for the secrets used.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hashSync } from '@node-rs/bcrypt';
import sharp from 'sharp';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { linkIn, type MailCatcher, type ReceivedMail, startMailCatcher } from './helpers/smtp.ts';

const SESSION = 'leadbook_session';
const REMEMBER = 'leadbook_remember';
const STEP_MS = 30_000;

const hex = (bytes = 4) => randomBytes(bytes).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function assertProblem(reply: Reply, status: number, code: string, field?: string) {
  assert.equal(reply.status, status, reply.text);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/, reply.text);
  assert.equal(reply.body.status, status);
  assert.equal(reply.body.code, code, reply.text);
  if (field !== undefined)
    assert.ok(
      Array.isArray(reply.body.errors?.[field]) && reply.body.errors[field].length > 0,
      `errors name ${field}: ${reply.text}`,
    );
}

/** The Set-Cookie line for a cookie name in a reply, if any. */
function setCookie(reply: Reply, name: string): { value: string; attributes: string } | undefined {
  for (const line of reply.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';');
    const eq = pair!.indexOf('=');
    if (pair!.slice(0, eq).trim() === name) return { value: pair!.slice(eq + 1), attributes: attributes.join(';') };
  }
  return undefined;
}

// ---- TOTP codes from oathtool (RFC 6238: SHA-1, 6 digits, 30-second steps) ----

/** The code oathtool computes for `secret` at the time `at` (ms). */
function oathtool(secret: string, at: number): string {
  const when = new Date(Math.floor(at / 1000) * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
  return execFileSync('/usr/bin/oathtool', ['--totp', '-b', '--now', when, secret], { encoding: 'utf8' }).trim();
}

const stepOf = (ms: number) => Math.floor(ms / STEP_MS);

/** Waits, if needed, so that at least `seconds` remain in the current 30-second step. */
async function waitForRoom(seconds = 5): Promise<void> {
  const left = STEP_MS - (Date.now() % STEP_MS);
  if (left < seconds * 1000) await sleep(left + 100);
}

/** A six-digit code that is valid for none of the steps around now. */
function wrongCode(secret: string): string {
  const now = Date.now();
  const valid = new Set([-2, -1, 0, 1, 2].map((k) => oathtool(secret, now + k * STEP_MS)));
  for (const candidate of ['000000', '123456', '999999', '424242']) if (!valid.has(candidate)) return candidate;
  throw new Error('unreachable');
}

// ---- The secrets used, and where each may show ----

interface Tracked {
  value: string;
  what: string;
  /** The one response that shows it by design; none for passwords and mailed tokens. */
  issuedBy?: { app: TestApp; index: number };
}

class Ledger {
  readonly items: Tracked[] = [];
  /** A secret no response may show. */
  used(value: string, what: string): string {
    this.items.push({ value, what });
    return value;
  }
  /** A secret the app's latest response issued (and only it may show). */
  issued(app: TestApp, value: string, what: string): string {
    const index = app.responses.length - 1;
    assert.ok(app.responses[index]?.includes(value), `the latest response carries the ${what}`);
    this.items.push({ value, what, issuedBy: { app, index } });
    return value;
  }
}

interface User {
  id: number | bigint;
  email: string;
  password: string;
}

for (const dialect of DIALECTS) {
  describe(`accounts (${dialect})`, () => {
    const apps: TestApp[] = [];
    const ledger = new Ledger();
    let app: TestApp;
    let mailApp: TestApp;
    let smtp: MailCatcher;
    /** A user whose two-factor was confirmed with the previous step's code, in `before`. */
    let drift: User & { secret: string; confirmedStep: number };

    const password = (label: string) => ledger.used(`${label} pass ${hex(6)}`, `${label}'s password`);
    const anon = (on: TestApp, method: string, path: string, json?: unknown) =>
      on.request(method, path, { json, token: null });

    /** An account created by the admin through the users records. */
    async function makeUser(label: string, role: 'agent' | 'admin' = 'agent'): Promise<User> {
      const user = { email: `${label}-${hex()}@example.com`, password: password(label) };
      const created = await app.post('/api/v1/users', { name: label, ...user, role });
      assert.equal(created.status, 201, created.text);
      return { ...user, id: created.body.data.id };
    }

    async function tokenFor(user: User, on = app, extra: Record<string, unknown> = {}): Promise<string> {
      const issued = await anon(on, 'POST', '/api/v1/auth/token', {
        email: user.email,
        password: user.password,
        device_name: 'test',
        ...extra,
      });
      assert.equal(issued.status, 201, issued.text);
      return ledger.issued(on, issued.body.token, 'bearer token');
    }

    async function signIn(user: User, options: { remember?: boolean } = {}, on = app): Promise<Client> {
      const client = on.client();
      const reply = await client.post('/api/v1/auth/login', { email: user.email, password: user.password, ...options });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.data.email, user.email);
      return client;
    }

    /** Signs in a user with two-factor on: the password step only. */
    async function halfSignIn(user: User): Promise<Client> {
      const client = app.client();
      const reply = await client.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(reply.body, { two_factor: true });
      assert.equal((await client.get('/api/v1/me')).status, 401, 'the password alone signs nobody in');
      return client;
    }

    /** Starts two-factor setup for a token user; answers the secret. */
    async function startTwoFactor(user: User, token: string): Promise<string> {
      const setup = await app.request('POST', '/api/v1/me/two-factor', { json: { password: user.password }, token });
      assert.equal(setup.status, 200, setup.text);
      return ledger.issued(app, setup.body.secret, 'TOTP secret');
    }

    const me = (token: string) => app.request('GET', '/api/v1/me', { token });

    before(async () => {
      smtp = await startMailCatcher();
      app = await startApp(dialect);
      apps.push(app);
      ledger.used(app.admin.password, 'admin password');
      ledger.issued(app, app.admin.token, 'admin bearer token');
      // issued() looked at the latest response; the token came from the one that created it.
      const tokenReply = app.responses.findIndex((r) => r.includes(app.admin.token));
      ledger.items.at(-1)!.issuedBy!.index = tokenReply;

      mailApp = await startApp(dialect, {
        admin: false,
        env: {
          SMTP_URL: smtp.url,
          REGISTRATION: 'open',
          APP_URL: 'https://desk.example.test',
          MAIL_FROM: 'Leadbook <desk@example.test>',
        },
      });
      apps.push(mailApp);

      // Two-factor confirmed with the previous step's code, early: a later test signs in with the
      // previous step's code again once the clock has moved past this step.
      const user = await makeUser('drift');
      const token = await tokenFor(user);
      const secret = await startTwoFactor(user, token);
      await waitForRoom(5);
      const now = Date.now();
      for (const offset of [-2 * STEP_MS, 2 * STEP_MS]) {
        const refused = await app.request('POST', '/api/v1/me/two-factor/confirm', {
          json: { code: oathtool(secret, now + offset) },
          token,
        });
        assertProblem(refused, 422, 'validation_failed', 'code');
      }
      const confirmed = await app.request('POST', '/api/v1/me/two-factor/confirm', {
        json: { code: oathtool(secret, now - STEP_MS) },
        token,
      });
      assert.equal(confirmed.status, 200, `a code from the previous step is accepted: ${confirmed.text}`);
      for (const code of confirmed.body.recovery_codes) ledger.issued(app, code, 'recovery code');
      drift = { ...user, secret, confirmedStep: stepOf(now) };
    });

    after(async () => {
      for (const each of apps) await each.close();
      await smtp.close();
    });

    // ---------------------------------------------------------------- 1
    test('the first account is an admin with a session cookie; then registration is closed', async () => {
      const fresh = await startApp(dialect, { admin: false, env: { TRUST_PROXY: 'true' } });
      apps.push(fresh);
      const browser = fresh.client();
      const owner = { name: 'Owner', email: `owner-${hex()}@example.com`, password: password('owner') };
      const registered = await browser.post('/api/v1/auth/register', owner);
      assert.equal(registered.status, 201, registered.text);
      assert.equal(registered.body.data.role, 'admin');
      assert.equal(registered.body.data.email, owner.email);
      assert.equal('password' in registered.body.data, false);
      const cookie = setCookie(registered, SESSION);
      assert.ok(cookie && cookie.value.length >= 32, 'a session cookie is set');
      assert.match(cookie.attributes, /;\s*HttpOnly/i);
      assert.match(cookie.attributes, /;\s*SameSite=Lax/i);
      assert.match(cookie.attributes, /(^|;)\s*Path=\/\s*(;|$)/i);
      assert.doesNotMatch(cookie.attributes, /Secure/i, 'no Secure flag over plain http');
      const mine = await browser.get('/api/v1/me');
      assert.equal(mine.status, 200);
      assert.equal(mine.body.data.role, 'admin');

      // Behind a proxy that terminated HTTPS the cookie is Secure (and __Host- prefixed).
      const secure = await fresh.request('POST', '/api/v1/auth/login', {
        json: { email: owner.email, password: owner.password },
        headers: { 'x-forwarded-proto': 'https' },
        token: null,
      });
      assert.equal(secure.status, 200, secure.text);
      const secureCookie = setCookie(secure, `__Host-${SESSION}`);
      assert.ok(secureCookie, 'a __Host- session cookie over HTTPS');
      assert.match(secureCookie.attributes, /;\s*Secure/i);
      assert.match(secureCookie.attributes, /;\s*HttpOnly/i);
      assert.doesNotMatch(secureCookie.attributes, /Domain=/i);

      const second = await anon(fresh, 'POST', '/api/v1/auth/register', {
        name: 'Late',
        email: `late-${hex()}@example.com`,
        password: password('late'),
      });
      assertProblem(second, 403, 'registration_closed');
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/register', {
          name: 'Late',
          email: `late-${hex()}@example.com`,
          password: password('late'),
        }),
        403,
        'registration_closed',
      );
    });

    test('with REGISTRATION=open later accounts register as agents, and nobody registers a role', async () => {
      const first = await anon(mailApp, 'POST', '/api/v1/auth/register', {
        name: 'Boss',
        email: `boss-${hex()}@example.com`,
        password: password('boss'),
      });
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.data.role, 'admin');
      const second = await anon(mailApp, 'POST', '/api/v1/auth/register', {
        name: 'Agent',
        email: `agent-${hex()}@example.com`,
        password: password('agent'),
      });
      assert.equal(second.status, 201, second.text);
      assert.equal(second.body.data.role, 'agent');
      const withRole = await anon(mailApp, 'POST', '/api/v1/auth/register', {
        name: 'Sneaky',
        email: `sneaky-${hex()}@example.com`,
        password: password('sneaky'),
        role: 'admin',
      });
      assertProblem(withRole, 422, 'validation_failed', 'role');
      const asAgent = await anon(mailApp, 'POST', '/api/v1/auth/register', {
        name: 'Sneaky',
        email: `sneaky-${hex()}@example.com`,
        password: password('sneaky'),
        role: 'agent',
      });
      assertProblem(asAgent, 422, 'validation_failed', 'role');
    });

    // ---------------------------------------------------------------- 2
    test('admins manage users as records; agents get 403; the last admin stays', async () => {
      const agent = { name: 'Agent Smith', email: `Smith-${hex()}@Example.com`, password: password('smith') };
      const created = await app.post('/api/v1/users', agent);
      assert.equal(created.status, 201, created.text);
      const data = created.body.data;
      assert.equal(data.role, 'agent', 'role defaults to agent');
      assert.equal(data.two_factor_enabled, false);
      assert.equal(data.avatar_url, null);
      for (const hidden of ['password', 'remember_token', 'two_factor_secret', 'two_factor_recovery_codes'])
        assert.equal(hidden in data, false, hidden);
      assert.ok(!created.text.includes(agent.password));
      const stored = await app.database.db
        .selectFrom('users')
        .select('password')
        .where('id', '=', Number(data.id))
        .executeTakeFirstOrThrow();
      assert.match(String(stored.password), /^\$argon2id\$/, 'stored as an argon2id hash');
      const listed = await app.get(`/api/v1/users?search=${encodeURIComponent(agent.email)}`);
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 1);
      assert.equal('password' in listed.body.data[0], false);

      const duplicate = await app.post('/api/v1/users', {
        name: 'Copy',
        email: agent.email.toUpperCase(),
        password: password('copy'),
      });
      assertProblem(duplicate, 422, 'validation_failed', 'email');
      assertProblem(
        await app.post('/api/v1/users', { name: 'Bad', email: 'not an address', password: password('bad') }),
        422,
        'validation_failed',
        'email',
      );

      const token = await tokenFor({ ...agent, id: data.id });
      const as = (method: string, path: string, json?: unknown) => app.request(method, path, { json, token });
      assertProblem(await as('GET', '/api/v1/users'), 403, 'forbidden');
      assertProblem(await as('GET', `/api/v1/users/${data.id}`), 403, 'forbidden');
      assertProblem(
        await as('POST', '/api/v1/users', { name: 'X', email: `x-${hex()}@example.com`, password: password('x') }),
        403,
        'forbidden',
      );
      assertProblem(await as('PATCH', `/api/v1/users/${data.id}`, { role: 'admin' }), 403, 'forbidden');
      assertProblem(await as('PATCH', `/api/v1/users/${app.admin.id}`, { name: 'Hijacked' }), 403, 'forbidden');
      assertProblem(await as('DELETE', `/api/v1/users/${app.admin.id}`), 403, 'forbidden');
      assertProblem(await as('PATCH', '/api/v1/me', { role: 'admin' }), 422, 'validation_failed', 'role');
      assert.equal((await as('GET', '/api/v1/me')).body.data.role, 'agent');

      const contact = await as('POST', '/api/v1/contacts', { name: 'A lead' });
      assert.equal(contact.status, 201, contact.text);
      assert.equal(contact.body.data.created_by, data.id, 'created_by is the signed-in agent');

      // The last admin can neither step down nor go.
      assertProblem(
        await app.patch(`/api/v1/users/${app.admin.id}`, { role: 'agent' }),
        422,
        'validation_failed',
        'role',
      );
      assertProblem(await app.delete(`/api/v1/users/${app.admin.id}`), 409, 'last_admin');
      assert.equal((await app.get(`/api/v1/users/${app.admin.id}`)).body.data.role, 'admin');
      // With a second admin, that one can be demoted and deleted by the first.
      const deputy = await makeUser('deputy', 'admin');
      assert.equal((await app.get(`/api/v1/users/${deputy.id}`)).body.data.role, 'admin');
      const demoted = await app.patch(`/api/v1/users/${deputy.id}`, { role: 'agent' });
      assert.equal(demoted.status, 200, demoted.text);
      assert.equal(demoted.body.data.role, 'agent');
      assert.equal((await app.delete(`/api/v1/users/${deputy.id}`)).status, 204);
    });

    test('passwords: 8 to 255 characters, not a common one, kept exactly as sent', async () => {
      const make = (pw: string) =>
        app.post('/api/v1/users', { name: 'P', email: `p-${hex()}@example.com`, password: pw });
      assertProblem(await make(ledger.used('password123', 'common password')), 422, 'validation_failed', 'password');
      assertProblem(await make(ledger.used('Qwertyuiop', 'common password')), 422, 'validation_failed', 'password');
      assertProblem(
        await make(ledger.used(`s${hex(3)}`, '7-character password')),
        422,
        'validation_failed',
        'password',
      );
      assertProblem(
        await make(ledger.used(`${'x'.repeat(250)}${hex(3)}`, '256-character password')),
        422,
        'validation_failed',
        'password',
      );
      const long = await make(ledger.used(`${'y'.repeat(249)}${hex(3)}`, '255-character password'));
      assert.equal(long.status, 201, long.text);

      const spaced: User = {
        id: 0,
        email: `spaces-${hex()}@example.com`,
        password: ledger.used(`  spaced ${hex(6)}  `, 'password with spaces'),
      };
      const created = await app.post('/api/v1/users', {
        name: 'Spaces',
        email: spaced.email,
        password: spaced.password,
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(
        (await anon(app, 'POST', '/api/v1/auth/login', { email: spaced.email, password: spaced.password })).status,
        200,
      );
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/login', { email: spaced.email, password: spaced.password.trim() }),
        401,
        'invalid_credentials',
      );
    });

    test('a bcrypt ($2y$) hash from the original service signs in and is upgraded to argon2id', async () => {
      const user: User = { id: 0, email: `legacy-${hex()}@example.com`, password: password('legacy') };
      const bcrypt = hashSync(user.password, 4).replace(/^\$2[ab]\$/, '$2y$');
      assert.match(bcrypt, /^\$2y\$04\$/);
      const now = new Date().toISOString();
      await app.database.db
        .insertInto('users')
        .values({
          name: 'Legacy',
          email: user.email,
          password: bcrypt,
          role: 'agent',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const row = () =>
        app.database.db
          .selectFrom('users')
          .select('password')
          .where('email', '=', user.email)
          .executeTakeFirstOrThrow();
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: `${user.password}!` }),
        401,
        'invalid_credentials',
      );
      assert.equal((await row()).password, bcrypt, 'a wrong password changes nothing');
      const signedIn = await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.match(String((await row()).password), /^\$argon2id\$/);
      assert.equal(
        (await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password })).status,
        200,
        'the new hash verifies',
      );
    });

    // ---------------------------------------------------------------- 3
    test('sign-in rotates the session cookie; wrong password and unknown email answer alike', async () => {
      const user = await makeUser('session');
      const browser = app.client();
      browser.cookies.set(SESSION, 'planted-by-an-attacker-aaaaaaaaaaaaaaaaaaaaaaaa');
      const first = await browser.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.data.email, user.email);
      const one = browser.cookies.get(SESSION)!;
      assert.ok(one && one !== 'planted-by-an-attacker-aaaaaaaaaaaaaaaaaaaaaaaa', 'a planted cookie is replaced');
      assert.equal((await browser.get('/api/v1/me')).status, 200);

      const again = await browser.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(again.status, 200);
      const two = browser.cookies.get(SESSION)!;
      assert.notEqual(two, one, 'signing in again issues a new session id');
      const stale = app.client();
      stale.cookies.set(SESSION, one);
      assertProblem(await stale.get('/api/v1/me'), 401, 'unauthenticated');
      assert.equal((await browser.get('/api/v1/me')).body.data.email, user.email);

      const wrong = await anon(app, 'POST', '/api/v1/auth/login', {
        email: user.email,
        password: 'not the password at all',
      });
      const unknown = await anon(app, 'POST', '/api/v1/auth/login', {
        email: `nobody-${hex()}@example.com`,
        password: 'not the password at all',
      });
      assertProblem(wrong, 401, 'invalid_credentials');
      assert.equal(unknown.status, wrong.status);
      assert.deepEqual(unknown.body, wrong.body);
      assert.equal(unknown.text, wrong.text);
      assert.equal(setCookie(wrong, SESSION), undefined, 'no session for a failed sign-in');
      const tokenWrong = await anon(app, 'POST', '/api/v1/auth/token', {
        email: user.email,
        password: 'not the password at all',
        device_name: 'x',
      });
      const tokenUnknown = await anon(app, 'POST', '/api/v1/auth/token', {
        email: `nobody-${hex()}@example.com`,
        password: 'not the password at all',
        device_name: 'x',
      });
      assert.equal(tokenUnknown.text, tokenWrong.text);
      assertProblem(tokenWrong, 401, 'invalid_credentials');
    });

    test('remember me: a 30-day cookie signs in again until sign-out', async () => {
      const user = await makeUser('remember');
      const browser = app.client();
      const signedIn = await browser.post('/api/v1/auth/login', {
        email: user.email,
        password: user.password,
        remember: true,
      });
      assert.equal(signedIn.status, 200, signedIn.text);
      const remember = setCookie(signedIn, REMEMBER);
      assert.ok(remember, 'a remember cookie is set');
      const maxAge = Number(/Max-Age=(\d+)/i.exec(remember.attributes)?.[1]);
      assert.ok(Math.abs(maxAge - 30 * 86_400) <= 60, `Max-Age is 30 days (${maxAge})`);
      assert.match(remember.attributes, /HttpOnly/i);
      assert.match(remember.attributes, /SameSite=Lax/i);
      const plain = await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(setCookie(plain, REMEMBER), undefined, 'no remember cookie unless asked');

      const oldSession = browser.cookies.get(SESSION)!;
      browser.cookies.delete(SESSION);
      const back = await browser.get('/api/v1/me');
      assert.equal(back.status, 200, 'the remember cookie alone signs in');
      assert.equal(back.body.data.email, user.email);
      const renewed = setCookie(back, SESSION);
      assert.ok(renewed && renewed.value !== oldSession, 'a new session cookie is issued');
      assert.equal((await browser.get('/api/v1/me')).status, 200);

      const copied = app.client();
      copied.cookies.set(REMEMBER, remember.value);
      assert.equal((await copied.get('/api/v1/me')).status, 200);

      assert.equal((await browser.post('/api/v1/auth/logout')).status, 204);
      assert.equal((await browser.get('/api/v1/me')).status, 401);
      const afterLogout = app.client();
      afterLogout.cookies.set(REMEMBER, remember.value);
      assertProblem(await afterLogout.get('/api/v1/me'), 401, 'unauthenticated');
    });

    test('GET /me/sessions lists sessions; DELETE /me/sessions ends the other ones', async () => {
      const user = await makeUser('sessions');
      const here = await signIn(user);
      const there = await signIn(user);
      const listed = await here.get('/api/v1/me/sessions');
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 2);
      assert.equal(listed.body.data.filter((s: { current: boolean }) => s.current).length, 1);
      for (const s of listed.body.data) {
        assert.equal(typeof s.id, 'string');
        assert.ok(
          !listed.text.includes(here.cookies.get(SESSION)!) && !listed.text.includes(there.cookies.get(SESSION)!),
          'no cookie secret in the list',
        );
        assert.match(s.created_at, /^\d{4}-\d{2}-\d{2}T/);
      }
      const token = await tokenFor(user);
      const viaToken = await app.request('GET', '/api/v1/me/sessions', { token });
      assert.equal(
        viaToken.body.data.filter((s: { current: boolean }) => s.current).length,
        0,
        'a token is no session',
      );

      assertProblem(
        await here.request('DELETE', '/api/v1/me/sessions', { json: { password: 'wrong password here' } }),
        422,
        'validation_failed',
        'password',
      );
      assert.equal((await there.get('/api/v1/me')).status, 200);
      const ended = await here.request('DELETE', '/api/v1/me/sessions', { json: { password: user.password } });
      assert.equal(ended.status, 204, ended.text);
      assertProblem(await there.get('/api/v1/me'), 401, 'unauthenticated');
      assert.equal((await here.get('/api/v1/me')).status, 200);
      const left = await here.get('/api/v1/me/sessions');
      assert.equal(left.body.data.length, 1);
      assert.equal(left.body.data[0].current, true);
    });

    // ---------------------------------------------------------------- 4
    test('personal access tokens: issued once, listed without secrets, revocable by their owner only', async () => {
      const user = await makeUser('tokens');
      const issued = await anon(app, 'POST', '/api/v1/auth/token', {
        email: user.email,
        password: user.password,
        device_name: 'laptop',
      });
      assert.equal(issued.status, 201, issued.text);
      const laptop = ledger.issued(app, issued.body.token, 'bearer token');
      assert.equal(issued.body.data.email, user.email);
      assert.equal((await me(laptop)).body.data.email, user.email);
      assertProblem(await app.request('GET', '/api/v1/me', { token: `${laptop}x` }), 401, 'unauthenticated');

      const listed = await app.request('GET', '/api/v1/me/tokens', { token: laptop });
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.data.map((t: { name: string }) => t.name),
        ['laptop'],
      );
      assert.deepEqual(Object.keys(listed.body.data[0]).sort(), [
        'abilities',
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'name',
      ]);
      assert.ok(!listed.text.includes(laptop));

      assertProblem(
        await app.request('POST', '/api/v1/me/tokens', { json: { name: 'ci' }, token: laptop }),
        422,
        'validation_failed',
        'password',
      );
      assertProblem(
        await app.request('POST', '/api/v1/me/tokens', {
          json: { name: 'ci', password: 'not it at all' },
          token: laptop,
        }),
        422,
        'validation_failed',
        'password',
      );
      const second = await app.request('POST', '/api/v1/me/tokens', {
        json: { name: 'ci', password: user.password },
        token: laptop,
      });
      assert.equal(second.status, 201, second.text);
      const ci = ledger.issued(app, second.body.token, 'bearer token');
      assert.equal(second.body.data.name, 'ci');
      assert.equal((await me(ci)).status, 200);
      const names = (await app.request('GET', '/api/v1/me/tokens', { token: ci })).body.data
        .map((t: { name: string }) => t.name)
        .sort();
      assert.deepEqual(names, ['ci', 'laptop']);

      assert.equal(
        (await app.request('DELETE', `/api/v1/me/tokens/${second.body.data.id}`, { token: laptop })).status,
        204,
      );
      assertProblem(await me(ci), 401, 'unauthenticated');
      assert.equal((await me(laptop)).status, 200);

      // Nobody revokes another user's token: try every id there is.
      const adminMore = await app.post('/api/v1/me/tokens', { name: 'admin spare', password: app.admin.password });
      assert.equal(adminMore.status, 201, adminMore.text);
      const spare = ledger.issued(app, adminMore.body.token, 'bearer token');
      const adminTokens = (await app.get('/api/v1/me/tokens')).body.data as { id: number | bigint }[];
      const own = new Set(
        (await app.request('GET', '/api/v1/me/tokens', { token: laptop })).body.data.map((t: { id: number | bigint }) =>
          String(t.id),
        ),
      );
      const top = Math.max(...adminTokens.map((t) => Number(t.id)), ...[...own].map(Number)) + 3;
      let tried = 0;
      for (let id = 1; id <= top; id++) {
        if (own.has(String(id))) continue;
        assertProblem(await app.request('DELETE', `/api/v1/me/tokens/${id}`, { token: laptop }), 404, 'not_found');
        tried++;
      }
      assert.ok(tried >= adminTokens.length);
      assertProblem(await app.request('DELETE', '/api/v1/me/tokens/not-a-number', { token: laptop }), 404, 'not_found');
      for (const t of [app.admin.token, spare])
        assert.equal((await me(t)).status, 200, "the admin's tokens still work");
      assert.equal((await app.get('/api/v1/me/tokens')).body.data.length, adminTokens.length);
    });

    // ---------------------------------------------------------------- 5
    test('two-factor: set up, confirm, challenge with rotation, no replay, recovery codes', async () => {
      const user = await makeUser('totp');
      const browser = await signIn(user);
      assertProblem(
        await browser.post('/api/v1/me/two-factor', { password: 'wrong password here' }),
        422,
        'validation_failed',
        'password',
      );
      const setup = await browser.post('/api/v1/me/two-factor', { password: user.password });
      assert.equal(setup.status, 200, setup.text);
      const secret = ledger.issued(app, setup.body.secret, 'TOTP secret');
      assert.match(secret, /^[A-Z2-7]{16,}=*$/);
      const url = new URL(setup.body.otpauth_url);
      assert.equal(url.protocol, 'otpauth:');
      assert.equal(url.host, 'totp');
      assert.equal(url.searchParams.get('secret'), secret);
      assert.match(setup.body.otpauth_url, /^otpauth:\/\/totp\/.+secret=/);
      for (const [k, v] of [
        ['digits', '6'],
        ['period', '30'],
        ['algorithm', 'SHA1'],
      ]) {
        const given = url.searchParams.get(k!);
        if (given !== null) assert.equal(given, v, k);
      }
      assert.match(setup.body.qr_svg, /^(<svg|<\?xml)/);
      assert.ok(setup.body.qr_svg.includes('<svg'));
      assert.equal((await browser.get('/api/v1/me')).body.data.two_factor_enabled, false, 'not on until confirmed');

      assertProblem(
        await browser.post('/api/v1/me/two-factor/confirm', { code: wrongCode(secret) }),
        422,
        'validation_failed',
        'code',
      );
      await waitForRoom(8);
      const now = Date.now();
      const confirmed = await browser.post('/api/v1/me/two-factor/confirm', { code: oathtool(secret, now) });
      assert.equal(confirmed.status, 200, confirmed.text);
      const codes: string[] = confirmed.body.recovery_codes;
      assert.equal(codes.length, 8);
      assert.equal(new Set(codes).size, 8);
      for (const code of codes) ledger.issued(app, code, 'recovery code');
      const mine = await browser.get('/api/v1/me');
      assert.equal(mine.body.data.two_factor_enabled, true);
      assert.match(mine.body.data.two_factor_confirmed_at, /^\d{4}-/);

      assert.equal((await browser.post('/api/v1/auth/logout')).status, 204);
      const login = await browser.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.deepEqual(login.body, { two_factor: true });
      assertProblem(await browser.get('/api/v1/me'), 401, 'unauthenticated');
      assertProblem(await browser.get('/api/v1/contacts'), 401, 'unauthenticated');
      const pending = browser.cookies.get(SESSION)!;
      assert.ok(pending);

      // The next step's code (now + 30 s) is accepted; the session id rotates again.
      const next = oathtool(secret, now + STEP_MS);
      const passed = await browser.post('/api/v1/auth/two-factor-challenge', { code: next });
      assert.equal(passed.status, 200, passed.text);
      assert.equal(passed.body.data.email, user.email);
      const full = browser.cookies.get(SESSION)!;
      assert.notEqual(full, pending, 'the session cookie rotates after the second factor');
      assert.equal((await browser.get('/api/v1/me')).status, 200);
      const old = app.client();
      old.cookies.set(SESSION, pending);
      assert.equal((await old.get('/api/v1/me')).status, 401);
      assertProblem(await old.post('/api/v1/auth/two-factor-challenge', { code: next }), 401, 'unauthenticated');

      // The same code again, on a new sign-in: refused.
      const replay = await halfSignIn(user);
      assertProblem(
        await replay.post('/api/v1/auth/two-factor-challenge', { code: next }),
        422,
        'validation_failed',
        'code',
      );
      assert.equal((await replay.get('/api/v1/me')).status, 401);
      // Two steps ahead: refused (later than any accepted step, so only the drift limit refuses it).
      await waitForRoom(5);
      assertProblem(
        await replay.post('/api/v1/auth/two-factor-challenge', { code: oathtool(secret, Date.now() + 2 * STEP_MS) }),
        422,
        'validation_failed',
        'code',
      );

      // A recovery code works once.
      const recovering = await halfSignIn(user);
      const recovered = await recovering.post('/api/v1/auth/two-factor-challenge', { recovery_code: codes[0] });
      assert.equal(recovered.status, 200, recovered.text);
      assert.equal((await recovering.get('/api/v1/me')).status, 200);
      const again = await halfSignIn(user);
      assertProblem(
        await again.post('/api/v1/auth/two-factor-challenge', { recovery_code: codes[0] }),
        422,
        'validation_failed',
        'recovery_code',
      );

      // A fresh set: the old codes stop working, the new ones work.
      assertProblem(
        await browser.post('/api/v1/me/two-factor/recovery-codes', { password: 'wrong password here' }),
        422,
        'validation_failed',
        'password',
      );
      const regenerated = await browser.post('/api/v1/me/two-factor/recovery-codes', { password: user.password });
      assert.equal(regenerated.status, 200, regenerated.text);
      const fresh: string[] = regenerated.body.recovery_codes;
      assert.equal(fresh.length, 8);
      for (const code of fresh) ledger.issued(app, code, 'recovery code');
      assert.equal(fresh.filter((c) => codes.includes(c)).length, 0);
      const withOld = await halfSignIn(user);
      assertProblem(
        await withOld.post('/api/v1/auth/two-factor-challenge', { recovery_code: codes[1] }),
        422,
        'validation_failed',
        'recovery_code',
      );
      const withNew = await withOld.post('/api/v1/auth/two-factor-challenge', { recovery_code: fresh[0] });
      assert.equal(withNew.status, 200, withNew.text);
    });

    test('two-factor with tokens: two_factor_required, a valid code, no replay; then turned off', async () => {
      const user = await makeUser('totptoken');
      const token = await tokenFor(user);
      const secret = await startTwoFactor(user, token);
      await waitForRoom(8);
      const now = Date.now();
      const confirmed = await app.request('POST', '/api/v1/me/two-factor/confirm', {
        json: { code: oathtool(secret, now) },
        token,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      for (const code of confirmed.body.recovery_codes) ledger.issued(app, code, 'recovery code');
      assertProblem(
        await app.request('POST', '/api/v1/me/two-factor', { json: { password: user.password }, token }),
        409,
        'two_factor_enabled',
      );

      const credentials = { email: user.email, password: user.password, device_name: 'phone' };
      assertProblem(await anon(app, 'POST', '/api/v1/auth/token', credentials), 401, 'two_factor_required');
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/token', { ...credentials, code: wrongCode(secret) }),
        401,
        'two_factor_invalid',
      );
      const next = oathtool(secret, now + STEP_MS);
      const issued = await anon(app, 'POST', '/api/v1/auth/token', { ...credentials, code: next });
      assert.equal(issued.status, 201, issued.text);
      const phone = ledger.issued(app, issued.body.token, 'bearer token');
      assert.equal((await me(phone)).status, 200);
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/token', { ...credentials, code: next }),
        401,
        'two_factor_invalid',
      );
      const byRecovery = await anon(app, 'POST', '/api/v1/auth/token', {
        ...credentials,
        recovery_code: confirmed.body.recovery_codes[3],
      });
      assert.equal(byRecovery.status, 201, byRecovery.text);
      ledger.issued(app, byRecovery.body.token, 'bearer token');

      assertProblem(
        await app.request('DELETE', '/api/v1/me/two-factor', {
          json: { password: 'wrong password here' },
          token: phone,
        }),
        422,
        'validation_failed',
        'password',
      );
      assert.equal(
        (await app.request('DELETE', '/api/v1/me/two-factor', { json: { password: user.password }, token: phone }))
          .status,
        204,
      );
      assert.equal((await me(phone)).body.data.two_factor_enabled, false);
      const plain = await anon(app, 'POST', '/api/v1/auth/token', credentials);
      assert.equal(plain.status, 201, 'no code needed once two-factor is off');
      ledger.issued(app, plain.body.token, 'bearer token');
      const browser = app.client();
      const login = await browser.post('/api/v1/auth/login', { email: user.email, password: user.password });
      assert.equal(login.body.data.email, user.email);
    });

    // ---------------------------------------------------------------- 6
    test('password reset by mail through a real SMTP server: single use, 60 minutes', async () => {
      const user: User = { id: 0, email: `reset-${hex()}@example.com`, password: password('reset') };
      const registered = await anon(mailApp, 'POST', '/api/v1/auth/register', { name: 'Resetter', ...user });
      assert.equal(registered.status, 201, registered.text);
      user.id = registered.body.data.id;
      const nobody = `nobody-${hex()}@example.com`;
      const resetMails = (to: string) => (m: ReceivedMail) =>
        /reset/i.test(m.subject) && m.to.includes(to.toLowerCase());

      const existing = await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email: user.email });
      const missing = await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email: nobody });
      assert.equal(existing.status, 202, existing.text);
      assert.equal(missing.status, 202);
      assert.equal(missing.text, existing.text, 'the same answer whether or not the account exists');
      const [mail] = await smtp.waitFor(resetMails(user.email));
      assert.ok(mail, 'a reset mail arrives');
      await sleep(300);
      assert.equal(smtp.mails.filter(resetMails(user.email)).length, 1, 'exactly one reset mail');
      assert.equal(smtp.mails.filter((m) => m.to.includes(nobody)).length, 0, 'no mail for an unknown address');
      assert.match(mail.headers.get('from') ?? '', /desk@example\.test/);

      const link = linkIn(mail);
      assert.equal(link.origin, 'https://desk.example.test');
      assert.equal(link.pathname, '/reset-password');
      const token = ledger.used(link.searchParams.get('token')!, 'reset token');
      assert.ok(token.length >= 32);
      assert.equal(link.searchParams.get('email'), user.email);

      assertProblem(
        await anon(mailApp, 'POST', '/api/v1/auth/reset-password', { token, email: user.email, password: 'short' }),
        422,
        'validation_failed',
        'password',
      );
      const newPassword = password('reset new');
      const reset = await anon(mailApp, 'POST', '/api/v1/auth/reset-password', {
        token,
        email: link.searchParams.get('email'),
        password: newPassword,
      });
      assert.equal(reset.status, 200, reset.text);
      assertProblem(
        await anon(mailApp, 'POST', '/api/v1/auth/reset-password', {
          token,
          email: user.email,
          password: password('reset again'),
        }),
        422,
        'validation_failed',
        'token',
      );
      assertProblem(
        await anon(mailApp, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password }),
        401,
        'invalid_credentials',
      );
      assert.equal(
        (await anon(mailApp, 'POST', '/api/v1/auth/login', { email: user.email, password: newPassword })).status,
        200,
      );

      // A token older than 60 minutes is refused.
      assert.equal((await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email: user.email })).status, 202);
      const mails = await smtp.waitFor(resetMails(user.email), { count: 2 });
      assert.equal(mails.length, 2);
      const late = ledger.used(linkIn(mails[1]!).searchParams.get('token')!, 'reset token');
      assert.notEqual(late, token);
      await mailApp.database.db
        .updateTable('password_resets')
        .set({ created_at: new Date(Date.now() - 61 * 60_000).toISOString() })
        .where('user_id', '=', Number(user.id))
        .execute();
      assertProblem(
        await anon(mailApp, 'POST', '/api/v1/auth/reset-password', {
          token: late,
          email: user.email,
          password: password('too late'),
        }),
        422,
        'validation_failed',
        'token',
      );
      assert.equal(
        (await anon(mailApp, 'POST', '/api/v1/auth/login', { email: user.email, password: newPassword })).status,
        200,
        'the password is unchanged',
      );
    });

    test('forgot-password requests are throttled per address', async () => {
      const email = `flood-${hex()}@example.com`;
      for (let i = 0; i < 5; i++)
        assert.equal((await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email })).status, 202);
      const sixth = await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email });
      assertProblem(sixth, 429, 'throttled');
      assert.match(sixth.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(
        (await anon(mailApp, 'POST', '/api/v1/auth/forgot-password', { email: `other-${hex()}@example.com` })).status,
        202,
      );
    });

    test('email verification: a signed, expiring link; tampering is refused', async () => {
      const user: User = { id: 0, email: `verify-${hex()}@example.com`, password: password('verify') };
      const browser = mailApp.client();
      const registered = await browser.post('/api/v1/auth/register', { name: 'Verifier', ...user });
      assert.equal(registered.status, 201, registered.text);
      assert.equal(registered.body.data.email_verified_at, null);
      const verifyMails = (m: ReceivedMail) => /confirm|verif/i.test(m.subject) && m.to.includes(user.email);
      await smtp.waitFor(verifyMails); // the one sent at registration
      const asked = await browser.post('/api/v1/auth/email/verification-notification');
      assert.equal(asked.status, 202, asked.text);
      const mails = await smtp.waitFor(verifyMails, { count: 2 });
      assert.equal(mails.length, 2);
      const link = linkIn(mails[1]!);
      assert.equal(link.origin, 'https://desk.example.test');
      const match = /^\/verify-email\/(\d+)\/([0-9a-f]+)$/.exec(link.pathname);
      assert.ok(match, link.pathname);
      assert.equal(match[1], String(registered.body.data.id));
      const expires = Number(link.searchParams.get('expires'));
      assert.ok(expires * 1000 > Date.now() && expires * 1000 <= Date.now() + 24 * 3_600_000, 'the link expires');
      const signature = link.searchParams.get('signature')!;
      assert.ok(signature);

      const api = (sig: string, exp = String(expires)) =>
        anon(mailApp, 'GET', `/api/v1/auth${link.pathname}?expires=${exp}&signature=${encodeURIComponent(sig)}`);
      const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
      assertProblem(await api(flipped), 403, 'invalid_signature');
      assertProblem(await api(signature, String(expires + 3600)), 403, 'invalid_signature');
      assertProblem(
        await anon(
          mailApp,
          'GET',
          `/api/v1/auth/verify-email/${match[1]}/${'0'.repeat(64)}?expires=${expires}&signature=${signature}`,
        ),
        403,
        'invalid_signature',
      );
      assert.equal((await browser.get('/api/v1/me')).body.data.email_verified_at, null);

      const verified = await api(signature);
      assert.equal(verified.status, 200, verified.text);
      assert.match(verified.body.data.email_verified_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal((await browser.get('/api/v1/me')).body.data.email_verified_at, verified.body.data.email_verified_at);
    });

    // ---------------------------------------------------------------- 7
    test('PUT /me/password ends the other sessions and tokens, keeps this one', async () => {
      const user = await makeUser('change');
      const here = await signIn(user, { remember: true });
      const there = await signIn(user);
      const remembered = app.client();
      remembered.cookies.set(REMEMBER, here.cookies.get(REMEMBER)!);
      const token = await tokenFor(user);
      assert.equal((await me(token)).status, 200);

      assertProblem(
        await here.request('PUT', '/api/v1/me/password', {
          json: { current_password: 'not my password', password: password('next') },
        }),
        422,
        'validation_failed',
        'current_password',
      );
      assertProblem(
        await here.request('PUT', '/api/v1/me/password', {
          json: { current_password: user.password, password: 'short' },
        }),
        422,
        'validation_failed',
        'password',
      );
      assert.equal((await there.get('/api/v1/me')).status, 200, 'failed changes end nothing');

      const next = password('next');
      const changed = await here.request('PUT', '/api/v1/me/password', {
        json: { current_password: user.password, password: next },
      });
      assert.equal(changed.status, 204, changed.text);
      assert.equal((await here.get('/api/v1/me')).status, 200, 'this session keeps working');
      assertProblem(await there.get('/api/v1/me'), 401, 'unauthenticated');
      assertProblem(await me(token), 401, 'unauthenticated');
      assertProblem(await remembered.get('/api/v1/me'), 401, 'unauthenticated');
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password }),
        401,
        'invalid_credentials',
      );
      await signIn({ ...user, password: next });
    });

    // ---------------------------------------------------------------- 8
    test('avatars: re-encoded to a 256-pixel WebP without metadata; wrong types and sizes refused', async () => {
      const user = await makeUser('avatar');
      const token = await tokenFor(user);
      const upload = (data: Buffer, name: string, type: string, field = 'avatar') => {
        const form = new FormData();
        form.append(field, new Blob([new Uint8Array(data)], { type }), name);
        return app.request('POST', '/api/v1/me/avatar', { body: form, token });
      };
      const fetchAvatar = async (url: string) => {
        const res = await fetch(app.url + url, { headers: { authorization: `Bearer ${token}` } });
        return { res, data: Buffer.from(await res.arrayBuffer()) };
      };

      const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: 'blue' } })
        .png()
        .toBuffer();
      const saved = await upload(png, 'me.png', 'image/png');
      assert.equal(saved.status, 200, saved.text);
      const url: string = saved.body.data.avatar_url;
      assert.match(url, new RegExp(`^/api/v1/avatars/${user.id}\\b`));
      assert.match(saved.body.data.image_name, /\.webp$/);
      const got = await fetchAvatar(url);
      assert.equal(got.res.status, 200);
      assert.equal(got.res.headers.get('content-type'), 'image/webp');
      assert.equal(got.res.headers.get('x-content-type-options'), 'nosniff');
      const meta = await sharp(got.data).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 256]);
      assert.equal(meta.exif, undefined);
      // Any signed-in user may see it; nobody anonymous.
      assert.equal(
        (await fetch(app.url + url, { headers: { authorization: `Bearer ${app.admin.token}` } })).status,
        200,
      );
      assert.equal((await fetch(app.url + url)).status, 401);

      const jpeg = await sharp({ create: { width: 300, height: 500, channels: 3, background: 'red' } })
        .jpeg()
        .withExif({ IFD0: { Copyright: 'Secret Camera Owner', ImageDescription: 'taken at home' } })
        .toBuffer();
      assert.ok((await sharp(jpeg).metadata()).exif, 'the upload carries EXIF');
      const fromJpeg = await upload(jpeg, 'photo.jpg', 'image/jpeg');
      assert.equal(fromJpeg.status, 200, fromJpeg.text);
      assert.notEqual(fromJpeg.body.data.avatar_url, url, 'a new image, a new URL');
      const second = await fetchAvatar(fromJpeg.body.data.avatar_url);
      const secondMeta = await sharp(second.data).metadata();
      assert.deepEqual([secondMeta.format, secondMeta.width, secondMeta.height], ['webp', 256, 256]);
      assert.equal(secondMeta.exif, undefined, 'EXIF is stripped');
      assert.ok(!second.data.includes('Secret Camera Owner'));

      assertProblem(
        await upload(Buffer.from('just some text, not an image\n'), 'x.png', 'image/png'),
        422,
        'validation_failed',
        'avatar',
      );
      assertProblem(await upload(png, 'me.png', 'image/png', 'picture'), 422, 'validation_failed', 'avatar');
      const svg = Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
      );
      assertProblem(await upload(svg, 'x.svg', 'image/svg+xml'), 422, 'validation_failed', 'avatar');
      const big = Buffer.concat([png, randomBytes(2 * 1024 * 1024 + 1024)]);
      assertProblem(await upload(big, 'big.png', 'image/png'), 413, 'payload_too_large');
      assert.equal(
        (await me(token)).body.data.avatar_url,
        fromJpeg.body.data.avatar_url,
        'refused uploads change nothing',
      );

      const removed = await app.request('DELETE', '/api/v1/me/avatar', { token });
      assert.equal(removed.status, 200, removed.text);
      assert.equal(removed.body.data.avatar_url, null);
      assert.equal((await fetchAvatar(fromJpeg.body.data.avatar_url)).res.status, 404);
    });

    // ---------------------------------------------------------------- 9
    test('every route that needs a sign-in answers 401 to anonymous requests', async () => {
      const openapi = await anon(app, 'GET', '/api/v1/openapi.json');
      assert.equal(openapi.status, 200);
      const routes: [string, string][] = [];
      for (const [path, operations] of Object.entries<Record<string, { security?: unknown[] }>>(openapi.body.paths)) {
        // The JSON API; HTML pages (if the document lists them) send a browser to the sign-in page instead.
        if (!path.startsWith('/api/')) continue;
        for (const [method, operation] of Object.entries(operations)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          if (Array.isArray(operation.security) && operation.security.length === 0) continue;
          routes.push([method.toUpperCase(), path]);
        }
      }
      const has = (method: string, path: string) => routes.some(([m, p]) => m === method && p === path);
      assert.ok(has('GET', '/api/v1/contacts') && has('POST', '/api/v1/contacts'));
      assert.ok(
        has('GET', '/api/v1/users/{id}') && has('PATCH', '/api/v1/users/{id}') && has('DELETE', '/api/v1/users/{id}'),
      );
      assert.ok(has('GET', '/api/v1/me/tokens') && has('POST', '/api/v1/me/tokens'));
      assert.ok(has('GET', '/api/v1/me') && has('PUT', '/api/v1/me/password'));
      assert.ok(!has('POST', '/api/v1/auth/login'), 'sign-in is public');
      for (const [method, template] of routes) {
        const path = template.replace(/\{[^}]+\}/g, '1');
        let reply: Reply;
        if (method === 'GET' || method === 'DELETE') {
          reply = await app.request(method, path, { token: null });
        } else if (path.endsWith('/avatar')) {
          const form = new FormData();
          form.append('avatar', new Blob([new Uint8Array(8)], { type: 'image/png' }), 'a.png');
          reply = await app.request(method, path, { body: form, token: null });
        } else {
          reply = await anon(app, method, path, { name: 'Probe', email: 'probe@example.com', message: 'hello' });
        }
        assert.equal(reply.status, 401, `${method} ${path}: ${reply.text}`);
        assert.equal(reply.body.code, 'unauthenticated', `${method} ${path}`);
      }
      // A bad token is a 401 too, even with a valid session cookie beside it.
      const browser = await signIn(await makeUser('mixed'));
      assertProblem(
        await browser.request('GET', '/api/v1/me', { headers: { authorization: 'Bearer lb_nope' } }),
        401,
        'unauthenticated',
      );
    });

    test('a cookie-authenticated change must come from this origin', async () => {
      const user = await makeUser('origin');
      const browser = await signIn(user);
      const post = (headers: Record<string, string>) =>
        browser.request('POST', '/api/v1/contacts', { json: { name: `Origin test ${hex()}` }, headers });
      const before = (await app.get('/api/v1/contacts?per_page=1')).body.meta.total;
      assertProblem(await post({ origin: 'http://evil.example' }), 403, 'cross_origin');
      assertProblem(await post({ 'sec-fetch-site': 'cross-site' }), 403, 'cross_origin');
      assertProblem(await post({ 'sec-fetch-site': 'same-site' }), 403, 'cross_origin');
      assert.equal((await app.get('/api/v1/contacts?per_page=1')).body.meta.total, before, 'nothing was created');
      assertProblem(
        await browser.request('POST', '/api/v1/auth/logout', { headers: { origin: 'http://evil.example' } }),
        403,
        'cross_origin',
      );
      assert.equal((await browser.get('/api/v1/me')).status, 200, 'a cross-site sign-out did not happen');

      const same = await post({ 'sec-fetch-site': 'same-origin' });
      assert.equal(same.status, 201, same.text);
      const sameOrigin = await post({ origin: app.url });
      assert.equal(sameOrigin.status, 201, sameOrigin.text);
      // Reading is fine from anywhere; a bearer token carries no ambient authority.
      assert.equal(
        (await browser.request('GET', '/api/v1/me', { headers: { 'sec-fetch-site': 'cross-site' } })).status,
        200,
      );
      const bearer = await app.request('POST', '/api/v1/contacts', {
        json: { name: 'Via token' },
        headers: { origin: 'http://evil.example' },
      });
      assert.equal(bearer.status, 201);
    });

    // ---------------------------------------------------------------- 10
    test('sign-in throttle: 5 failures a minute per email and address, then 429 with Retry-After', async () => {
      const user = await makeUser('throttled');
      const other = await makeUser('unthrottled');
      for (let i = 0; i < 5; i++) {
        assertProblem(
          await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: `wrong ${i} password` }),
          401,
          'invalid_credentials',
        );
      }
      const sixth = await anon(app, 'POST', '/api/v1/auth/login', { email: user.email, password: user.password });
      assertProblem(sixth, 429, 'throttled');
      const retry = Number(sixth.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retry) && retry >= 1 && retry <= 60,
        `Retry-After ${sixth.headers.get('retry-after')}`,
      );
      assert.equal(setCookie(sixth, SESSION), undefined);
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/login', { email: user.email.toUpperCase(), password: user.password }),
        429,
        'throttled',
      );
      assertProblem(
        await anon(app, 'POST', '/api/v1/auth/token', { email: user.email, password: user.password, device_name: 'x' }),
        429,
        'throttled',
      );
      const fine = await anon(app, 'POST', '/api/v1/auth/login', { email: other.email, password: other.password });
      assert.equal(fine.status, 200, 'another email is not throttled');
    });

    test('two-factor challenges are throttled the same way', async () => {
      const user = await makeUser('codeflood');
      const token = await tokenFor(user);
      const secret = await startTwoFactor(user, token);
      await waitForRoom(5);
      const confirmed = await app.request('POST', '/api/v1/me/two-factor/confirm', {
        json: { code: oathtool(secret, Date.now()) },
        token,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      for (const code of confirmed.body.recovery_codes) ledger.issued(app, code, 'recovery code');
      const browser = await halfSignIn(user);
      const wrong = wrongCode(secret);
      for (let i = 0; i < 5; i++)
        assertProblem(
          await browser.post('/api/v1/auth/two-factor-challenge', { code: wrong }),
          422,
          'validation_failed',
          'code',
        );
      await waitForRoom(3);
      const sixth = await browser.post('/api/v1/auth/two-factor-challenge', {
        code: oathtool(secret, Date.now() + STEP_MS),
      });
      assertProblem(sixth, 429, 'throttled');
      assert.match(sixth.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assertProblem(
        await browser.post('/api/v1/auth/two-factor-challenge', { recovery_code: confirmed.body.recovery_codes[0] }),
        429,
        'throttled',
      );
      assert.equal((await browser.get('/api/v1/me')).status, 401);
    });

    test("two-factor: the previous step's code is accepted on a sign-in after the clock moved on", async () => {
      // `drift` confirmed with the code of the step before its confirmation step; once the clock has
      // passed that step, the previous step's code is a later step than any it used.
      while (stepOf(Date.now()) <= drift.confirmedStep) await sleep(250);
      await waitForRoom(5);
      const browser = await halfSignIn(drift);
      const passed = await browser.post('/api/v1/auth/two-factor-challenge', {
        code: oathtool(drift.secret, Date.now() - STEP_MS),
      });
      assert.equal(passed.status, 200, passed.text);
      assert.equal((await browser.get('/api/v1/me')).body.data.email, drift.email);
      const again = await halfSignIn(drift);
      assertProblem(
        await again.post('/api/v1/auth/two-factor-challenge', {
          code: oathtool(drift.secret, Date.now() - 2 * STEP_MS),
        }),
        422,
        'validation_failed',
        'code',
      );
    });

    // ---------------------------------------------------------------- 11
    test('no secret shows anywhere but where it was issued; hidden fields never appear', async () => {
      assert.ok(ledger.items.length > 40, `secrets tracked: ${ledger.items.length}`);
      const problems: string[] = [];
      const hiddenKey =
        /"(password|remember_token|two_factor_secret|two_factor_recovery_codes)"\s*:\s*("|null|\{|\d|true|false)/;
      const hiddenKeyButPassword =
        /"(remember_token|two_factor_secret|two_factor_recovery_codes)"\s*:\s*("|null|\{|\d|true|false)/;
      // Session cookie secrets: each only in the response that set it.
      const sessionValues = new Map<string, number>();
      for (const each of apps) {
        for (const response of each.responses) {
          for (const m of response.matchAll(/leadbook_session=([^;\s]+)/g))
            sessionValues.set(m[1]!, (sessionValues.get(m[1]!) ?? 0) + 1);
        }
      }
      assert.ok(sessionValues.size > 10);
      for (const count of sessionValues.values())
        if (count !== 1) problems.push(`a session cookie shows in ${count} responses`);

      for (const each of apps) {
        each.responses.forEach((response, index) => {
          for (const secret of ledger.items) {
            if (!response.includes(secret.value)) continue;
            if (secret.issuedBy?.app === each && secret.issuedBy.index === index) continue;
            problems.push(`${secret.what} shows in response #${index}: ${response.slice(0, 200)}`);
          }
          // The OpenAPI document names "password" as an input property; no other response may.
          const isOpenApi = /"openapi"\s*:\s*"3\./.test(response);
          if ((isOpenApi ? hiddenKeyButPassword : hiddenKey).test(response))
            problems.push(`a hidden field in response #${index}: ${response.slice(0, 300)}`);
          for (const [value] of sessionValues)
            if (response.includes(value) && !response.includes(`leadbook_session=${value}`))
              problems.push(`a session secret in a body #${index}`);
        });
        assert.ok(each.logs.length > 0);
        for (const line of each.logs) {
          for (const secret of ledger.items)
            if (line.includes(secret.value)) problems.push(`${secret.what} in a log line: ${line.slice(0, 300)}`);
          for (const [value] of sessionValues)
            if (line.includes(value)) problems.push(`a session secret in a log line: ${line.slice(0, 300)}`);
          if (hiddenKey.test(line)) problems.push(`a hidden field in a log line: ${line.slice(0, 300)}`);
        }
      }
      // Everything issued was really seen in its response, once.
      for (const secret of ledger.items) {
        if (!secret.issuedBy) continue;
        assert.ok(secret.issuedBy.app.responses[secret.issuedBy.index]?.includes(secret.value), secret.what);
      }
      assert.deepEqual(problems, []);
    });
  });
}
