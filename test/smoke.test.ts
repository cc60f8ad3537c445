import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

for (const dialect of DIALECTS) {
  describe(`health (${dialect})`, () => {
    let app: TestApp;
    before(async () => { app = await startApp(dialect); });
    after(() => app.close());

    test('healthz and readyz answer', async () => {
      assert.deepEqual((await app.get('/healthz')).body, { status: 'ok' });
      assert.deepEqual((await app.get('/readyz')).body, { status: 'ready' });
    });
  });
}
