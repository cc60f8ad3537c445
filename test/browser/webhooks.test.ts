// Webhooks in Chromium, at 1280 and 390 px: an admin finds them from Settings, adds one with the form, and is
// shown its secret once on a page of its own (not cached, not in the address or a cookie); the webhook's page
// sends a test event, which the receiver accepts with that secret (standardwebhooks), and lists the delivery;
// rotating the secret shows the new one once. Axe finds no serious or critical violation.
// LEADBOOK_SHOTS=dir saves screenshots there (webhook-*.png).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { type Receiver, startReceiver, until } from '../helpers/webhook-receiver.ts';
import { assertClean, checkA11y, launchBrowser, newUser, signIn, submit, visit } from './helpers.ts';

const SHOTS = process.env.LEADBOOK_SHOTS;

describe('webhook pages in Chromium', { concurrency: false }, () => {
  let app: TestApp;
  let browser: Browser;
  let to: Receiver;

  before(async () => {
    app = await startApp(DIALECTS[0]!, {
      env: { LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_CONCURRENCY: '16', SCHEDULER_TICK_MS: '100' },
    });
    browser = await launchBrowser();
    to = await startReceiver();
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await to?.close();
  });

  for (const width of [1280, 390]) {
    test(`add a webhook, copy its secret, send a test event, rotate the secret at ${width} px`, async () => {
      const { context, page } = await newUser(browser, app.url, { viewport: { width, height: 900 } });
      const step = async (name: string) => {
        if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `webhook-${name}-${width}.png`), fullPage: true });
        if (width === 1280) await checkA11y(page, `${name} at ${width} px`);
        assertClean(page, `${name} at ${width} px`);
      };
      try {
        await signIn(page, app.admin.email, app.admin.password);
        await visit(page, '/settings');
        await Promise.all([page.waitForURL(/\/webhooks$/), page.getByRole('link', { name: 'Webhooks' }).click()]);
        await visit(page, '/webhooks/new');
        await page.getByLabel('URL').fill(to.url);
        await page.getByLabel('Events').fill('contact.created\ninquiry.assigned');
        await page.getByLabel('Description').fill(`Chat channel ${width}`);
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/webhooks'),
          submit(page, /Create|Save/),
        ]);
        assert.equal(answer.headers()['cache-control'], 'no-store');
        const secret = await page.locator('input.secret').inputValue();
        assert.match(secret, /^whsec_/);
        assert.equal(page.url().includes('whsec_'), false);
        assert.equal(JSON.stringify(await context.cookies()).includes(secret.slice(6, 20)), false);
        await step('1-secret');
        to.secrets.splice(0, to.secrets.length, secret);

        await Promise.all([page.waitForURL(/\/webhooks\/\d+$/), page.getByRole('link', { name: 'Done' }).click()]);
        assert.equal((await page.content()).includes(secret.slice(6)), false);
        await submit(page, 'Send a test event');
        await page.getByText('A test event is on its way').waitFor();
        await until(
          () => to.accepted.some((d) => d.event.data.message),
          20_000,
          () => 'the test event',
        );
        assert.equal(to.badSignatures.length, 0);
        for (let i = 0; i < 50 && !(await page.getByText('succeeded').count()); i++) {
          await new Promise((r) => setTimeout(r, 100));
          await page.reload();
        }
        await page.locator('table').getByText('webhook.test').waitFor();
        await page.locator('table').getByText('succeeded').waitFor();
        await step('2-deliveries');

        await submit(page, 'Rotate the secret');
        const rotated = await page.locator('input.secret').inputValue();
        assert.match(rotated, /^whsec_/);
        assert.notEqual(rotated, secret);
        await page.getByText('The old secret signs too until').waitFor();
        await step('3-rotated');
      } finally {
        await context.close();
      }
    });
  }
});
