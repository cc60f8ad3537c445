// One account policy behind both front doors: the JSON API and the pages are
// adapters over the same account actions, so where they could drift apart
// (rate-limit keys, ending sign-ins, password rules) they must agree. Each
// test crosses doors: what one door did, the other one sees. On both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { submit } from './reliability/helpers/security.ts';

const unescapeHtml = (html: string) => html.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');

let serial = 0;

for (const dialect of DIALECTS) {
  describe(`one account policy behind both doors (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(async () => {
      await app?.close();
    });

    async function makeUser(label: string): Promise<{ email: string; password: string }> {
      const who = { email: `${label}-${++serial}@example.com`, password: `the ${label} pass phrase` };
      const created = await app.post('/api/v1/users', { name: label, ...who });
      assert.equal(created.status, 201, created.text);
      return who;
    }

    const apiLogin = (client: Client, who: { email: string; password: string }, remember = false) =>
      client.post('/api/v1/auth/login', { email: who.email, password: who.password, remember });
    const pageLogin = (client: Client, who: { email: string; password: string }) =>
      submit(client, '/login', '/login', { email: who.email, password: who.password });

    /** A browser that holds only the given remember-me cookie (its session cookie lost, as after a restart). */
    function rememberedOnly(cookie: string): Client {
      const client = app.client();
      client.cookies.set('leadbook_remember', cookie);
      return client;
    }

    test('failed sign-ins through the API throttle the sign-in page for that email, and the other way round', async () => {
      const first = await makeUser('throttled-api');
      const api = app.client();
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await apiLogin(api, { ...first, password: 'not the password' })).status,
          401,
          `API failure ${i + 1}`,
        );
      const page = await pageLogin(app.client(), first);
      assert.equal(page.status, 429, 'the page counts the API failures: even the right password is refused');
      assert.match(page.text, /Too many attempts/);

      const second = await makeUser('throttled-page');
      for (let i = 0; i < 5; i++) {
        assert.equal(
          (await pageLogin(app.client(), { ...second, password: 'not the password' })).status,
          401,
          `page failure ${i + 1}`,
        );
      }
      const token = await app.request('POST', '/api/v1/auth/token', {
        json: { ...second, device_name: 'cli' },
        token: null,
      });
      assert.equal(token.status, 429, 'the token endpoint counts the page failures too');
      assert.ok(Number(token.headers.get('retry-after')) >= 1);

      // The count is per email: another account on the same address signs in.
      const other = await makeUser('unthrottled');
      assert.equal((await pageLogin(app.client(), other)).status, 303);
    });

    test('reset mails asked for through the API count against the page, and the other way round', async () => {
      const who = await makeUser('reset-mails');
      for (let i = 0; i < 5; i++) {
        assert.equal(
          (await app.request('POST', '/api/v1/auth/forgot-password', { json: { email: who.email }, token: null }))
            .status,
          202,
          `ask ${i + 1}`,
        );
      }
      const page = await submit(app.client(), '/forgot-password', '/forgot-password', { email: who.email });
      assert.equal(page.status, 429, 'the sixth ask, through the page, is refused');
      const again = await app.request('POST', '/api/v1/auth/forgot-password', {
        json: { email: who.email },
        token: null,
      });
      assert.equal(again.status, 429);
    });

    for (const door of ['api', 'page'] as const) {
      test(`a password changed through the ${door} ends every other sign-in of the user: sessions, remember-me, tokens`, async () => {
        const who = await makeUser(`change-${door}`);
        const elsewhere = app.client();
        assert.equal((await apiLogin(elsewhere, who, true)).status, 200);
        const remembered = elsewhere.cookies.get('leadbook_remember');
        assert.ok(remembered, 'remember me set its cookie');
        const minted = await app.request('POST', '/api/v1/auth/token', {
          json: { ...who, device_name: 'laptop' },
          token: null,
        });
        assert.equal(minted.status, 201, minted.text);
        const token = minted.body.token as string;
        // Before the change each way in works: the test below can fail.
        assert.equal((await elsewhere.get('/api/v1/me')).status, 200);
        assert.equal(
          (await rememberedOnly(remembered).get('/api/v1/me')).status,
          200,
          'the remember cookie alone signs in',
        );
        assert.equal((await app.request('GET', '/api/v1/me', { token })).status, 200);

        const here = app.client();
        const newPassword = `a new ${door} pass phrase`;
        if (door === 'api') {
          assert.equal((await apiLogin(here, who)).status, 200);
          const changed = await here.request('PUT', '/api/v1/me/password', {
            json: { current_password: who.password, password: newPassword },
          });
          assert.equal(changed.status, 204, changed.text);
        } else {
          assert.equal((await pageLogin(here, who)).status, 303);
          const changed = await submit(here, '/profile', '/profile/password', {
            current_password: who.password,
            password: newPassword,
          });
          assert.equal(changed.status, 303, changed.text);
        }

        assert.equal((await elsewhere.get('/api/v1/me')).status, 401, 'the other session ended');
        assert.equal(
          (await rememberedOnly(remembered).get('/api/v1/me')).status,
          401,
          'the remembered device is forgotten',
        );
        assert.equal((await app.request('GET', '/api/v1/me', { token })).status, 401, 'the token is revoked');
        assert.equal((await here.get('/api/v1/me')).status, 200, 'the session that changed it stays');
        assert.equal((await apiLogin(app.client(), { ...who, password: newPassword })).status, 200);
      });

      test(`signing out other sessions through the ${door} ends them and remember-me alike, and keeps API tokens`, async () => {
        const who = await makeUser(`others-${door}`);
        const elsewhere = app.client();
        assert.equal((await apiLogin(elsewhere, who, true)).status, 200);
        const remembered = elsewhere.cookies.get('leadbook_remember')!;
        const minted = await app.request('POST', '/api/v1/auth/token', {
          json: { ...who, device_name: 'laptop' },
          token: null,
        });
        const token = minted.body.token as string;
        assert.equal((await rememberedOnly(remembered).get('/api/v1/me')).status, 200);

        const here = app.client();
        if (door === 'api') {
          assert.equal((await apiLogin(here, who)).status, 200);
          assert.equal(
            (await here.request('DELETE', '/api/v1/me/sessions', { json: { password: who.password } })).status,
            204,
          );
        } else {
          assert.equal((await pageLogin(here, who)).status, 303);
          const ended = await submit(here, '/profile', '/profile/sessions/delete', { password: who.password });
          assert.equal(ended.status, 303, ended.text);
        }

        assert.equal((await elsewhere.get('/api/v1/me')).status, 401, 'the other session ended');
        assert.equal(
          (await rememberedOnly(remembered).get('/api/v1/me')).status,
          401,
          'the remembered device is forgotten',
        );
        assert.equal(
          (await app.request('GET', '/api/v1/me', { token })).status,
          200,
          'API tokens are managed on their own',
        );
        assert.equal((await here.get('/api/v1/me')).status, 200, 'this session stays');
      });
    }

    test('a weak new password gets the same message through both doors, for a reset link and a password change', async () => {
      const who = await makeUser('rules');
      for (const weak of ['short', 'password123']) {
        const api = await app.request('POST', '/api/v1/auth/reset-password', {
          json: { token: 'not a real token', email: who.email, password: weak },
          token: null,
        });
        assert.equal(api.status, 422, api.text);
        const message = (api.body.errors.password as string[])[0]!;
        assert.ok(message, 'the API names the password rule');
        assert.equal(api.body.errors.token, undefined, 'the rule is said before the token is spent');

        const page = await submit(
          app.client(),
          `/reset-password?token=x&email=${encodeURIComponent(who.email)}`,
          '/reset-password',
          { token: 'not a real token', email: who.email, password: weak },
        );
        assert.equal(page.status, 422);
        assert.ok(unescapeHtml(page.text).includes(message), `the page says "${message}" too`);

        const apiClient = app.client();
        assert.equal((await apiLogin(apiClient, who)).status, 200);
        const change = await apiClient.request('PUT', '/api/v1/me/password', {
          json: { current_password: who.password, password: weak },
        });
        assert.equal(change.status, 422);
        assert.deepEqual(change.body.errors.password, [message], 'a password change says the same');

        const pageClient = app.client();
        assert.equal((await pageLogin(pageClient, who)).status, 303);
        const pageChange = await submit(pageClient, '/profile', '/profile/password', {
          current_password: who.password,
          password: weak,
        });
        assert.equal(pageChange.status, 422);
        assert.ok(unescapeHtml(pageChange.text).includes(message), `the profile page says "${message}" too`);
      }
    });

    test('weak passwords sent to a reset link are not counted as failed attempts; wrong tokens are, through either door', async () => {
      const who = await makeUser('link-count');
      for (let i = 0; i < 6; i++) {
        const weak = await app.request('POST', '/api/v1/auth/reset-password', {
          json: { token: 'nope', email: who.email, password: 'short' },
          token: null,
        });
        assert.equal(weak.status, 422, `weak ${i + 1}: refused by the rule, never throttled`);
      }
      for (let i = 0; i < 5; i++) {
        const wrong = await app.request('POST', '/api/v1/auth/reset-password', {
          json: { token: 'nope', email: who.email, password: 'a long enough pass phrase' },
          token: null,
        });
        assert.equal(wrong.status, 422, `wrong token ${i + 1}`);
        assert.ok(wrong.body.errors.token);
      }
      const page = await submit(
        app.client(),
        `/reset-password?token=nope&email=${encodeURIComponent(who.email)}`,
        '/reset-password',
        { token: 'nope', email: who.email, password: 'a long enough pass phrase' },
      );
      assert.match(unescapeHtml(page.text), /Too many attempts/, 'the page is throttled by the API failures');
    });
  });
}
