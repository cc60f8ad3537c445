// Back/Forward and an ended session, in Chromium at desktop and phone width,
// on each database (issue 10, items 1 and 2):
// - after a live search, a filter or paging, opening a record and going Back
//   (and Forward, and Back again) shows the whole page, styled, with the
//   search, the filter and the scroll position as they were; Back and Forward
//   between the steps of the list itself show each step's own controls and
//   results, one Back per step;
// - a form typed while the session ended comes back filled after signing in
//   again, and nothing is saved until the person saves it;
// - a live search after the session ended leads to the sign-in page and back;
// - the bell's count, asked for by the page itself, never takes the person away from a form they are typing.
// LEADBOOK_SHOTS=dir also saves screenshots of those pages there.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { assertClean, here, launchBrowser, newUser, signIn, submit, watch } from './helpers.ts';

const WIDTHS = [1280, 390];
const SHOTS = process.env.LEADBOOK_SHOTS;

/** Whether the page is the whole, styled page (not an htmx fragment shown as a document). */
async function assertWholePage(page: Page, where: string): Promise<void> {
  assert.equal(
    await page.locator('header.site-header nav[aria-label="Main"]').count(),
    1,
    `${where}: the header and navigation are there`,
  );
  assert.equal(await page.locator('link[rel="stylesheet"][href="/assets/app.css"]').count(), 1, `${where}: styled`);
  const background = await page.evaluate(() => getComputedStyle(document.querySelector('header.site-header')!).display);
  assert.notEqual(background, 'inline', `${where}: the stylesheet applies`);
}

const rowNames = (page: Page) => page.locator('#results tbody tr td:first-child').allInnerTexts();

/** Opens the first (or last) record of the results and comes back with Back; then Forward and Back again. */
async function roundTrip(page: Page, pick: 'first' | 'last', check: (where: string) => Promise<void>): Promise<void> {
  const link = page.locator('#results tbody tr a[href^="/inquiries/"]').nth(pick === 'first' ? 0 : -1);
  await Promise.all([page.waitForURL(/\/inquiries\/\d+$/), link.click()]);
  const record = here(page);
  await page.goBack();
  await page.waitForLoadState('load');
  await check('after Back');
  await page.goForward();
  await page.waitForLoadState('load');
  assert.equal(here(page), record, 'Forward returns to the record');
  await assertWholePage(page, 'the record after Forward');
  await page.goBack();
  await page.waitForLoadState('load');
  await check('after Back again');
}

for (const dialect of DIALECTS) {
  describe(`Back/Forward and an ended session in Chromium on ${dialect}`, { concurrency: false }, () => {
    let app: TestApp;
    let browser: Browser;
    let seq = 0;

    /** A team member of their own for each test (ending their session touches nobody else's). */
    async function member(): Promise<{ id: number; email: string; password: string; name: string }> {
      const who = {
        email: `trust-${dialect}-${++seq}@example.com`,
        password: `trust pass ${seq} ${dialect}`,
        name: `Trusting ${seq}`,
      };
      const created = await app.post('/api/v1/users', { ...who, role: 'agent' });
      assert.equal(created.status, 201, created.text);
      return { ...who, id: Number(created.body.data.id) };
    }
    const endSessionsOf = (userId: number) =>
      app.database.db.deleteFrom('sessions').where('user_id', '=', userId).execute();

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      browser = await launchBrowser();
      // 40 inquiries: every third assigned to the admin, every fourth about solar panels.
      for (let i = 1; i <= 40; i++) {
        const name = `Lead ${String(i).padStart(2, '0')}${i % 4 === 0 ? ' solar' : ''}`;
        const created = await app.post('/api/v1/inquiries', {
          name,
          email: `lead${i}@example.com`,
          ...(i % 3 === 0 ? { assigned_to: Number(app.admin.id) } : {}),
        });
        assert.equal(created.status, 201, created.text);
      }
    });
    after(async () => {
      await browser?.close();
      await app?.close();
    });

    for (const width of WIDTHS) {
      const viewport = { width, height: width > 800 ? 800 : 844 };

      test(`${width}px: Back and Forward after a live search show the whole page with the search kept`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, app.admin.email, app.admin.password);
        await page.goto('/inquiries');
        await page.locator('#field-search').fill('solar');
        await page.waitForURL(/search=solar/);
        await page.waitForFunction(() =>
          [...document.querySelectorAll('#results tbody tr td:first-child')].every((td) =>
            (td as HTMLElement).innerText.includes('solar'),
          ),
        );
        const searched = await rowNames(page);
        assert.equal(searched.length, 10);
        const address = here(page);
        await roundTrip(page, 'first', async (where) => {
          assert.equal(here(page), address, `${where}: the searched address`);
          await assertWholePage(page, where);
          assert.equal(
            await page.locator('#field-search').inputValue(),
            'solar',
            `${where}: the search box still says solar`,
          );
          assert.deepEqual(await rowNames(page), searched, `${where}: the same results`);
        });
        assertClean(page);
        await context.close();
      });

      test(`${width}px: Back after Filters → Assigned to = me keeps the filter and the scroll position`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, app.admin.email, app.admin.password);
        await page.goto('/inquiries');
        await page.locator('summary', { hasText: 'Filters' }).click();
        await page.locator('#filter-assigned_to').selectOption({ label: 'Admin' });
        await page.waitForURL(/filter%5Bassigned_to%5D=|filter\[assigned_to\]=/);
        await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 13);
        const filtered = await rowNames(page);
        const scrollable = await page.evaluate(() => document.documentElement.scrollHeight - innerHeight);
        if (width < 800) assert.ok(scrollable > 200, 'the phone page scrolls');
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        const scrolled = await page.evaluate(() => scrollY);
        await roundTrip(page, 'last', async (where) => {
          await assertWholePage(page, where);
          assert.equal(
            await page.locator('#filter-assigned_to').inputValue(),
            String(app.admin.id),
            `${where}: Assigned to is still the admin`,
          );
          assert.equal(
            await page.locator('details.more-filters').getAttribute('open'),
            '',
            `${where}: the filters stay open, showing the one set`,
          );
          assert.deepEqual(await rowNames(page), filtered, `${where}: the same 13 inquiries`);
          await page.waitForFunction((y) => Math.abs(scrollY - y) < 40, scrolled, { timeout: 5000 }).catch(() => {});
          assert.ok(
            Math.abs((await page.evaluate(() => scrollY)) - scrolled) < 40,
            `${where}: scrolled where it was (${scrolled}), not ${await page.evaluate(() => scrollY)}`,
          );
        });
        assertClean(page);
        await context.close();
      });

      test(`${width}px: Back and Forward within the list (a search, then a filter) show each step with its own controls, one step each`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, app.admin.email, app.admin.password);
        await page.goto('/inquiries');
        const all = await rowNames(page);
        await page.locator('#field-search').fill('solar');
        await page.waitForURL(/search=solar/);
        await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 10);
        const searched = { address: here(page), rows: await rowNames(page) };
        // Scrolled down to read the results, then a filter chosen from the keyboard (nothing scrolls back up).
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        // Leaving the search box is a change event: the same search once more, which must not be a step of its own.
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        await page.waitForFunction(() => !document.querySelector('.htmx-request'));
        // Opening the filters above keeps the rows in view (the browser's scroll anchoring moves scrollY with them):
        // where the step is left is measured after it.
        await page.evaluate(() => {
          document.querySelector<HTMLDetailsElement>('details.more-filters')!.open = true;
        });
        const scrolled = await page.evaluate(() => scrollY);
        if (width < 800) assert.ok(scrolled > 100, 'the phone page scrolls');
        await page.evaluate(() => {
          const select = document.querySelector<HTMLSelectElement>('#filter-assigned_to')!;
          select.value = [...select.options].find((o) => o.text === 'Admin')!.value;
          select.dispatchEvent(new Event('change', { bubbles: true }));
        });
        await page.waitForURL(/assigned_to%5D=\d|assigned_to\]=\d/);
        await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 3);
        const filtered = { address: here(page), rows: await rowNames(page) };

        const step = async (
          go: () => Promise<unknown>,
          where: string,
          want: { address: string; search: string; assigned: string; rows: string[] },
        ) => {
          await go();
          await page.waitForURL((u) => u.pathname + u.search === want.address, { timeout: 5000 }).catch(() => {});
          assert.equal(here(page), want.address, `${where}: the address`);
          await page.waitForLoadState('load');
          await page
            .waitForFunction((n) => document.querySelectorAll('#results tbody tr').length === n, want.rows.length)
            .catch(() => {});
          await assertWholePage(page, where);
          assert.equal(await page.locator('#field-search').inputValue(), want.search, `${where}: the search box`);
          assert.equal(await page.locator('#filter-assigned_to').inputValue(), want.assigned, `${where}: Assigned to`);
          assert.deepEqual(await rowNames(page), want.rows, `${where}: the results`);
        };
        const admin = String(app.admin.id);
        await step(() => page.goBack(), 'Back to the search', {
          address: searched.address,
          search: 'solar',
          assigned: '',
          rows: searched.rows,
        });
        await page.waitForFunction((y) => Math.abs(scrollY - y) < 40, scrolled, { timeout: 5000 }).catch(() => {});
        assert.ok(
          Math.abs((await page.evaluate(() => scrollY)) - scrolled) < 40,
          `Back to the search: scrolled where it was (${scrolled}), not ${await page.evaluate(() => scrollY)}`,
        );
        await step(() => page.goBack(), 'Back to the plain list (one step: no step repeats the search)', {
          address: '/inquiries',
          search: '',
          assigned: '',
          rows: all,
        });
        await step(() => page.goForward(), 'Forward to the search', {
          address: searched.address,
          search: 'solar',
          assigned: '',
          rows: searched.rows,
        });
        await step(() => page.goForward(), 'Forward to the filter', {
          address: filtered.address,
          search: 'solar',
          assigned: admin,
          rows: filtered.rows,
        });
        assertClean(page);
        await context.close();
      });

      test(`${width}px: Back after paging a search shows page 2 whole, and Back again the search's page 1`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, app.admin.email, app.admin.password);
        await page.goto('/inquiries');
        // A live search first (htmx pushes its address), then the pager's plain link.
        await page.locator('#field-search').fill('lead');
        await page.waitForURL(/search=lead/);
        await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 25);
        const searched = { address: here(page), rows: await rowNames(page) };
        await Promise.all([page.waitForURL(/page=2/), page.getByRole('link', { name: 'Next' }).click()]);
        const second = await rowNames(page);
        assert.equal(second.length, 15);
        await roundTrip(page, 'first', async (where) => {
          await assertWholePage(page, where);
          assert.equal(await page.locator('.pager [aria-current="page"]').innerText(), '2', `${where}: page 2`);
          assert.equal(await page.locator('#field-search').inputValue(), 'lead', `${where}: the search box`);
          assert.deepEqual(await rowNames(page), second, `${where}: the same rows`);
        });
        await page.goBack();
        await page.waitForURL((u) => u.pathname + u.search === searched.address);
        await page.waitForLoadState('load');
        await assertWholePage(page, "Back to the search's page 1");
        assert.equal(await page.locator('#field-search').inputValue(), 'lead', 'page 1: the search box');
        assert.deepEqual(await rowNames(page), searched.rows, 'page 1: the same rows');
        assertClean(page);
        await context.close();
      });

      test(`${width}px: a long detail typed while the session ended comes back after signing in, and is saved only by Save`, async () => {
        const who = await member();
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, who.email, who.password);
        await page.goto('/contacts/new');
        const detail =
          'Wants a quote for 40 solar panels on a barn roof, south facing, 12 by 30 metres; call after 6 pm, '
            .repeat(4)
            .trim();
        await page.getByLabel('Name').fill('Marta Quinta');
        await page.getByLabel('Email').fill('marta@example.com');
        await page.getByLabel('Detail').fill(detail);
        const before = Number((await app.get('/api/v1/contacts?per_page=1')).body.meta.total);
        await endSessionsOf(who.id);

        await submit(page, 'Create contact');
        assert.equal(new URL(page.url()).pathname, '/login');
        await page.getByText('Your session had ended, so nothing was saved yet').waitFor();
        if (SHOTS)
          await page.screenshot({ path: path.join(SHOTS, `session-ended-sign-in-${width}.png`), fullPage: true });
        assert.equal(
          Number((await app.get('/api/v1/contacts?per_page=1')).body.meta.total),
          before,
          'nothing was saved',
        );

        await page.getByLabel('Email').fill(who.email);
        await page.getByLabel('Password').fill(who.password);
        await Promise.all([
          page.waitForURL('**/contacts/new'),
          page.locator('main').getByRole('button', { name: 'Sign in' }).click(),
        ]);
        await page.getByText('What you typed is back').waitFor();
        assert.equal(await page.getByLabel('Name').inputValue(), 'Marta Quinta');
        assert.equal(await page.getByLabel('Email').inputValue(), 'marta@example.com');
        assert.equal(await page.getByLabel('Detail').inputValue(), detail);
        if (SHOTS)
          await page.screenshot({ path: path.join(SHOTS, `session-ended-form-kept-${width}.png`), fullPage: true });
        assert.equal(
          Number((await app.get('/api/v1/contacts?per_page=1')).body.meta.total),
          before,
          'still nothing saved',
        );

        await submit(page, 'Create contact');
        assert.match(here(page), /^\/contacts\/\d+$/);
        const saved = (await app.get(`/api/v1/contacts/${here(page).split('/').pop()}`)).body.data;
        assert.equal(saved.detail, detail);
        assertClean(page);
        await context.close();
      });

      test(`${width}px: a live search after the session ended leads to the sign-in page, and back to the list after it`, async () => {
        const who = await member();
        const { context, page } = await newUser(browser, app.url, { viewport });
        await signIn(page, who.email, who.password);
        await page.goto('/inquiries');
        await endSessionsOf(who.id);
        await Promise.all([page.waitForURL('**/login?next=*'), page.locator('#field-search').fill('solar')]);
        assert.equal(new URL(page.url()).searchParams.get('next'), '/inquiries');
        await page.getByText('Your session had ended, so this page could not be updated').waitFor();
        if (SHOTS)
          await page.screenshot({
            path: path.join(SHOTS, `session-ended-live-search-sign-in-${width}.png`),
            fullPage: true,
          });
        await page.getByLabel('Email').fill(who.email);
        await page.getByLabel('Password').fill(who.password);
        await Promise.all([
          page.waitForURL('**/inquiries'),
          page.locator('main').getByRole('button', { name: 'Sign in' }).click(),
        ]);
        await assertWholePage(page, 'the list after signing in again');
        // The refused search was a 401 (with HX-Redirect): Chromium logs it, and nothing else went wrong.
        const trouble = watch(page);
        trouble.errors.splice(0, trouble.errors.length, ...trouble.errors.filter((e) => !/status of 401/.test(e)));
        assertClean(page);
        await context.close();
      });
    }

    test('the bell asking for its count after the session ended leaves a half-typed form where it is', async () => {
      const who = await member();
      const { context, page } = await newUser(browser, app.url);
      await signIn(page, who.email, who.password);
      // The bell asks once the page has loaded; here it asks only after the session has ended.
      let ended!: () => void;
      const sessionEnded = new Promise<void>((resolve) => {
        ended = resolve;
      });
      await page.route('**/notifications/bell', async (route) => {
        await sessionEnded;
        await route.continue();
      });
      await page.goto('/contacts/new');
      await page.getByLabel('Name').fill('Half Typed');
      await endSessionsOf(who.id);
      const answered = page.waitForResponse('**/notifications/bell');
      ended();
      assert.equal((await answered).status(), 204, 'signed out, the bell has nothing to say');
      await page.waitForTimeout(300); // what htmx would do with a redirect, it does within this
      assert.equal(here(page), '/contacts/new', 'the page stayed');
      assert.equal(await page.getByLabel('Name').inputValue(), 'Half Typed');
      await submit(page, 'Create contact');
      assert.equal(new URL(page.url()).pathname, '/login', 'saving leads to the sign-in page');
      await page.getByText('Your session had ended, so nothing was saved yet').waitFor();
      assertClean(page);
      await context.close();
    });
  });
}
