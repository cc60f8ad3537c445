import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

for (const dialect of DIALECTS) {
  describe(`health (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('healthz and readyz answer', async () => {
      assert.deepEqual((await app.get('/healthz')).body, { status: 'ok' });
      assert.deepEqual((await app.get('/readyz')).body, { status: 'ready' });
    });

    test('an unknown address is a page for a browser and problem+json for a program', async () => {
      const page = await app.request('GET', '/no-such-page', {
        headers: { accept: 'text/html,application/xhtml+xml' },
        token: null,
      });
      assert.equal(page.status, 404);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.text, /This page does not exist/);
      const api = await app.request('GET', '/api/v1/no-such-route', { headers: { accept: 'text/html' }, token: null });
      assert.equal(api.status, 404);
      assert.match(api.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });
  });
}
