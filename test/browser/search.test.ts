// The search box in the header, in Chromium on each database: "/" from
// anywhere outside a text field reaches it, typing shows suggestions grouped
// by resource, the arrow keys move through them as the ARIA combobox pattern
// says (aria-activedescendant, aria-selected), Escape closes them and Enter
// opens the chosen record; without a choice Enter leads to the results page,
// which is also what the box does without JavaScript, with "see all" links to
// the lists. At 390 px the box is a button that opens it. Axe on the results
// page and with the suggestions open finds no serious or critical violation.
// LEADBOOK_SHOTS=dir saves screenshots there (search-*.png).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { assertClean, checkA11y, here, launchBrowser, newUser, signIn, visit } from './helpers.ts';

const SHOTS = process.env.LEADBOOK_SHOTS;

const box = (page: Page) => page.getByRole('combobox', { name: 'Search Leadbook' });
const listbox = (page: Page) => page.getByRole('listbox', { name: 'Suggestions' });
const options = (page: Page) => listbox(page).getByRole('option');

/** The option aria-activedescendant names, as text (empty when none is chosen). */
async function chosen(page: Page): Promise<string> {
  return page.evaluate(() => {
    const input = document.getElementById('global-search')!;
    const id = input.getAttribute('aria-activedescendant');
    const option = id ? document.getElementById(id) : null;
    if (!option) return '';
    if (option.getAttribute('aria-selected') !== 'true') throw new Error(`${id} is active but not aria-selected`);
    return (option as HTMLElement).innerText.replace(/\s+/g, ' ').trim();
  });
}

for (const dialect of DIALECTS) {
  describe(`search box in Chromium on ${dialect}`, { concurrency: false }, () => {
    let app: TestApp;
    let browser: Browser;
    // Axe takes about a second a page, and the HTML is the same on either database: the first one only.
    const audit = dialect === DIALECTS[0];
    const shots = SHOTS && audit ? SHOTS : undefined;
    const ids: Record<string, string> = {};

    const create = async (resource: string, values: Record<string, unknown>) => {
      const made = await app.post(`/api/v1/${resource}`, values);
      assert.equal(made.status, 201, made.text);
      return String(made.body.data.id);
    };

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      browser = await launchBrowser();
      ids.ashby = await create('contacts', { name: 'Marigold Ashby', email: 'ashby@example.org', city: 'Leeds' });
      ids.fenwick = await create('contacts', { name: 'Marigold Fenwick', phone: '+44 20 7946 0018', city: 'York' });
      ids.quay = await create('contacts', { name: 'Quayside Bakery', email: 'orders@marigold-bakes.example' });
      // Linked to Marigold Ashby by its email: no other contact is made.
      ids.printer = await create('inquiries', {
        name: 'Marigold Ashby',
        email: 'ashby@example.org',
        detail: 'Wants a quote for 40 printers',
      });
      if (shots) fs.mkdirSync(shots, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await app?.close();
    });

    test('"/" reaches the box, typing suggests, the arrows choose, Escape closes, Enter opens the record', async () => {
      const { context, page } = await newUser(browser, app.url);
      try {
        await signIn(page, app.admin.email, app.admin.password);
        await visit(page, '/contacts');
        // "/" typed in a text field is a character, not the shortcut.
        await page.getByLabel('Search contacts').focus();
        await page.keyboard.type('a/b');
        assert.equal(await page.getByLabel('Search contacts').inputValue(), 'a/b');
        await page.locator('h1').click();
        await page.keyboard.press('/');
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'global-search', '"/" focuses the box');
        assert.equal(await box(page).inputValue(), '', 'the slash is not typed into it');

        // Fewer than three letters wait for Enter (no index serves them).
        await page.keyboard.type('ma');
        await page.getByText('Keep typing (3 letters or more)').waitFor();
        assert.equal(await box(page).getAttribute('aria-expanded'), 'false');

        await page.keyboard.type('rigold', { delay: 30 });
        // The suggestions of the whole word, not of a part typed before it whose answer came back first.
        await page.locator('.gs-status').filter({ hasText: '“marigold”' }).waitFor({ state: 'attached' });
        await options(page).first().waitFor();
        assert.equal(await box(page).getAttribute('aria-expanded'), 'true');
        const groups = listbox(page).getByRole('group');
        assert.deepEqual(
          (await groups.evaluateAll((els) => els.map((el) => el.getAttribute('aria-labelledby')))).length,
          2,
        );
        assert.equal(
          await listbox(page)
            .getByRole('group', { name: /Contacts/ })
            .getByRole('option')
            .count(),
          4,
        );
        assert.equal(
          await listbox(page)
            .getByRole('group', { name: /Inquiries/ })
            .getByRole('option')
            .count(),
          2,
        );
        assert.match(
          await page.locator('.gs-status').innerText(),
          /3 contacts and 1 inquiry match “marigold”/,
          'the live region says what was found',
        );
        assert.equal(await chosen(page), '', 'nothing is chosen before an arrow key');

        await page.keyboard.press('ArrowDown');
        assert.match(await chosen(page), /^Quayside Bakery orders@marigold-bakes\.example$/, 'newest first');
        await page.keyboard.press('ArrowDown');
        assert.match(await chosen(page), /^Marigold Fenwick \+44 20 7946 0018$/);
        await page.keyboard.press('ArrowUp');
        assert.match(await chosen(page), /^Quayside Bakery/);
        await page.keyboard.press('ArrowUp');
        assert.match(await chosen(page), /^See all 1 inquiry$/, 'ArrowUp from the first wraps to the last');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        assert.match(await chosen(page), /^Marigold Ashby ashby@example\.org$/);
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'global-search', 'focus stays in the box');

        if (shots) await page.screenshot({ path: path.join(shots, 'search-dropdown-1280.png') });
        if (audit) await checkA11y(page, 'suggestions open at 1280 px');

        await page.keyboard.press('Escape');
        await listbox(page).waitFor({ state: 'hidden' });
        assert.equal(await box(page).getAttribute('aria-expanded'), 'false');
        assert.equal(await box(page).inputValue(), 'marigold', 'Escape closes, keeping the words');
        await page.keyboard.press('ArrowDown');
        await options(page).first().waitFor();
        assert.match(await chosen(page), /^Quayside Bakery/, 'ArrowDown opens them again');
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');

        await Promise.all([page.waitForURL(`**/contacts/${ids.ashby}`), page.keyboard.press('Enter')]);
        assert.equal(await page.locator('h1').innerText(), 'Marigold Ashby');
        assertClean(page);
      } finally {
        await context.close();
      }
    });

    test('an inquiry opens with the pointer; Enter without a choice, or "see all", lead to the results', async () => {
      const { context, page } = await newUser(browser, app.url);
      try {
        await signIn(page, app.admin.email, app.admin.password);
        await box(page).fill('printers');
        const option = listbox(page).getByRole('option', { name: /Marigold Ashby/ });
        await option.waitFor();
        assert.match(await option.innerText(), /ashby@example\.org · New/, 'email and stage under the name');
        await Promise.all([page.waitForURL(`**/inquiries/${ids.printer}`), option.click()]);

        await box(page).fill('marigold');
        await options(page).first().waitFor();
        await Promise.all([page.waitForURL('**/search?q=marigold'), box(page).press('Enter')]);
        assert.equal(await page.locator('h1').innerText(), 'Results for “marigold”');

        await box(page).fill('marigold');
        const all = listbox(page).getByRole('option', { name: 'See all 3 contacts' });
        await all.waitFor();
        await Promise.all([page.waitForURL('**/contacts?search=marigold'), all.click()]);
        assert.equal(await page.locator('#results tbody tr').count(), 3);
        assertClean(page);
      } finally {
        await context.close();
      }
    });

    test('without JavaScript the box leads to the results page, grouped, with links to the lists', async () => {
      const context = await browser.newContext({ baseURL: app.url, javaScriptEnabled: false });
      try {
        const page = await context.newPage();
        await signIn(page, app.admin.email, app.admin.password);
        const plain = page.getByRole('searchbox', { name: 'Search Leadbook' });
        await plain.fill('marigold');
        await Promise.all([page.waitForURL('**/search?q=marigold'), plain.press('Enter')]);
        const contacts = page.getByRole('region', { name: /Contacts/ });
        const inquiries = page.getByRole('region', { name: /Inquiries/ });
        assert.match(await contacts.getByRole('heading').innerText(), /Contacts \(3\)/);
        assert.deepEqual(await contacts.getByRole('listitem').getByRole('link').allInnerTexts(), [
          'Quayside Bakery',
          'Marigold Fenwick',
          'Marigold Ashby',
        ]);
        assert.deepEqual(await inquiries.getByRole('listitem').getByRole('link').allInnerTexts(), ['Marigold Ashby']);
        await Promise.all([
          page.waitForURL('**/inquiries?search=marigold'),
          inquiries.getByRole('link', { name: 'See all 1 inquiry' }).click(),
        ]);
        assert.equal(here(page), '/inquiries?search=marigold');
      } finally {
        await context.close();
      }
    });

    test('the results page passes axe, at 1280 and 390 px', async () => {
      for (const width of [1280, 390]) {
        const { context, page } = await newUser(browser, app.url, { viewport: { width, height: 800 } });
        try {
          await signIn(page, app.admin.email, app.admin.password);
          await visit(page, '/search?q=marigold');
          assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width, 'no sideways scroll');
          if (shots) await page.screenshot({ path: path.join(shots, `search-results-${width}.png`), fullPage: true });
          if (audit) await checkA11y(page, `results page at ${width} px`);
        } finally {
          await context.close();
        }
      }
    });

    test('at 390 px the box is a button that opens it, and the suggestions fit the screen', async () => {
      const { context, page } = await newUser(browser, app.url, { viewport: { width: 390, height: 844 } });
      try {
        await signIn(page, app.admin.email, app.admin.password);
        await visit(page, '/contacts');
        assert.equal(await box(page).isVisible(), false, 'closed, the box is a button');
        const button = page.locator('header').getByRole('button', { name: 'Search', exact: true });
        assert.ok(await button.isVisible());
        if (shots) await page.screenshot({ path: path.join(shots, 'search-closed-390.png') });
        await button.click();
        assert.ok(await box(page).isVisible());
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'global-search');
        await page.keyboard.type('marigold', { delay: 20 });
        // The suggestions of the whole word: under load a part typed before it ("marig") could answer last, and
        // ArrowDown then Enter would open another record than the one awaited.
        await page.locator('.gs-status').filter({ hasText: '“marigold”' }).waitFor({ state: 'attached' });
        await options(page).first().waitFor();
        const shown = await page.locator('.gs-popup').boundingBox();
        assert.ok(shown && shown.x >= 0 && shown.x + shown.width <= 390, `within the screen: ${JSON.stringify(shown)}`);
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no sideways scroll');
        await page.keyboard.press('ArrowDown');
        if (shots) await page.screenshot({ path: path.join(shots, 'search-dropdown-390.png') });
        if (audit) await checkA11y(page, 'suggestions open at 390 px');
        await Promise.all([page.waitForURL(`**/contacts/${ids.quay}`), page.keyboard.press('Enter')]);

        // "/" opens the closed box too.
        await page.locator('h1').click();
        await page.keyboard.press('/');
        assert.ok(await box(page).isVisible());
        assert.equal(await page.evaluate(() => document.activeElement?.id), 'global-search');
        assertClean(page);
      } finally {
        await context.close();
      }
    });
  });
}
