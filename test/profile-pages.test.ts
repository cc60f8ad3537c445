// The profile pages over plain HTTP, as a browser without JavaScript uses
// them: forms posted with their CSRF token, answered with a 303 and a flash,
// or with the page again (422) keeping what was typed. On both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import sharp from 'sharp';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

const csrfOf = (html: string) => {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  assert.ok(match, 'the page has a CSRF token');
  return match[1]!;
};

const form = (values: Record<string, string>) => ({
  body: new URLSearchParams(values).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** As if the password was confirmed on sign-in long ago: the forms must ask for it again. */
const forgetConfirmation = (app: TestApp) =>
  app.database.db.updateTable('sessions').set({ password_confirmed_at: null }).execute();

/** GETs the page for a fresh token, then posts the form with it. */
async function submit(client: Client, page: string, action: string, values: Record<string, string>) {
  const shown = await client.get(page);
  assert.equal(shown.status, 200, shown.text);
  return client.request('POST', action, form({ ...values, _csrf: csrfOf(shown.text) }));
}

async function signIn(app: TestApp, who: { email: string; password: string } = app.admin): Promise<Client> {
  const client = app.client();
  const signedIn = await submit(client, '/login', '/login', { email: who.email, password: who.password });
  assert.equal(signedIn.status, 303, signedIn.text);
  return client;
}

for (const dialect of DIALECTS) {
  describe(`profile pages (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(async () => {
      await app?.close();
    });

    test('a bad profile field comes back as 422 with the typed values kept; a good one is saved', async () => {
      const client = await signIn(app);
      const refused = await submit(client, '/profile', '/profile', {
        name: 'Typed <Name>',
        email: 'not-an-email',
        city: 'Lisbon',
      });
      assert.equal(refused.status, 422);
      assert.match(refused.text, /<input id="field-name" name="name" type="text" value="Typed &lt;Name>"/);
      assert.match(refused.text, /value="not-an-email"/);
      assert.match(refused.text, /value="Lisbon"/);
      assert.match(refused.text, /id="field-email"[^>]*aria-invalid="true"[^>]*aria-describedby="field-email-error"/);
      assert.match(refused.text, /<p class="field-error" id="field-email-error">[^<]+<\/p>/);
      assert.equal((await app.get('/api/v1/me')).body.data.name, 'Admin', 'nothing was written');

      const saved = await submit(client, '/profile', '/profile', {
        name: 'Ada Lovelace',
        email: app.admin.email,
        city: 'London',
      });
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.get('location'), '/profile');
      const page = await client.get('/profile');
      assert.match(page.text, /Your profile was saved\./);
      assert.match(page.text, /value="Ada Lovelace"/);
      const me = (await app.get('/api/v1/me')).body.data;
      assert.equal(me.name, 'Ada Lovelace');
      assert.equal(me.city, 'London');
    });

    test('a new token is shown once, works, and stops working when revoked', async () => {
      const client = await signIn(app);
      const created = await submit(client, '/profile', '/profile/tokens', {
        name: 'CRM sync',
        password: app.admin.password,
      });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.headers.get('cache-control'), 'no-store');
      const token = /id="new-token">(lb_[^<]+)</.exec(created.text)?.[1];
      assert.ok(token, 'the token is on the page');
      assert.equal((await app.request('GET', '/api/v1/me', { token })).status, 200);

      const profile = await client.get('/profile');
      assert.ok(profile.text.includes('CRM sync'), 'the token is listed by name');
      assert.ok(!profile.text.includes(token), 'and never shown again');
      const id = /action="\/profile\/tokens\/(\d+)\/delete"/.exec(profile.text)?.[1];
      assert.ok(id);

      const revoked = await client.request(
        'POST',
        `/profile/tokens/${id}/delete`,
        form({ _csrf: csrfOf(profile.text) }),
      );
      assert.equal(revoked.status, 303);
      assert.match((await client.get('/profile')).text, /The token “CRM sync” was revoked/);
      assert.equal((await app.request('GET', '/api/v1/me', { token })).status, 401);
    });

    test('a token without a name is refused next to the field', async () => {
      const client = await signIn(app);
      const refused = await submit(client, '/profile', '/profile/tokens', { name: '' });
      assert.equal(refused.status, 422);
      assert.match(refused.text, /id="token-name-error">is required</);
    });

    test('a form without its CSRF token is refused with 403 and changes nothing', async () => {
      const client = await signIn(app);
      await client.get('/profile');
      const urlencoded = await client.request('POST', '/profile', form({ name: 'Mallory' }));
      assert.equal(urlencoded.status, 403);
      assert.match(urlencoded.text, /This form has expired/);
      const upload = new FormData();
      upload.append('avatar', new Blob([Buffer.from('whatever')], { type: 'image/png' }), 'a.png');
      assert.equal((await client.request('POST', '/profile/avatar', { body: upload })).status, 403);
      assert.notEqual((await app.get('/api/v1/me')).body.data.name, 'Mallory');
    });

    test('an avatar is uploaded with the token in a field before the file (never in the address); a non-image gets a message on the page', async () => {
      const form =
        /<form method="post" action="\/profile\/avatar" enctype="multipart\/form-data"[^>]*>([\s\S]*?)<\/form>/.exec(
          (await (await signIn(app)).get('/profile')).text,
        );
      assert.ok(form, 'the avatar form posts to an address without its token');
      assert.deepEqual(
        [...form[1]!.matchAll(/<input[^>]* name="([^"]+)"/g)].map((m) => m[1]),
        ['_csrf', 'avatar'],
        'the token comes before the file',
      );
      const client = await signIn(app);
      const token = csrfOf((await client.get('/profile')).text);
      const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#1f5fbf' } })
        .png()
        .toBuffer();
      const good = new FormData();
      good.append('_csrf', token);
      good.append('avatar', new Blob([png], { type: 'image/png' }), 'me.png');
      const saved = await client.request('POST', '/profile/avatar', { body: good });
      assert.equal(saved.status, 303, saved.text);
      assert.match((await app.get('/api/v1/me')).body.data.avatar_url, /^\/api\/v1\/avatars\//);

      const bad = new FormData();
      bad.append('_csrf', token);
      bad.append('avatar', new Blob([Buffer.from('not an image')], { type: 'image/png' }), 'notes.png');
      const refused = await client.request('POST', '/profile/avatar', { body: bad });
      assert.equal(refused.status, 422);
      assert.match(refused.headers.get('content-type') ?? '', /text\/html/);
      assert.match(refused.text, /id="avatar-file-error">must be a JPEG, PNG, WebP or GIF image</);
    });

    test('two-factor: QR and key once, a wrong code is refused on the page, the right one shows 8 recovery codes', async () => {
      const client = await signIn(app);
      const setup = await submit(client, '/profile', '/profile/two-factor', { password: app.admin.password });
      assert.equal(setup.status, 200, setup.text);
      assert.match(setup.text, /<div class="qr" role="img" aria-label="QR code for your authenticator app"><svg /);
      const secret = /id="two-factor-secret">([A-Z2-7]+)</.exec(setup.text)?.[1];
      assert.ok(secret);
      const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });

      const wrong = await client.request(
        'POST',
        '/profile/two-factor/confirm',
        form({ code: 'abcdef', _csrf: csrfOf(setup.text) }),
      );
      assert.equal(wrong.status, 422);
      assert.match(wrong.text, /id="confirm-code-error">is not valid/);
      assert.match(wrong.text, /Start again/, 'the unfinished set-up is offered again');

      const confirmed = await client.request(
        'POST',
        '/profile/two-factor/confirm',
        form({ code: totp.generate(), _csrf: csrfOf(wrong.text) }),
      );
      assert.equal(confirmed.status, 200, confirmed.text);
      const list = /<ul class="codes" id="recovery-codes">(.*?)<\/ul>/.exec(confirmed.text)?.[1] ?? '';
      assert.equal(list.match(/<li>/g)?.length, 8);
      assert.match(
        confirmed.text,
        /<button type="button" class="button-secondary" data-copy="recovery-codes" hidden>Copy<\/button>/,
      );
      assert.match(
        confirmed.text,
        /href="data:text\/plain;charset=utf-8,[^"]+" download="leadbook-recovery-codes.txt"/,
      );
      assert.equal((await app.get('/api/v1/me')).body.data.two_factor_enabled, true);

      await forgetConfirmation(app);
      const profile = await client.get('/profile');
      assert.match(profile.text, /id="regenerate-password"/, 'the password is asked again');
      const unconfirmed = await client.request(
        'POST',
        '/profile/two-factor/recovery-codes',
        form({ _csrf: csrfOf(profile.text) }),
      );
      assert.equal(unconfirmed.status, 422);
      assert.match(unconfirmed.text, /id="regenerate-password-error">is required to confirm it is you</);
      const wrongPassword = await client.request(
        'POST',
        '/profile/two-factor/disable',
        form({ password: 'not my password', _csrf: csrfOf(profile.text) }),
      );
      assert.equal(wrongPassword.status, 422);
      assert.match(wrongPassword.text, /id="disable-password-error">is not correct</);
      const disabled = await client.request(
        'POST',
        '/profile/two-factor/disable',
        form({ password: app.admin.password, _csrf: csrfOf(profile.text) }),
      );
      assert.equal(disabled.status, 303);
      assert.equal((await app.get('/api/v1/me')).body.data.two_factor_enabled, false);
    });

    test('a new email address needs the current password unless it was confirmed lately', async () => {
      const client = await signIn(app);
      await forgetConfirmation(app);
      const asked = await submit(client, '/profile', '/profile', { name: 'Ada Lovelace', email: 'ada@example.com' });
      assert.equal(asked.status, 422);
      assert.match(asked.text, /id="information-password-error">is required to confirm it is you</);
      assert.match(asked.text, /value="ada@example.com"/);
      const changed = await submit(client, '/profile', '/profile', {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        password: app.admin.password,
      });
      assert.equal(changed.status, 303, changed.text);
      const me = (await app.get('/api/v1/me')).body.data;
      assert.equal(me.email, 'ada@example.com');
      assert.equal(me.email_verified_at, null);
      app.admin.email = 'ada@example.com'; // the next tests sign in with it
    });

    test('the last admin cannot delete the account; an agent can, and is signed out', async () => {
      const admin = await signIn(app);
      const refused = await submit(admin, '/profile', '/profile/delete', { password: app.admin.password });
      assert.equal(refused.status, 409);
      assert.match(refused.text, /The last admin cannot be deleted/);

      const agent = { email: `agent-${dialect}@example.com`, password: 'agent password 123' };
      assert.equal((await app.post('/api/v1/users', { name: 'Agent', ...agent })).status, 201);
      const client = await signIn(app, agent);
      const empty = await submit(client, '/profile', '/profile/delete', { password: '' });
      assert.equal(empty.status, 422, 'deleting always takes the password typed');
      const deleted = await submit(client, '/profile', '/profile/delete', { password: agent.password });
      assert.equal(deleted.status, 303);
      assert.equal(deleted.headers.get('location'), '/login');
      assert.ok(
        ![...client.cookies.keys()].some((k) => k.includes('leadbook_session')),
        'the session cookie is cleared',
      );
      const later = await client.get('/profile');
      assert.equal(later.status, 303);
      assert.match(later.headers.get('location') ?? '', /^\/login/);
    });
  });
}
