// Bulk actions on the inquiries list in Chromium: 250 inquiries made through the API, "select all on this page",
// then "Select all 250 matching", assigned to a teammate from the bar with a progress bar and a message at the end;
// the API then shows each of the 250 assigned, each with its activity entry. A deletion asks in the bar with the
// count and offers the trash. axe with the bar open; screenshots at 1280 and 390 px in /tmp/shots/bulk-*.png.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import type { Json } from '../helpers/json.ts';
import { type Teammate, teammate } from '../helpers/team.ts';
import { assertClean, checkA11y, launchBrowser, newUser, signIn, visit } from './helpers.ts';

const SHOTS = '/tmp/shots';
const MANY = 250;

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
  fs.mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`bulk actions in Chromium on ${dialect}`, { concurrency: false }, () => {
    let failed = '';
    const step = (name: string, fn: (t: TestContext) => Promise<void>) =>
      test(name, async (t) => {
        if (failed) return t.skip(`an earlier step failed: ${failed}`);
        try {
          await fn(t);
        } catch (error) {
          failed = name;
          throw error;
        }
      });
    let app: TestApp;
    let tess: Teammate;
    let context: BrowserContext;
    let page: Page;
    // The pages are the same HTML on either database: axe runs on the first only.
    const audit = dialect === DIALECTS[0];
    const axe = (label: string) => (audit ? checkA11y(page, label) : Promise.resolve(assertClean(page, label)));
    const shot = (name: string) => page.screenshot({ path: `${SHOTS}/bulk-${name}${audit ? '' : `-${dialect}`}.png` });
    const list = '/inquiries?filter[city]=Bulkville';

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      tess = await teammate(app, 'agent', 'Tess Teammate');
      for (let i = 0; i < MANY; i++) {
        const made = await app.post('/api/v1/inquiries', {
          name: `Bulk lead ${String(i).padStart(3, '0')}`,
          email: `lead${i}@example.com`,
          city: 'Bulkville',
        });
        assert.equal(made.status, 201, made.text);
      }
      ({ context, page } = await newUser(browser, app.url));
      await signIn(page, app.admin.email, app.admin.password);
    });
    after(async () => {
      await context?.close();
      await app?.close();
    });

    step('ticking the page shows the bar, which offers all 250 matching', async () => {
      await visit(page, list);
      const bar = page.getByRole('form', { name: 'Bulk actions on inquiries' });
      assert.equal(await bar.isVisible(), false, 'no bar before anything is ticked');
      await page.getByRole('checkbox', { name: 'Select Bulk lead 249' }).check();
      await bar.waitFor();
      assert.equal(await bar.getByText('1 inquiry selected.').count(), 1);
      await page.getByRole('checkbox', { name: 'Select all 25 rows on this page' }).check();
      await bar.getByText('25 inquiries selected.').waitFor();
      await bar.getByRole('button', { name: `Select all ${MANY} matching inquiries` }).click();
      await bar.getByText(`All ${MANY} inquiries that match are selected.`).waitFor();
      await bar.locator('summary', { hasText: 'Assign' }).click();
      await bar.getByLabel('Assigned to').waitFor();
      await axe('inquiries list with the bulk bar open');
      await shot('1280');
    });

    step('assigning them to a teammate shows the progress, then says what was done', async () => {
      const bar = page.getByRole('form', { name: 'Bulk actions on inquiries' });
      // Each part answers a little later than it would, so that the progress can be seen.
      await page.route('**/inquiries/bulk', async (route) => {
        await new Promise((r) => setTimeout(r, 400));
        await route.continue();
      });
      await bar.getByLabel('Assigned to').selectOption({ label: 'Tess Teammate' });
      await bar.getByRole('button', { name: 'Assign', exact: true }).click();
      const progress = page.locator('#bulk-progress-bar');
      await progress.waitFor();
      await page.waitForFunction(() => {
        const p = document.querySelector('#bulk-progress-bar') as HTMLProgressElement | null;
        return p !== null && p.value > 0 && p.value < p.max;
      });
      assert.equal(await bar.getByText('Assigning…').count(), 1);
      assert.match((await page.locator('[data-bulk-progress-text]').innerText()).trim(), /^\d+ of 250$/);
      await shot('progress-1280');
      const message = page.locator('#flash .flash-success');
      await message.waitFor({ timeout: 30_000 });
      assert.equal((await message.innerText()).trim(), `Updated ${MANY} inquiries.`);
      assert.equal(await message.evaluate((el) => el === document.activeElement), true, 'the message is focused');
      await page.unroute('**/inquiries/bulk');
      // The list is read again: the rows show their new assignee, nothing is ticked, the bar is gone.
      await page.locator('#results tbody tr').first().getByText('Tess Teammate').waitFor();
      assert.equal(await bar.isVisible(), false);
      await shot('done-1280');
      assertClean(page, 'after the bulk assignment');
    });

    step('the API shows all 250 assigned, each with its activity entry', async () => {
      const assigned = await app.get(`/api/v1/inquiries?filter[city]=Bulkville&filter[assigned_to]=${tess.id}`);
      assert.equal(assigned.body.meta.total, MANY);
      let cursor = '';
      const ids: string[] = [];
      do {
        const pageOf = await app.get(`/api/v1/inquiries?filter[city]=Bulkville&per_page=100&cursor=${cursor}`);
        ids.push(...(pageOf.body.data as Json[]).map((i) => String(i.id)));
        cursor = pageOf.body.meta.next_cursor ?? '';
      } while (cursor);
      assert.equal(ids.length, MANY);
      for (const id of ids) {
        const [entry] = (await app.get(`/api/v1/inquiries/${id}/activity`)).body.data as Json[];
        assert.deepEqual([entry.action, entry.via, entry.actor.name], ['updated', 'web', 'Admin'], id);
        assert.equal(String(entry.changes.assigned_to[1]), String(tess.id), id);
      }
    });

    step('a deletion asks in the bar with the count, then offers the trash', async () => {
      await visit(page, list);
      for (const n of ['249', '248', '247'])
        await page.getByRole('checkbox', { name: `Select Bulk lead ${n}` }).check();
      const bar = page.getByRole('form', { name: 'Bulk actions on inquiries' });
      await bar.locator('summary', { hasText: 'Delete' }).click();
      await bar.getByText('Move 3 inquiries to the trash? You can restore them from the Trash page.').waitFor();
      await bar.getByRole('button', { name: 'Move to the trash' }).click();
      const message = page.locator('#flash .flash-success');
      await message.waitFor();
      assert.match(await message.innerText(), /^Moved 3 inquiries to the trash\. Open the trash$/);
      assert.equal(await message.getByRole('link', { name: 'Open the trash' }).getAttribute('href'), '/trash');
      const left = await app.get('/api/v1/inquiries?filter[city]=Bulkville');
      assert.equal(left.body.meta.total, MANY - 3);
      assertClean(page, 'after the bulk deletion');
    });

    step('at 390 px the bar fits the screen, its menus above it', async () => {
      const phone = await newUser(browser, app.url, { viewport: { width: 390, height: 844 } });
      try {
        page = phone.page;
        await signIn(page, app.admin.email, app.admin.password);
        await visit(page, list);
        await page.getByRole('checkbox', { name: 'Select all 25 rows on this page' }).check();
        const bar = page.getByRole('form', { name: 'Bulk actions on inquiries' });
        await bar.locator('summary', { hasText: 'Set state' }).click();
        await bar.getByLabel('Value').waitFor();
        const box = await bar.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the bar fits: ${JSON.stringify(box)}`);
        const menu = await page.locator('.bulk-pop').filter({ visible: true }).boundingBox();
        assert.ok(menu && menu.x >= 0 && menu.x + menu.width <= 390, `the menu fits: ${JSON.stringify(menu)}`);
        await axe('inquiries list with the bulk bar open, 390 px');
        await shot('390');
      } finally {
        await phone.context.close();
      }
    });
  });
}
