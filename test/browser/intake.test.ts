// The hosted intake page in Chromium, at 1280 and 390 px, and the same form through curl, on each database: each
// submission makes one inquiry, linked to its contact, given to the agent by the matching rule, who is told in the app
// and by one mail (a real SMTP peer). The page has no serious or critical axe violation, and nothing fails on it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { type MailCatcher, startMailCatcher } from '../helpers/smtp.ts';
import { type Teammate, teammate } from '../helpers/team.ts';
import { assertClean, checkA11y, launchBrowser, newUser, visit } from './helpers.ts';

const run = promisify(execFile);

for (const dialect of DIALECTS) {
  describe(`the hosted intake form in Chromium and curl (${dialect})`, () => {
    let app: TestApp;
    let smtp: MailCatcher;
    let browser: Browser;
    let agent: Teammate;

    const arrived = async (name: string) => {
      const found = await app.get(`/api/v1/inquiries?filter[name]=${encodeURIComponent(name)}`);
      return found.body.data as Record<string, unknown>[];
    };
    /** The inquiry came in whole: its contact, the rule's assignee, a notification and one mail. */
    const assertArrived = async (name: string, email: string) => {
      const [made, ...more] = await arrived(name);
      assert.ok(made && more.length === 0, `one inquiry named ${name}`);
      assert.equal(String(made.assigned_to), String(agent.id));
      const contact = await app.get(`/api/v1/contacts/${made.contact_id}`);
      assert.equal(contact.body.data.email, email, 'linked to the contact with its address');
      const told = await app.request('GET', '/api/v1/me/notifications', { token: agent.token });
      assert.ok(
        told.body.data.some(
          (n: { kind: string; record: { id: unknown } }) =>
            n.kind === 'assigned' && String(n.record.id) === String(made.id),
        ),
      );
      const mails = await smtp.waitFor((m) => m.subject.includes(name), { timeoutMs: 10_000 });
      assert.equal(mails.length, 1);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(smtp.mails.filter((m) => m.subject.includes(name)).length, 1, 'one mail');
    };

    before(async () => {
      smtp = await startMailCatcher();
      app = await startApp(dialect, { env: { SMTP_URL: smtp.url, SCHEDULER_TICK_MS: '100', LOG_LEVEL: 'warn' } });
      agent = await teammate(app, 'agent', 'Hana Hosted');
      const source = (await app.post('/api/v1/sources', { name: 'Website' })).body.data.id;
      const rule = await app.post('/api/v1/assignment-rules', {
        name: 'From the website',
        position: 1,
        match: { source_id: source },
        users: [Number(agent.id)],
      });
      assert.equal(rule.status, 201, rule.text);
      const form = await app.post('/api/v1/intake-forms', {
        name: 'Contact',
        slug: 'contact',
        fields: ['name', 'email', 'country', 'detail'],
        required: ['name', 'email'],
        source_id: source,
      });
      assert.equal(form.status, 201, form.text);
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await app?.close();
      await smtp?.close();
    });

    for (const width of [1280, 390]) {
      test(`${width}px: a person fills in the page and is thanked; the inquiry arrives whole`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport: { width, height: 800 } });
        try {
          await visit(page, '/f/contact');
          await checkA11y(page, `hosted intake form at ${width} px`);
          const name = `Pat Page ${width}`;
          const email = `pat.${width}@example.org`;
          await page.getByLabel('Name (required)').fill(name);
          await page.getByLabel('Email (required)').fill(email);
          await page.getByLabel('Detail').fill('Twelve panels for a barn roof.');
          // A person takes longer than 2 s; a program that sends at once is dropped.
          await page.waitForTimeout(2100);
          await page.getByRole('button', { name: 'Send' }).click();
          await page.getByText('we have your message').waitFor();
          assertClean(page);
          await assertArrived(name, email);
        } finally {
          await context.close();
        }
      });
    }

    test('curl sends the same form as JSON: the inquiry arrives whole', async () => {
      const { stdout } = await run('curl', [
        '--silent',
        '--show-error',
        '--write-out',
        '\n%{http_code}',
        '-H',
        'content-type: application/json',
        '-H',
        'idempotency-key: curl-1',
        '--data',
        JSON.stringify({ name: 'Cory Curl', email: 'cory@example.org', country: 'Ireland' }),
        `${app.url}/api/v1/intake/contact`,
      ]);
      const [body, status] = stdout.trim().split('\n');
      assert.equal(status, '202', stdout);
      assert.match(JSON.parse(body!).reference, /^[\w-]{8,}$/);
      await assertArrived('Cory Curl', 'cory@example.org');
    });
  });
}
