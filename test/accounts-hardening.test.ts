// Account protections that take setup to reach: the lock after 100 failures in
// a row (whatever the addresses), cookies over HTTPS behind a trusted proxy,
// the idle limit of sessions, and the 3-hour password confirmation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { mailsOf } from './reliability/helpers/security.ts';

/** The newest mail the app wrote to DATA_DIR/mail (no SMTP_URL), and its link. */
function lastMailLink(app: TestApp): string {
  const link = mailsOf(app).at(-1)?.link;
  assert.ok(link, 'the mail has a link');
  return link.href;
}

async function until<T>(check: () => T | undefined, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const dialect of DIALECTS) {
  describe(`account hardening (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect, { env: { TRUST_PROXY: 'true' } });
    });
    after(() => app.close());

    const login = (email: string, password: string, headers: Record<string, string> = {}) =>
      app.request('POST', '/api/v1/auth/login', { json: { email, password }, token: null, headers });

    test('100 failures in a row lock the account until a password reset, from any address', async () => {
      const email = 'locked@example.com';
      const password = 'the right pass phrase';
      assert.equal((await app.post('/api/v1/users', { name: 'Locked', email, password })).status, 201);
      // Spread over many addresses, so the per-address throttle never stops them.
      for (let i = 0; i < 100; i++) {
        const reply = await login(email, 'a wrong pass phrase', { 'x-forwarded-for': `198.51.100.${i}` });
        assert.equal(reply.status, 401, `failure ${i + 1}`);
        assert.equal(reply.body.code, 'invalid_credentials');
      }
      const locked = await login(email, password, { 'x-forwarded-for': '203.0.113.7' });
      assert.equal(locked.status, 401);
      assert.equal(locked.body.code, 'password_reset_required', 'the right password learns why');

      const asked = await app.request('POST', '/api/v1/auth/forgot-password', { json: { email }, token: null });
      assert.equal(asked.status, 202);
      const link = new URL(
        await until(() => {
          try {
            return lastMailLink(app).includes('reset-password') ? lastMailLink(app) : undefined;
          } catch {
            return undefined;
          }
        }),
      );
      const reset = await app.request('POST', '/api/v1/auth/reset-password', {
        json: {
          token: link.searchParams.get('token'),
          email: link.searchParams.get('email'),
          password: 'a brand new pass phrase',
        },
        token: null,
      });
      assert.equal(reset.status, 200, reset.text);
      assert.equal(
        (await login(email, 'a brand new pass phrase', { 'x-forwarded-for': '203.0.113.8' })).status,
        200,
        'the reset unlocks it',
      );
    });

    test('behind a trusted HTTPS proxy the cookies are Secure and __Host- prefixed', async () => {
      const reply = await login(app.admin.email, app.admin.password, {
        'x-forwarded-proto': 'https',
        'x-forwarded-for': '203.0.113.9',
      });
      assert.equal(reply.status, 200);
      const cookie = reply.headers.getSetCookie().find((c) => c.startsWith('__Host-leadbook_session='));
      assert.ok(cookie, reply.headers.getSetCookie().join(' | '));
      for (const flag of [/;\s*Secure/i, /;\s*HttpOnly/i, /;\s*SameSite=Lax/i, /;\s*Path=\//i])
        assert.match(cookie, flag);
      assert.doesNotMatch(cookie, /Domain=/i, '__Host- cookies carry no Domain');
      const plain = await login(app.admin.email, app.admin.password, { 'x-forwarded-for': '203.0.113.9' });
      const plainCookie = plain.headers.getSetCookie().find((c) => c.startsWith('leadbook_session='));
      assert.ok(plainCookie, 'a plain session cookie');
      assert.doesNotMatch(plainCookie, /Secure/i, 'plain http: no Secure flag');
    });

    test('a session idle past its limit ends; a confirmed password covers sensitive calls only for a while', async () => {
      const client = app.client();
      assert.equal(
        (await client.post('/api/v1/auth/login', { email: app.admin.email, password: app.admin.password })).status,
        200,
      );
      // Signing in is no confirmation (CONTRACT.md, Roles): a fresh session alone cannot make a token.
      const fresh = await client.post('/api/v1/me/tokens', { name: 'fresh sign-in' });
      assert.equal(fresh.status, 422);
      assert.ok(fresh.body.errors.password, 'names password');
      assert.equal((await client.post('/api/v1/me/confirm-password', { password: app.admin.password })).status, 204);
      assert.equal((await client.post('/api/v1/me/tokens', { name: 'no password needed' })).status, 201);
      const { db } = app.database;
      const old = new Date(Date.now() - 181 * 60_000).toISOString();
      await db.updateTable('sessions').set({ password_confirmed_at: old }).execute();
      const needs = await client.post('/api/v1/me/tokens', { name: 'needs it now' });
      assert.equal(needs.status, 422);
      assert.ok(needs.body.errors.password, 'names password');
      assert.equal((await client.post('/api/v1/me/confirm-password', { password: app.admin.password })).status, 204);
      assert.equal((await client.post('/api/v1/me/tokens', { name: 'confirmed again' })).status, 201);

      await db
        .updateTable('sessions')
        .set({ last_seen_at: new Date(Date.now() - 121 * 60_000).toISOString() })
        .execute();
      assert.equal((await client.get('/api/v1/me')).status, 401, 'idle for over 2 hours');
    });
  });
}
