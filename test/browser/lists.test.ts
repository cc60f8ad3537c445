// Lists a team reads at a glance (issue 13, item 5), in Chromium: at 1280 × 800
// the default contacts list shows at least 15 rows without scrolling, long
// text cut to one line with the whole text on hover and focus, the header row
// sticking while the list scrolls; the column chooser; a saved view that
// survives signing out and in; at 390 px a card per record; axe on each state.
// Screenshots go to /tmp/shots/lists-*.png (LIST_SHOTS=dir to change it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import {
  assertClean,
  checkA11y,
  here,
  launchBrowser,
  linkIn,
  newestMail,
  newUser,
  signIn,
  signOut,
  submit,
  visit,
} from './helpers.ts';

const SHOTS = process.env.LIST_SHOTS ?? '/tmp/shots';
const DETAIL =
  'Wants a quote for forty seats and a call in the morning; asked about the maintenance plan, the training days and ' +
  'whether the invoices can be split between two offices in different countries, with a purchase order for each.';
const CITIES = ['Lisbon', 'Osaka', 'Bergen', 'Casablanca', 'Leipzig', 'Valencia', 'São Paulo', 'Kraków'];
const COUNTRIES = ['Portugal', 'Japan', 'Norway', 'Morocco', 'Germany', 'Spain', 'Brazil', 'Poland'];

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
  fs.mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
});

/** The rows of the results table whose box lies wholly inside the window. */
const rowsInView = (page: Page) =>
  page.evaluate(
    () =>
      [...document.querySelectorAll('#results tbody tr')].filter((row) => {
        const box = row.getBoundingClientRect();
        return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
      }).length,
  );

/** The list's column headings, as shown (sort arrows, hidden words and the select-all box left out). */
const headings = (page: Page) =>
  page.locator('#results thead th').evaluateAll((ths) =>
    ths.map((th) => {
      const copy = th.cloneNode(true) as HTMLElement;
      for (const hidden of copy.querySelectorAll('.visually-hidden, input')) hidden.remove();
      return (copy.textContent ?? '').replace(/[▲▼]/g, '').trim();
    }),
  );

const shot = (page: Page, name: string, fullPage = false) =>
  page.screenshot({ path: path.join(SHOTS, `lists-${name}.png`), fullPage });

for (const dialect of DIALECTS) {
  describe(`lists in Chromium on ${dialect}`, { concurrency: false }, () => {
    let failed = '';
    const step = (name: string, fn: (t: TestContext) => Promise<void> | void) =>
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
    let context: BrowserContext;
    let page: Page;
    // The pages are the same HTML on either database: axe and the screenshots on the first dialect only.
    const first = dialect === DIALECTS[0];
    const axe = (p: Page, label: string) => (first ? checkA11y(p, label) : Promise.resolve(assertClean(p, label)));

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      const sources: number[] = [];
      for (const name of ['Website', 'Trade fair', 'Referral']) {
        const made = await app.post('/api/v1/sources', { name });
        assert.equal(made.status, 201, made.text);
        sources.push(Number(made.body.data.id));
      }
      for (let i = 1; i <= 40; i++) {
        const made = await app.post('/api/v1/contacts', {
          name:
            i === 38
              ? 'Maria Fernanda dos Santos Albuquerque de Oliveira e Castro'
              : `Contact ${String(i).padStart(2, '0')}`,
          email: `person${i}@example.com`,
          phone: `+351 21 555 ${String(1000 + i)}`,
          city: CITIES[i % CITIES.length],
          country: COUNTRIES[i % COUNTRIES.length],
          source_id: sources[i % sources.length],
          detail: DETAIL,
        });
        assert.equal(made.status, 201, made.text);
      }
      ({ context, page } = await newUser(browser, app.url));
      // A confirmed address, as a team member's is (the notice would take two rows' height).
      const since = Date.now() - 1000;
      assert.equal((await app.post('/api/v1/auth/email/verification-notification')).status, 202);
      const link = linkIn(await newestMail(app.dataDir, since), '/verify-email/');
      await signIn(page, app.admin.email, app.admin.password);
      await visit(page, link);
    });
    after(async () => {
      await context?.close();
      await app?.close();
    });

    step('at 1280 × 800 the default contacts list shows at least 15 whole rows, long text on one line', async (t) => {
      await visit(page, '/contacts');
      assert.deepEqual(await headings(page), ['Name', 'Email', 'Phone', 'City', 'Country', 'Created at']);
      const shown = await rowsInView(page);
      assert.ok(shown >= 15, `${shown} rows are shown whole without scrolling`);
      t.diagnostic(`${shown} whole rows in a 1280 × 800 window`);
      if (first) await shot(page, 'contacts-1280');
      // The long name is one line, cut with an ellipsis; its whole text is the link's title.
      const long = page.locator('#results tbody a', { hasText: 'Maria Fernanda' });
      const box = await long.boundingBox();
      const height = await page
        .locator('#results tbody tr')
        .first()
        .evaluate((r) => r.getBoundingClientRect().height);
      assert.ok(box && box.height <= height, 'the long name stays on one line');
      assert.equal(
        await long.getAttribute('title'),
        'Maria Fernanda dos Santos Albuquerque de Oliveira e Castro',
        'the whole name on hover',
      );
      assert.ok(
        await long.evaluate((a) => a.scrollWidth > a.clientWidth),
        'the name is cut (the test would prove nothing otherwise)',
      );
      // The header row sticks to the top of the window while the list scrolls.
      const head = page.locator('#results thead th').first();
      const headTop = await head.evaluate((th) => th.getBoundingClientRect().top + window.scrollY);
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForFunction((top) => window.scrollY > top + 50, headTop);
      const top = await page
        .locator('#results thead th')
        .first()
        .evaluate((th) => th.getBoundingClientRect().top);
      assert.ok(Math.abs(top) <= 1, `the header row is at the top of the window (${top})`);
      await page.evaluate(() => window.scrollTo(0, 0));
      await axe(page, 'contacts list (1280)');
    });

    step('the column chooser: the detail column, cut to one line, shows the whole text on focus', async () => {
      await visit(page, '/contacts');
      await page.locator('summary', { hasText: 'Columns' }).click();
      const chooser = page.locator('form[action="/contacts/columns"]');
      await chooser.getByLabel('Phone').uncheck();
      await chooser.getByLabel('Created at').uncheck();
      await chooser.getByLabel('Source').check();
      await chooser.getByLabel('Detail').check();
      await axe(page, 'contacts list, column chooser open');
      if (first) await shot(page, 'columns-1280');
      await submit(page, 'Save columns');
      assert.equal(here(page), '/contacts');
      assert.deepEqual(await headings(page), ['Name', 'Email', 'City', 'Country', 'Source', 'Detail']);
      const firstRow = page.locator('#results tbody tr').first();
      assert.equal(await firstRow.locator('td').nth(4).innerText(), 'Trade fair', 'the source by its name');
      const detail = firstRow.locator('td').nth(5).locator('.clip');
      assert.equal(await detail.getAttribute('title'), DETAIL, 'the whole text on hover');
      const before = await detail.evaluate((el) => el.getBoundingClientRect().height);
      await detail.focus();
      const focused = await detail.evaluate((el) => ({
        height: el.getBoundingClientRect().height,
        wraps: getComputedStyle(el).whiteSpace,
      }));
      assert.equal(focused.wraps, 'normal', 'focus lets the text wrap');
      assert.ok(focused.height > before * 2, `the whole text shows on focus (${before} → ${focused.height} px)`);
      await axe(page, 'contacts list with chosen columns');
      if (first) await shot(page, 'focus-1280');
      await page.locator('#field-search').focus();
    });

    step('a saved view (shared) keeps search, filters, sort and columns, and survives signing out', async () => {
      await visit(page, '/contacts?sort=name');
      await page.locator('details.more-filters summary').click();
      await page.getByLabel('City contains').fill('lis');
      await page.evaluate(() => {
        Object.assign(window, { asked: 0 });
        // The list's own requests (the header's bell asks for its count too).
        document.addEventListener('htmx:beforeRequest', (e) => {
          if ((e.target as Element).closest('form[hx-push-url]'))
            Object.assign(window, { asked: 1 + (window as unknown as { asked: number }).asked });
        });
      });
      await page.getByLabel('City contains').press('Enter');
      await page.waitForURL(/filter%5Bcity%5D%5Bcontains%5D=lis/);
      assert.doesNotMatch(here(page), /=(&|$)/, 'no empty parameter in the address');
      await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 5);
      await page.locator('summary', { hasText: 'Save view' }).click();
      // Enter (a change and a submit) and leaving the field (a change) ask for the list once: no second answer
      // replaces the results and closes what was just opened.
      await page.waitForFunction(() => !document.querySelector('.htmx-request'));
      assert.equal(await page.evaluate(() => (window as unknown as { asked: number }).asked), 1, 'asked once');
      assert.equal(await page.locator('details.list-tool', { hasText: 'Save view' }).getAttribute('open'), '');
      await page.getByLabel('Name of the view').fill('Lisbon, by name');
      await page.getByLabel('Share with the team').check();
      await axe(page, 'contacts list, save view open');
      await submit(page, 'Save view');
      await page.getByText('The view “Lisbon, by name” was saved.').waitFor();
      const views = page.locator('nav.saved-views');
      assert.equal(await views.getByRole('link', { name: 'Lisbon, by name' }).getAttribute('aria-current'), 'page');

      await signOut(page);
      await signIn(page, app.admin.email, app.admin.password);
      await visit(page, '/contacts');
      assert.equal(await page.locator('#results tbody tr').count(), 25, 'the list opens whole');
      await views.getByRole('link', { name: 'Lisbon, by name' }).click();
      await page.waitForURL(/columns=/);
      assert.deepEqual(await headings(page), ['Name', 'Email', 'City', 'Country', 'Source', 'Detail']);
      const names = await page.locator('#results tbody tr td:first-child').allInnerTexts();
      assert.equal(names.length, 5);
      assert.deepEqual(names, [...names].sort(), 'sorted by name');
      const cities = await page.locator('#results tbody tr td:nth-child(3)').allInnerTexts();
      assert.deepEqual(new Set(cities), new Set(['Lisbon']));
      assert.equal(await page.getByLabel('City contains').inputValue(), 'lis', 'the filter form shows the view');
      await axe(page, 'a saved view opened');
    });

    step(
      'at 390 px the list is a card per record, its columns as label and value; nothing scrolls sideways',
      async () => {
        await page.setViewportSize({ width: 390, height: 844 });
        await visit(page, '/contacts?columns=name,email,city,source_id');
        const card = page.locator('#results tbody tr').first();
        assert.equal(await card.evaluate((tr) => getComputedStyle(tr).display), 'block', 'a card, not a table row');
        const email = card.locator('td').nth(1);
        assert.equal(
          await email.evaluate((td) => getComputedStyle(td, '::before').content),
          '"Email"',
          'each value under its label',
        );
        const cardBox = (await card.boundingBox())!;
        assert.ok(cardBox.width <= 390 && cardBox.x >= 0, 'the card fits the screen');
        assert.ok(
          await page.evaluate(() => document.documentElement.scrollWidth <= 390),
          'nothing pushes the page sideways at 390 px',
        );
        await axe(page, 'contacts list (390)');
        if (first) {
          await shot(page, 'contacts-390');
          await page.locator('#results tbody tr').nth(2).scrollIntoViewIfNeeded();
          await shot(page, 'cards-390');
          await page.locator('summary', { hasText: 'Columns' }).click();
          await shot(page, 'columns-390');
        }
        await page.setViewportSize({ width: 1280, height: 800 });
      },
    );
  });
}
