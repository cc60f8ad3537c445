// The web app as a new team would use it, in Chromium: first-admin setup,
// contacts and inquiries from creation to deletion, live search, filters,
// sorting and paging, assignment, state toggles, edit conflicts, password
// reset by mail, two-factor sign-in, CSV import and the profile; stored
// markup shown as text everywhere; axe on every page. Any JS dialog, console
// error, CSP violation or failed sub-resource fails the test (see helpers.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import {
  allDialogs,
  assertClean,
  assertShowsText,
  checkA11y,
  here,
  launchBrowser,
  linkIn,
  newestMail,
  newTab,
  newUser,
  signIn,
  signOut,
  startEmptyApp,
  submit,
  totp,
  visit,
  watch,
} from './helpers.ts';

const SCRIPT = '<script>alert(1)</script>';
const IMG = '"><img src=x onerror=alert(1)>';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** Rows of the results table: the text of each row's first cell. */
const firstCells = (page: Page, scope = '#results') => page.locator(`${scope} tbody tr td:first-child`).allInnerTexts();

/** Waits until the results table shows exactly `n` rows (after an htmx swap). */
async function waitForRows(page: Page, n: number, scope = '#results'): Promise<void> {
  try {
    await page.waitForFunction(([s, count]) => document.querySelectorAll(`${s} tbody tr`).length === count, [
      scope,
      n,
    ] as const);
  } catch (error) {
    const shown = await page
      .locator(scope)
      .innerText()
      .catch(() => '(none)');
    throw new Error(`expected ${n} rows in ${scope} at ${page.url()}, the results show:\n${shown.slice(0, 1500)}`, {
      cause: error,
    });
  }
}

/** Waits until the results' first cells are exactly `names` (after an htmx swap). */
async function waitForCells(page: Page, names: string[], scope = '#results'): Promise<void> {
  try {
    await page.waitForFunction(
      ([s, wanted]) =>
        JSON.stringify(
          [...document.querySelectorAll(`${s} tbody tr td:first-child`)].map((td) =>
            (td as HTMLElement).innerText.trim(),
          ),
        ) === wanted,
      [scope, JSON.stringify(names)] as const,
    );
  } catch (error) {
    throw new Error(
      `expected the rows ${JSON.stringify(names)} at ${page.url()}, the results show ${JSON.stringify(await firstCells(page, scope))}`,
      { cause: error },
    );
  }
}

for (const dialect of DIALECTS) {
  describe(`web app in Chromium on ${dialect}`, { concurrency: false }, () => {
    // The steps build on one another (the admin of the first, the agent of a later one):
    // after a failure the rest are skipped rather than failing for the same reason.
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
    const a11y = new Set<string>();
    const admin = { name: 'Ada Admin', email: 'ada@example.com', password: 'correct horse battery staple' };
    const agent = { name: `Bob ${IMG}`, email: 'bob@example.com', password: 'agent password 123' };
    let adminContext: BrowserContext;
    let page: Page;
    let agentContext: BrowserContext;
    let agentPage: Page;
    let token = '';
    let xssContactId = '';
    let printerInquiryId = '';
    let consultingId = '';
    let trainingId = '';
    let discontinuedServiceId = '';
    let tradeFairId = '';
    // The pages are the same HTML on either database: axe (about a second a page) runs on the first dialect only.
    const audit = dialect === DIALECTS[0];
    const axe = (p: Page, label: string) => (audit ? checkA11y(p, label, a11y) : assertClean(p, label));

    const api = async (method: string, path: string, json?: unknown) => {
      const response = await fetch(app.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };

    /** Creates a source or a service by name through the API; its id. */
    const lookup = async (resource: 'sources' | 'services', name: string) => {
      const created = await api('POST', `/api/v1/${resource}`, { name });
      assert.equal(created.status, 201, `creating the ${resource} "${name}": ${JSON.stringify(created.body)}`);
      return String(created.body.data.id);
    };

    before(async () => {
      app = await startEmptyApp(dialect);
      ({ context: adminContext, page } = await newUser(browser, app.url));
    });
    after(async () => {
      await adminContext?.close();
      await agentContext?.close();
      await app?.close();
    });

    step('first run: / leads to the setup form, which explains a mistake and creates the admin', async () => {
      await visit(page, '/');
      assert.equal(here(page), '/setup');
      assert.match(await page.title(), /Set up Leadbook/);
      await axe(page, 'setup');

      await page.getByLabel('Name (required)').fill(admin.name);
      await page.getByLabel('Email (required)').fill(admin.email);
      await page.getByLabel('Password (required)').fill('short');
      await submit(page, 'Create the admin account');
      assert.equal(here(page), '/setup');
      await page.locator('#field-password-error').waitFor();
      assert.equal(await page.getByLabel('Name (required)').inputValue(), admin.name, 'the typed name is kept');
      assert.equal(await page.getByLabel('Email (required)').inputValue(), admin.email, 'the typed email is kept');
      assert.equal(await page.getByLabel('Password (required)').getAttribute('aria-invalid'), 'true');
      await axe(page, 'setup with errors');

      await page.getByLabel('Password (required)').fill(admin.password);
      await submit(page, 'Create the admin account');
      assert.equal(here(page), '/');
      await assertShowsText(page, 'Your admin account is ready', 'the dashboard after setup');
      await assertShowsText(page, admin.name, 'the header');
      await axe(page, 'dashboard (empty)');

      await visit(page, '/setup');
      assert.equal(
        here(page),
        '/',
        'setup is closed once an account exists (a signed-in admin lands on the dashboard)',
      );
      assertClean(page);
    });

    step(
      'sign-in: a wrong password is refused with a message, then remember me works; skip link and focus are visible',
      async () => {
        await signOut(page);
        await assertShowsText(page, 'You are signed out', 'the sign-in page');
        await axe(page, 'login');

        await page.getByLabel('Email').fill(admin.email);
        await page.getByLabel('Password').fill('not the password');
        await page.locator('main').getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        assert.equal(here(page), '/login');
        assert.equal(await page.getByLabel('Email').inputValue(), admin.email, 'the typed email is kept');
        await axe(page, 'login with an error');

        // Focus on a button is visible too (keyboard focus: Tab to it).
        await page.getByLabel('Remember me on this device').focus();
        await page.keyboard.press('Tab');
        const button = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          return { tag: el.tagName, text: el.textContent, outline: getComputedStyle(el).outlineStyle };
        });
        assert.deepEqual([button.tag, button.text], ['BUTTON', 'Sign in']);
        assert.notEqual(button.outline, 'none', 'the focused button has an outline');

        await page.getByLabel('Password').fill(admin.password);
        await page.getByLabel('Remember me on this device').check();
        await submit(page, 'Sign in');
        assert.equal(here(page), '/');
        const cookies = await adminContext.cookies();
        assert.ok(
          cookies.some((c) => c.name === 'leadbook_remember' && c.expires > Date.now() / 1000),
          'remember me leaves a lasting cookie',
        );
        // The browser "restarts" (its session cookie is gone): the remembered device is still signed in.
        await adminContext.clearCookies({ name: 'leadbook_session' });
        await visit(page, '/');
        assert.equal(here(page), '/', 'remember me signs the device back in');

        // Keyboard: on a fresh page, the first Tab lands on the skip link, shown with a visible outline;
        // Enter moves focus to the main content. (The sign-in form autofocuses its first field, so this
        // is checked on the dashboard.)
        await visit(page, '/');
        await page.keyboard.press('Tab');
        const skip = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const style = getComputedStyle(el);
          const box = el.getBoundingClientRect();
          return {
            cls: el.className,
            text: el.textContent,
            outline: style.outlineStyle,
            left: box.left,
            right: box.right,
          };
        });
        assert.equal(skip.cls, 'skip-link');
        assert.equal(skip.text, 'Skip to content');
        assert.notEqual(skip.outline, 'none', 'the focused skip link has an outline');
        assert.ok(skip.left >= 0 && skip.right > 0, 'the focused skip link is on screen');
        await page.keyboard.press('Enter');
        assert.equal(
          await page.evaluate(() => document.activeElement?.id),
          'main',
          'the skip link moves focus to the main content',
        );
        await page.keyboard.press('Tab');
        const link = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          return { tag: el.tagName, outline: getComputedStyle(el).outlineStyle };
        });
        assert.deepEqual(
          link,
          { tag: 'A', outline: 'solid' },
          'the next Tab reaches a link in the content, with a visible outline',
        );
        assertClean(page);

        const issued = await fetch(`${app.url}/api/v1/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: admin.email, password: admin.password, device_name: 'browser tests' }),
        });
        assert.equal(issued.status, 201);
        token = ((await issued.json()) as { token: string }).token;
      },
    );

    step(
      'contacts: empty index, create with a validation error kept next to its field, edit, delete after confirming',
      async () => {
        // The lists a contact picks from are kept by admins (on the settings page); made here through the API.
        consultingId = await lookup('services', 'Consulting');
        trainingId = await lookup('services', 'Training');
        discontinuedServiceId = await lookup('services', 'Discontinued service');
        tradeFairId = await lookup('sources', 'Trade fair');
        await visit(page, '/contacts');
        await assertShowsText(page, 'No contacts match', 'the empty contacts index');
        await axe(page, 'contacts index (empty)');

        await page.locator('main').getByRole('link', { name: 'New contact' }).click();
        await page.waitForURL('**/contacts/new');
        await axe(page, 'contact form (new)');
        await page.getByLabel('Name').fill('Grace Hopper');
        await page.getByLabel('Email').fill('grace@example.com');
        await page.getByLabel('City').fill('Arlington');
        // A service the form offered is removed (by another admin) before the save: the save is refused, the error
        // is next to the Service picker, and everything else typed or chosen is kept.
        await page.getByLabel('Service').selectOption({ label: 'Discontinued service' });
        await page.getByLabel('Source').selectOption({ label: 'Trade fair' });
        assert.equal((await api('DELETE', `/api/v1/services/${discontinuedServiceId}`)).status, 204);
        await submit(page, 'Create contact');
        assert.equal(here(page), '/contacts');
        await assertShowsText(page, 'Please correct the field below', 'the form with an error');
        const error = page.locator('#field-service_id-error');
        assert.match(await error.innerText(), /no service/, 'the error is next to the field and says what is wrong');
        assert.equal(await page.locator('#field-service_id').getAttribute('aria-invalid'), 'true');
        assert.equal(
          await page.locator('#field-service_id').getAttribute('aria-describedby'),
          'field-service_id-error',
        );
        assert.equal(
          await page.locator('#field-service_id option', { hasText: 'Discontinued service' }).count(),
          0,
          'the removed service is no longer offered',
        );
        assert.equal(await page.getByLabel('Name').inputValue(), 'Grace Hopper');
        assert.equal(await page.getByLabel('City').inputValue(), 'Arlington');
        assert.equal(
          await page.getByLabel('Source').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.text),
          'Trade fair',
          'the chosen source is kept',
        );
        assert.equal(await page.locator('.field-error').count(), 1, 'one error only');
        await axe(page, 'contact form with errors');

        await page.getByLabel('Service').selectOption({ label: 'Consulting' });
        await submit(page, 'Create contact');
        assert.match(here(page), /^\/contacts\/\d+$/);
        const id = here(page).split('/').pop()!;
        await assertShowsText(page, 'Grace Hopper was created', 'the flash');
        const details = page.locator('dl.record');
        await assertShowsText(page, 'Arlington', 'the detail page');
        assert.match(await details.innerText(), /Created by\s+Ada Admin/, 'created_by shows the user name');
        assert.match(await details.innerText(), /Service\s+Consulting/, 'the service is shown by name');
        assert.match(await details.innerText(), /Source\s+Trade fair/, 'the source is shown by name');
        const stored = (await api('GET', `/api/v1/contacts/${id}`)).body.data;
        assert.deepEqual([String(stored.service_id), String(stored.source_id)], [consultingId, tradeFairId]);
        await axe(page, 'contact detail');

        await page.locator('main').getByRole('link', { name: 'Edit' }).click();
        await page.waitForURL(`**/contacts/${id}/edit`);
        assert.equal(
          await page.getByLabel('Service').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.text),
          'Consulting',
          'the edit form shows the stored service chosen',
        );
        await axe(page, 'contact form (edit)');
        await page.getByLabel('City').fill('New York');
        await submit(page, 'Save changes');
        assert.equal(here(page), `/contacts/${id}`);
        await assertShowsText(page, 'Your changes were saved', 'the flash');
        assert.match(await page.locator('dl.record').innerText(), /City\s+New York/);

        await page.locator('main').getByRole('link', { name: 'Delete' }).click();
        await page.waitForURL(`**/contacts/${id}/delete`);
        await assertShowsText(page, 'go to the trash for 30 days', 'the delete confirmation');
        await axe(page, 'contact delete confirmation');
        await submit(page, 'Delete');
        assert.equal(here(page), '/contacts');
        await assertShowsText(page, 'Grace Hopper was deleted. It is in the trash', 'the flash');
        await visit(page, `/contacts/${id}`, 404);
        await assertShowsText(page, 'Not found', 'the 404 page');
        await axe(page, 'not found page');
        // Back from the trash, whole: same address, same values.
        await visit(page, '/trash', 200);
        await axe(page, 'trash');
        await page.getByRole('button', { name: 'Restore Grace Hopper' }).click();
        await page.waitForURL(`**/contacts/${id}`);
        await assertShowsText(page, 'Grace Hopper is back', 'the flash');
        assert.match(await page.locator('dl.record').innerText(), /City\s+New York/);
        await page.locator('main').getByRole('link', { name: 'Delete' }).click();
        await submit(page, 'Delete');
      },
    );

    step(
      'contacts list: paging with the total, per-page choice, live search with the URL updated, sorting by a header',
      async () => {
        const created = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            api('POST', '/api/v1/contacts', {
              name: `Bulk contact ${String(i + 1).padStart(2, '0')}`,
              email: `bulk${i + 1}@example.com`,
              city: i % 3 === 0 ? 'Lisbon' : 'Porto',
              service_id: Number(i % 2 ? consultingId : trainingId),
            }),
          ),
        );
        assert.deepEqual(
          created.map((r) => r.status),
          Array(30).fill(201),
        );

        await visit(page, '/contacts');
        await assertShowsText(page, 'Showing 1–25 of 30', 'the pager');
        assert.equal((await firstCells(page)).length, 25);
        await axe(page, 'contacts index (results)');

        await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Next' }).click();
        await page.waitForURL(/page=2/);
        await assertShowsText(page, 'Showing 26–30 of 30', 'page 2');
        assert.equal((await firstCells(page)).length, 5);

        // Per page: the select swaps the results in place and the URL follows.
        await visit(page, '/contacts');
        await page.getByLabel('Per page').selectOption('10');
        await page.waitForURL(/per_page=10/);
        await waitForRows(page, 10);
        await assertShowsText(page, 'Showing 1–10 of 30', 'the pager');
        assert.ok(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: '3' }).isVisible());
        assertClean(page);

        // Live search: typing swaps the rows (no page load) and puts the search in the URL.
        const before = await firstCells(page);
        const marker = await page.evaluate(() => {
          (window as unknown as { stay: number }).stay = 1;
          return 1;
        });
        await page.getByLabel('Search contacts').pressSequentially('Bulk contact 07', { delay: 20 });
        await page.waitForURL(/search=Bulk(\+|%20)contact(\+|%20)07/);
        await waitForCells(page, ['Bulk contact 07']);
        const after = await firstCells(page);
        assert.notDeepEqual(after, before);
        assert.equal(
          await page.evaluate(() => (window as unknown as { stay?: number }).stay),
          marker,
          'the search did not reload the page',
        );
        assert.equal(
          await page.getByLabel('Search contacts').inputValue(),
          'Bulk contact 07',
          'the typed text stays in the box',
        );
        assertClean(page);

        // No match: it says so and offers to clear.
        await page.getByLabel('Search contacts').fill('nobody-has-this-name');
        await page.waitForURL(/search=nobody-has-this-name/);
        await page.getByText('No contacts match “nobody-has-this-name”').waitFor();
        await axe(page, 'contacts index (no match)');
        await page.locator('#results').getByRole('link', { name: 'Clear the search and filters' }).click();
        await page.waitForURL((u) => u.pathname === '/contacts' && u.search === '');
        await assertShowsText(page, 'Showing 1–25 of 30', 'the cleared index');

        // A reload keeps the search (the URL is the state).
        await visit(page, '/contacts?search=Lisbon');
        assert.equal(await page.getByLabel('Search contacts').inputValue(), 'Lisbon');
        await assertShowsText(page, 'Showing 1–10 of 10', 'the Lisbon contacts');

        // Sorting by a column header: ascending, then descending.
        await visit(page, '/contacts');
        await page.locator('#results thead').getByRole('link', { name: /^Name/ }).click();
        await page.waitForURL(/sort=name/);
        assert.equal(await page.locator('#results thead th').first().getAttribute('aria-sort'), 'ascending');
        const ascending = await firstCells(page);
        assert.equal(ascending[0], 'Bulk contact 01');
        assert.deepEqual(ascending, [...ascending].sort());
        await page.locator('#results thead').getByRole('link', { name: /^Name/ }).click();
        await page.waitForURL(/sort=-name/);
        assert.equal(await page.locator('#results thead th').first().getAttribute('aria-sort'), 'descending');
        assert.equal((await firstCells(page))[0], 'Bulk contact 30');
        assertClean(page);
      },
    );

    step(
      'users: the admin invites an agent through /users/new; the agent chooses a password through the mailed link',
      async () => {
        // Users are reached from the admin's Settings page (no longer a link of their own in the navigation).
        await visit(page, '/');
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
        await page.waitForURL('**/settings');
        await axe(page, 'settings');
        await page.locator('main').getByRole('link', { name: 'Pipeline stages' }).click();
        await page.waitForURL('**/stages?sort=position');
        assert.deepEqual(
          (await page.locator('#results tbody tr td:first-of-type').allInnerTexts()).map((t) => t.trim()),
          ['New', 'Contacted', 'Qualified', 'Won', 'Lost'],
          'the default pipeline, in order',
        );
        await axe(page, 'pipeline stages');
        await page.goBack();
        await page.waitForURL('**/settings');
        await page.locator('main').getByRole('link', { name: 'Users', exact: true }).click();
        await page.waitForURL('**/users');
        await axe(page, 'users index');
        await page.locator('main').getByRole('link', { name: 'New user' }).click();
        await page.waitForURL('**/users/new');
        await page.getByLabel('Name (required)').fill(agent.name);
        await page.getByLabel('Email (required)').fill(agent.email);
        await page.getByLabel('Role (required)').selectOption('agent');
        await axe(page, 'user form (new)');
        const since = Date.now() - 1000;
        await submit(page, 'Create user');
        assert.match(here(page), /^\/users\/\d+$/);
        await assertShowsText(page, `We emailed an invitation to ${agent.email}`, 'the new user page');
        await axe(page, 'user detail');

        const link = linkIn(await newestMail(app.dataDir, since), '/invitation');
        const { context, page: invited } = await newUser(browser, app.url);
        await visit(invited, link);
        await axe(invited, 'invitation');
        await invited.getByLabel('Your new password').fill(agent.password);
        await submit(invited, 'Set my password');
        assert.equal(here(invited), '/login');
        await assertShowsText(invited, 'Your password is set', 'the sign-in page after the invitation');
        assertClean(invited);
        await context.close();
      },
    );

    step(
      'inquiries: assigned to the agent (assigned date filled in), seen on the agent’s dashboard; states cycle from the list; filters',
      async () => {
        await visit(page, '/inquiries');
        await axe(page, 'inquiries index (empty)');
        await visit(page, '/inquiries/new');
        await page.getByLabel('Name').fill('Printer order');
        await page.getByLabel('Email').fill('orders@example.com');
        await page.getByLabel('Assigned to').selectOption({ label: agent.name });
        await axe(page, 'inquiry form (new)');
        await submit(page, 'Create inquiry');
        assert.match(here(page), /^\/inquiries\/\d+$/);
        printerInquiryId = here(page).split('/').pop()!;
        const details = await page.locator('dl.record').innerText();
        assert.ok(
          details.includes(`Assigned to\n${agent.name}`) || details.includes(`Assigned to\t${agent.name}`),
          `the assignee is shown by name:\n${details}`,
        );
        assert.doesNotMatch(details, /Assigned date\s+—/, 'the assigned date was filled in');
        assert.equal((await page.locator('dl.record time').count()) >= 1, true);
        await axe(page, 'inquiry detail');

        // A second inquiry, unassigned, so filters have something to tell apart.
        const other = await api('POST', '/api/v1/inquiries', { name: 'Website question', inquiry_status: false });
        assert.equal(other.status, 201);

        // The agent, in a browser of their own, sees it under "Assigned to me".
        ({ context: agentContext, page: agentPage } = await newUser(browser, app.url));
        await signIn(agentPage, agent.email, agent.password);
        assert.equal(here(agentPage), '/');
        const mine = agentPage.locator('#mine');
        await mine.getByRole('link', { name: 'Printer order' }).waitFor();
        assert.equal(await mine.getByRole('link', { name: 'Website question' }).count(), 0);
        assert.match(await agentPage.locator('.grid').innerText(), /1\s+Assigned to me/);
        await axe(agentPage, 'dashboard (agent, with data)');
        // At phone width the header is laid out differently (the name must stay, or the profile link is empty).
        await agentPage.setViewportSize({ width: 390, height: 844 });
        await axe(agentPage, 'dashboard (agent, at phone width)');
        assert.ok(await agentPage.locator('header .profile-link').isVisible(), 'the profile link is shown on a phone');
        assert.ok(
          await agentPage.evaluate(() => document.documentElement.scrollWidth <= 390),
          'nothing pushes the page sideways at 390 px',
        );
        await agentPage.setViewportSize({ width: 1280, height: 800 });
        assert.equal(await agentPage.getByRole('link', { name: 'Users' }).count(), 0, 'an agent has no Users entry');
        assert.equal(
          await agentPage.getByRole('link', { name: 'Settings' }).count(),
          0,
          'an agent has no Settings entry (where Users are)',
        );

        // The state toggle cycles Not set → Yes → No → Not set, in place (the states are columns of this list).
        await visit(page, '/inquiries?columns=name,inquiry_status,status,inquiry_type,assigned_to');
        await axe(page, 'inquiries index (results)');
        const row = page.locator('#results tbody tr', { has: page.getByRole('link', { name: 'Printer order' }) });
        const toggle = () => row.getByRole('button', { name: /^Inquiry status:/ });
        for (const [from, to] of [
          ['Not set', 'Yes'],
          ['Yes', 'No'],
          ['No', 'Not set'],
          ['Not set', 'Yes'],
        ]) {
          assert.equal(await toggle().innerText(), from);
          await toggle().click();
          await row.getByRole('button', { name: `Inquiry status: ${to}. Change it` }).waitFor();
        }
        assertClean(page);
        await visit(page, `/inquiries/${printerInquiryId}`);
        assert.match(await page.locator('dl.record').innerText(), /Inquiry status\s+Yes/, 'the toggle was saved');

        // Filters: a boolean state, then the assignee.
        await visit(page, '/inquiries');
        await waitForRows(page, 2);
        // The filters fold away until opened (or until one is set).
        assert.equal(await page.locator('#filter-inquiry_status').isVisible(), false, 'filters start folded');
        await page.locator('details.more-filters summary').click();
        await page.locator('#filter-inquiry_status').selectOption('true');
        await page.waitForURL(/filter%5Binquiry_status%5D=true|filter\[inquiry_status\]=true/);
        await waitForCells(page, ['Printer order']);
        await page.locator('#filter-inquiry_status').selectOption('false');
        await waitForCells(page, ['Website question']);
        await page.locator('#filter-inquiry_status').selectOption('null');
        await page.getByText('No inquiries match').waitFor();
        await page.locator('#filter-inquiry_status').selectOption('');
        await waitForRows(page, 2);
        await page.locator('#filter-assigned_to').selectOption({ label: agent.name });
        await waitForCells(page, ['Printer order']);
        await page.locator('#filter-assigned_to').selectOption('null');
        await waitForCells(page, ['Website question']);
        assert.match(here(page), /assigned_to/);
        assertClean(page);
      },
    );

    step('an inquiry made from a contact copies its fields; stored markup is text', async () => {
      const contact = await api('POST', '/api/v1/contacts', {
        name: SCRIPT,
        city: IMG,
        detail: `${SCRIPT} ${IMG}`,
        email: 'xss@example.com',
        phone: '+1 555 0100',
      });
      assert.equal(contact.status, 201);
      xssContactId = String(contact.body.data.id);
      await visit(page, `/contacts/${xssContactId}`);
      await page.locator('main').getByRole('link', { name: 'Create inquiry' }).click();
      await page.waitForURL(`**/inquiries/new?from=${xssContactId}`);
      await assertShowsText(page, `Copied from the contact “${SCRIPT}”`, 'the new inquiry form');
      assert.equal(await page.getByLabel('Name').inputValue(), SCRIPT);
      assert.equal(await page.getByLabel('City').inputValue(), IMG);
      assert.equal(await page.getByLabel('Phone').inputValue(), '+1 555 0100');
      assert.equal(await page.getByLabel('Email').inputValue(), 'xss@example.com');
      await page.getByLabel('Inquiry country').fill(IMG);
      await axe(page, 'inquiry form (from a contact)');
      await submit(page, 'Create inquiry');
      assert.match(here(page), /^\/inquiries\/\d+$/);
      const details = await page.locator('dl.record').innerText();
      assert.match(details, /Phone\s+\+1 555 0100/);
      assert.ok(details.includes(IMG), 'the copied city is shown as text');
      assertClean(page);
    });

    step(
      'two tabs edit the same contact: different fields both stay; the same field shows both versions and overwrites nothing',
      async () => {
        const tabA = page;
        const tabB = await newTab(adminContext);
        const path = `/contacts/${xssContactId}`;
        try {
          await visit(tabA, `${path}/edit`);
          await visit(tabB, `${path}/edit`);
          await tabA.getByLabel('Phone').fill('+44 20 7946 0000');
          await submit(tabA, 'Save changes');
          assert.equal(here(tabA), path);
          // Another field in the other tab: no conflict, both changes kept.
          await tabB.getByLabel('Occupation').fill('Buyer');
          await submit(tabB, 'Save changes');
          assert.equal(here(tabB), path, 'the second save went through');
          const both = (await api('GET', `/api/v1${path}`)).body.data;
          assert.deepEqual([both.phone, both.occupation], ['+44 20 7946 0000', 'Buyer']);

          // The same field in both: the second save shows both versions, names the field and writes nothing.
          await visit(tabA, `${path}/edit`);
          await visit(tabB, `${path}/edit`);
          await tabA.getByLabel('Budget').fill('4000 EUR');
          await submit(tabA, 'Save changes');
          await tabB.getByLabel('Budget').fill(`${SCRIPT} 5000`);
          const [response] = await Promise.all([
            tabB.waitForResponse((r) => r.request().method() === 'POST'),
            tabB.locator('main').getByRole('button', { name: 'Save changes' }).click(),
          ]);
          assert.equal(response.status(), 409);
          await tabB.getByRole('heading', { name: 'Someone else saved this contact first' }).waitFor();
          await assertShowsText(tabB, 'You both changed Budget.', 'the conflict page');
          await assertShowsText(tabB, 'Nothing of yours was written', 'the conflict page');
          const table = await tabB.locator('main table').innerText();
          assert.ok(table.includes('4000 EUR'), 'their budget is shown');
          assert.ok(table.includes(`${SCRIPT} 5000`), 'my budget is shown, as text');
          assert.ok(!table.includes('Phone'), 'only the field both changed is compared');
          await assertShowsText(tabB, `another change to “${SCRIPT}” was saved`, 'the conflict page');
          await axe(tabB, 'conflict page');
          assert.equal(
            (await api('GET', `/api/v1${path}`)).body.data.budget,
            '4000 EUR',
            'the second save wrote nothing',
          );

          await Promise.all([
            tabB.waitForURL(`**${path}`),
            tabB.locator('main').getByRole('link', { name: 'Keep theirs' }).click(),
          ]);
          assertClean(tabB);
        } finally {
          await tabB.close();
        }
      },
    );

    step('profile: the name, with markup in it, is saved and shown as text in the header', async () => {
      await visit(page, '/profile');
      await axe(page, 'profile');
      await page.locator('#field-name').fill('n'.repeat(256));
      await submit(page, 'Save profile');
      await page.locator('#field-name-error').waitFor();
      assert.equal(await page.locator('#field-name').inputValue(), 'n'.repeat(256), 'the typed name is kept');
      await axe(page, 'profile with errors');
      admin.name = `Ada ${SCRIPT}`;
      await page.locator('#field-name').fill(admin.name);
      await submit(page, 'Save profile');
      assert.equal(here(page), '/profile');
      await assertShowsText(page, 'Your profile was saved', 'the profile');
      assert.equal(
        await page.locator('header .profile-link').innerText(),
        admin.name,
        'the header shows the new name as text',
      );
      assert.equal(await page.locator('#field-name').inputValue(), admin.name);
      assertClean(page);
    });

    step('stored markup is shown as text on every page that shows it, and never runs', async () => {
      const pages: [Page, string, string[]][] = [
        [page, '/contacts', [SCRIPT, IMG]],
        [page, `/contacts?search=${encodeURIComponent('script')}`, [SCRIPT]],
        [page, `/contacts/${xssContactId}`, [SCRIPT, IMG, admin.name]],
        [page, '/inquiries', [SCRIPT, IMG, agent.name]],
        [page, '/', [SCRIPT, agent.name, admin.name]],
        [page, '/users', [agent.name, admin.name]],
        [page, `/contacts/${xssContactId}/edit`, [admin.name]],
        [agentPage, '/', [agent.name, 'Printer order']],
        [agentPage, `/inquiries/${printerInquiryId}`, [agent.name]],
      ];
      for (const [p, path, texts] of pages) {
        await visit(p, path);
        for (const text of texts) await assertShowsText(p, text, path);
        assert.equal(
          await p.locator('main img[src="x"], main script:not([src])').count(),
          0,
          `no injected element on ${path}`,
        );
        assertClean(p, path);
      }
      await visit(page, `/contacts/${xssContactId}`);
      assert.ok(
        (await page.locator('dl.record').innerText()).includes(`Created by\n${admin.name}`),
        'created_by shows the name with markup as text',
      );
      await visit(page, '/');
      await axe(page, 'dashboard (admin, with data)');

      // Edit forms keep the markup as values.
      await visit(page, `/contacts/${xssContactId}/edit`);
      assert.equal(await page.getByLabel('Name').inputValue(), SCRIPT);
      assert.equal(await page.getByLabel('City').inputValue(), IMG);
      assert.equal(await page.getByLabel('Detail').inputValue(), `${SCRIPT} ${IMG}`);
      assert.equal(await page.locator('main img[src="x"]').count(), 0);
      assertClean(page, 'the edit form');

      // The live-search fragment (htmx) is escaped too.
      await visit(page, '/contacts');
      await page.getByLabel('Search contacts').fill('script');
      await waitForRows(page, 1);
      await assertShowsText(page, SCRIPT, 'the live search results');
      assertClean(page, 'the live search results');
    });

    step('CSV: import with one bad row gives a report naming it; export downloads the current view', async () => {
      await visit(page, '/contacts');
      await page.locator('main').getByRole('link', { name: 'Import CSV' }).click();
      await page.waitForURL('**/contacts/import');
      await axe(page, 'import page');
      const csv = [
        // A service by its name or by its id; the bad row names one that does not exist.
        'name,email,city,service_id',
        'Imported One,one@example.com,Oslo,Consulting',
        `Imported Two,two@example.com,"${IMG.replace(/"/g, '""')}",No such service`,
        `Imported Three,three@example.com,Bergen,${trainingId}`,
      ].join('\r\n');
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      // The wizard: every column matched by its name, a preview, the import, its report (test/browser/import-wizard
      // tests the matching by hand, the encodings and the rollback).
      await page.locator('main').getByRole('button', { name: 'Upload and match columns' }).click();
      await page.locator('main').getByRole('button', { name: 'Preview the import' }).click();
      await page.locator('main').getByRole('button', { name: 'Import 2 rows' }).click();
      await page.getByRole('heading', { name: 'Rows that failed' }).waitFor();
      const failed = page.locator('main table tbody tr');
      assert.equal(await failed.count(), 1);
      const cells = await failed.first().locator('td').allInnerTexts();
      assert.equal(cells[0], '2', 'the bad row is row 2');
      assert.match(cells[1] ?? '', /service_id/, 'the problem names the field');
      await axe(page, 'import report');
      const imported = await api('GET', '/api/v1/contacts?search=Imported&sort=name');
      assert.deepEqual(
        imported.body.data.map((c: { name: string }) => c.name),
        ['Imported One', 'Imported Three'],
        'the good rows are in, the bad one is not',
      );
      assert.deepEqual(
        imported.body.data.map((c: { service_id: unknown }) => String(c.service_id)),
        [consultingId, trainingId],
        'a service is taken by its name or by its id',
      );

      // Without a file the browser asks for one; a file none of whose columns fills a field is refused, naming why.
      await visit(page, '/contacts/import');
      assert.equal(
        await page.getByLabel('CSV file').evaluate((el: HTMLInputElement) => el.checkValidity()),
        false,
        'a file is required',
      );
      await page.getByLabel('CSV file').setInputFiles({
        name: 'typo.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from('colour,mood\r\nred,fine\r\n'),
      });
      await page.locator('main').getByRole('button', { name: 'Upload and match columns' }).click();
      await page.locator('main').getByRole('button', { name: 'Preview the import' }).click();
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /No column/, 'the file is refused, saying why');
      await axe(page, 'import page with an error');

      // Export: the current view (its search), as a download.
      await visit(page, '/contacts?search=Imported');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('main').getByRole('link', { name: 'Export CSV' }).click(),
      ]);
      assert.match(download.suggestedFilename(), /\.csv$/);
      const text = fs.readFileSync(await download.path(), 'utf8').replace(/^\uFEFF/, '');
      const lines = text.trim().split(/\r?\n/);
      assert.match(lines[0]!, /^id,name,email,/);
      assert.deepEqual(
        lines
          .slice(1)
          .map((l) => l.split(',')[1])
          .sort(),
        ['Imported One', 'Imported Three'],
      );
      const serviceColumn = lines[0]!.split(',').indexOf('service_id');
      assert.ok(serviceColumn > 0, `the export has the service: ${lines[0]}`);
      assert.deepEqual(
        lines
          .slice(1)
          .map((l) => l.split(',')[serviceColumn])
          .sort(),
        ['Consulting', 'Training'],
        'the service is exported by its name (as the import takes it back)',
      );
      assertClean(page);
    });

    step(
      "email verification: the notice links to the resend page; the mailed link confirms the address (the admin: the agent's was confirmed by the invitation)",
      async () => {
        await visit(page, '/');
        await page.getByRole('link', { name: 'see how, or get a new link' }).click();
        await page.waitForURL('**/verify-email');
        await axe(page, 'verify email notice');
        const since = Date.now() - 1000;
        await submit(page, 'Send the link again');
        await assertShowsText(page, 'A new confirmation link is on its way', 'the notice');
        const link = linkIn(await newestMail(app.dataDir, since), '/verify-email/');
        await visit(page, link);
        assert.equal(here(page), '/');
        await assertShowsText(page, 'your email address is confirmed', 'the dashboard');
        assert.equal(await page.getByText('Please confirm your email address').count(), 0, 'the notice is gone');
        assertClean(page);
      },
    );

    step('without JavaScript: sign in, search with the Apply button, cycle a state, create a contact', async () => {
      const context = await browser.newContext({
        baseURL: app.url,
        javaScriptEnabled: false,
        viewport: { width: 390, height: 844 },
        locale: 'en-US',
      });
      context.setDefaultTimeout(10_000);
      try {
        const plain = await context.newPage();
        watch(plain);
        await signIn(plain, agent.email, agent.password);
        assert.equal(here(plain), '/');
        await visit(plain, '/inquiries?columns=name,status');
        await plain.getByLabel('Search inquiries').fill('Printer');
        await submit(plain, 'Apply');
        assert.match(here(plain), /search=Printer/);
        assert.deepEqual(await firstCells(plain), ['Printer order']);
        const toggle = plain.getByRole('button', { name: /^Status:/ });
        const before = await toggle.innerText();
        await Promise.all([plain.waitForNavigation(), toggle.click()]);
        assert.match(here(plain), /^\/inquiries\?search=Printer/, 'back to the same list');
        await assertShowsText(plain, 'Status of Printer order is now', 'the flash');
        assert.notEqual(await plain.getByRole('button', { name: /^Status:/ }).innerText(), before);
        await visit(plain, '/contacts/new');
        await plain.getByLabel('Name').fill('No-script contact');
        await submit(plain, 'Create contact');
        assert.match(here(plain), /^\/contacts\/\d+$/);
        await assertShowsText(plain, 'No-script contact was created', 'the flash');
        assertClean(plain);
      } finally {
        await context.close();
      }
    });

    step('forgot password: the mailed link opens the reset form; the new password signs in', async () => {
      await signOut(agentPage);
      await agentPage.getByRole('link', { name: 'Forgot your password?' }).click();
      await agentPage.waitForURL('**/forgot-password');
      await axe(agentPage, 'forgot password');
      const since = Date.now() - 1000;
      await agentPage.getByLabel('Email').fill(agent.email);
      await submit(agentPage, 'Mail me a reset link');
      await assertShowsText(agentPage, 'a reset link is on its way', 'the sign-in page');

      const link = linkIn(await newestMail(app.dataDir, since), '/reset-password');
      assert.match(link, /token=[^&]+&email=bob%40example\.com$/);
      await visit(agentPage, link);
      assert.equal(await agentPage.getByLabel('Email').inputValue(), agent.email);
      await axe(agentPage, 'reset password');
      await agentPage.getByLabel('New password').fill('short');
      await submit(agentPage, 'Set the new password');
      await agentPage.locator('#field-password-error').waitFor();
      await axe(agentPage, 'reset password with errors');
      agent.password = 'a brand new agent password';
      await agentPage.getByLabel('New password').fill(agent.password);
      await submit(agentPage, 'Set the new password');
      assert.equal(here(agentPage), '/login');
      await assertShowsText(agentPage, 'Your password has been reset', 'the sign-in page');
      await signIn(agentPage, agent.email, agent.password);
      assert.equal(here(agentPage), '/');
      assertClean(agentPage);

      // The link works once.
      await visit(agentPage, link);
      await agentPage.getByLabel('New password').fill('yet another password 1');
      await submit(agentPage, 'Set the new password');
      await assertShowsText(agentPage, 'This link is invalid or has expired', 'the used link');
      await axe(agentPage, 'reset password (used link)');
    });

    step(
      'two-factor: enabled on the profile with a code from oathtool; sign-in then asks for a code, or takes a recovery code',
      async () => {
        await visit(page, '/profile');
        const password = page.locator('#enable-password');
        if (await password.count()) await password.fill(admin.password);
        await submit(page, 'Enable two-factor authentication');
        await page.getByRole('heading', { name: 'Set up two-factor authentication' }).waitFor();
        await axe(page, 'two-factor setup');
        const secret = (await page.locator('#two-factor-secret').innerText()).replace(/\s+/g, '');
        assert.match(secret, /^[A-Z2-7]+=*$/, 'the key is base32');
        await page.getByLabel('6-digit code from the app').fill(totp(secret));
        await submit(page, 'Turn on');
        const codes = (await page.locator('#recovery-codes li').allInnerTexts()).map((c) => c.trim());
        assert.ok(codes.length >= 8, `recovery codes are shown: ${codes.join(', ')}`);
        await axe(page, 'recovery codes');
        await visit(page, '/profile');
        await assertShowsText(page, 'On.', 'the profile with two-factor on');

        await signOut(page);
        await adminContext.clearCookies();
        await signIn(page, admin.email, admin.password);
        assert.equal(new URL(page.url()).pathname, '/two-factor-challenge');
        await axe(page, 'two-factor challenge');
        const valid = [-30, 0, 30, 60].map((s) => totp(secret, s));
        await page
          .getByLabel('Authentication code')
          .fill(['000000', '111111', '222222'].find((c) => !valid.includes(c))!);
        await submit(page, 'Continue');
        await page.locator('#field-code-error').waitFor();
        await axe(page, 'two-factor challenge with an error');
        // The current step's code turned two-factor on and is never accepted again; the next step's is (one step of drift).
        await page.getByLabel('Authentication code').fill(totp(secret, 30));
        await submit(page, 'Continue');
        assert.equal(here(page), '/');

        await signOut(page);
        await signIn(page, admin.email, admin.password);
        assert.equal(new URL(page.url()).pathname, '/two-factor-challenge');
        await page.getByText('Use a recovery code instead').click();
        await page.getByLabel('Recovery code').fill(codes[0]!);
        await submit(page, 'Continue');
        assert.equal(here(page), '/');
        assertClean(page);

        // A used recovery code does not work twice.
        await signOut(page);
        await signIn(page, admin.email, admin.password);
        await page.getByText('Use a recovery code instead').click();
        await page.getByLabel('Recovery code').fill(codes[0]!);
        await submit(page, 'Continue');
        assert.equal(new URL(page.url()).pathname, '/two-factor-challenge');
        await page.locator('#field-recovery_code-error').waitFor();
        await page.getByLabel('Recovery code').fill(codes[1]!);
        await submit(page, 'Continue');
        assert.equal(here(page), '/');
        assertClean(page);
      },
    );

    test('no JavaScript dialog opened on any page (stored markup never ran)', () => {
      assert.deepEqual(allDialogs, []);
    });

    step('every page was checked with axe', (t) => {
      if (!audit) return t.skip(`axe ran on ${DIALECTS[0]}`);
      const expected = [
        'setup',
        'setup with errors',
        'login',
        'login with an error',
        'dashboard (empty)',
        'dashboard (agent, with data)',
        'dashboard (agent, at phone width)',
        'dashboard (admin, with data)',
        'contacts index (empty)',
        'contacts index (results)',
        'contacts index (no match)',
        'contact detail',
        'contact form (new)',
        'contact form with errors',
        'contact form (edit)',
        'contact delete confirmation',
        'not found page',
        'users index',
        'user form (new)',
        'user detail',
        'inquiries index (empty)',
        'inquiries index (results)',
        'inquiry form (new)',
        'inquiry detail',
        'inquiry form (from a contact)',
        'conflict page',
        'forgot password',
        'reset password',
        'reset password with errors',
        'reset password (used link)',
        'two-factor challenge',
        'two-factor challenge with an error',
        'verify email notice',
        'profile',
        'profile with errors',
        'two-factor setup',
        'recovery codes',
        'import page',
        'import report',
        'import page with an error',
      ];
      assert.deepEqual(
        expected.filter((label) => !a11y.has(label)),
        [],
      );
    });
  });
}
