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

    test('a request Node cannot read (an address past 16 KiB) is problem+json too, before any route', async () => {
      const huge = await app.request('GET', `/api/v1/contacts?search=${'x'.repeat(20_000)}`);
      assert.equal(huge.status, 431);
      assert.match(huge.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(huge.body.status, 431);
      assert.equal(huge.body.code, 'headers_too_large');
      assert.deepEqual((await app.get('/healthz')).body, { status: 'ok' }, 'the server goes on');
    });
  });
}
