// Browser tests drive Debian's Chromium (through playwright-core) against the
// real app, started in this process on a fresh database with no account, so
// the browser does the first-admin setup itself. Every page is watched: a JS
// dialog (an XSS that ran), a console error, a CSP violation, an uncaught
// exception or a failed sub-resource (a favicon 404 too) fails the test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Dialect } from '../../src/db/dialect.ts';
import { startApp, type TestApp } from '../helpers/app.ts';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** The real app on a fresh database with no user yet (the browser sets up the first admin). */
export function startEmptyApp(dialect: Dialect, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp(dialect, { admin: false, env: { LOG_LEVEL: 'warn', ...env } });
}

/** What went wrong in a page that a user would not see in its text. */
export interface Trouble {
  dialogs: string[];
  errors: string[];
}

const watched = new WeakMap<Page, Trouble>();

/** Every dialog any watched page ever opened (never cleared): a suite asserts it is empty at its end. */
export const allDialogs: string[] = [];

/** Records dialogs (and dismisses them), console errors, page errors and failed sub-resources of a page. */
export function watch(page: Page): Trouble {
  const known = watched.get(page);
  if (known) return known;
  const trouble: Trouble = { dialogs: [], errors: [] };
  watched.set(page, trouble);
  page.on('dialog', (dialog) => {
    const seen = `${dialog.type()} "${dialog.message()}" on ${page.url()}`;
    trouble.dialogs.push(seen);
    allDialogs.push(seen);
    void dialog.dismiss().catch(() => {});
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const where = message.location().url;
    // The document itself answering 4xx (401/404/409/422…) is the page under test (an error page, a form with
    // errors, the conflict page), and Chromium logs it; any other failed load is a real problem.
    if (
      /^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()) &&
      isDocument(page, where)
    )
      return;
    trouble.errors.push(`console error on ${page.url()}: ${message.text()}${where ? ` (${where})` : ''}`);
  });
  page.on('pageerror', (error) => trouble.errors.push(`uncaught exception on ${page.url()}: ${error.message}`));
  page.on('response', (response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) return;
    if (request.resourceType() === 'fetch' || request.resourceType() === 'xhr') {
      if (response.status() >= 500)
        trouble.errors.push(`${response.status()} for ${request.method()} ${response.url()} (htmx)`);
      return;
    }
    if (response.status() >= 400)
      trouble.errors.push(`${response.status()} for sub-resource ${response.url()} on ${page.url()}`);
  });
  page.on('requestfailed', (request) => {
    if (request.isNavigationRequest()) return;
    // A load cut short by leaving the page (a search on its way, the favicon, when a form is sent at once) is no
    // fault; a missing or broken file answers 4xx/5xx, caught above.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    trouble.errors.push(`request failed: ${request.url()} (${request.failure()?.errorText ?? 'unknown'})`);
  });
  return trouble;
}

const isDocument = (page: Page, url: string) => {
  if (!url) return true;
  try {
    const u = new URL(url);
    return !u.pathname.startsWith('/assets/') && !u.pathname.startsWith('/api/');
  } catch {
    return page.url() === url;
  }
};

/** Fails when anything went wrong on the page so far; clears what was seen. */
export function assertClean(page: Page, where = page.url()): void {
  const trouble = watch(page);
  const dialogs = trouble.dialogs.splice(0);
  const errors = trouble.errors.splice(0);
  assert.deepEqual(dialogs, [], `a JavaScript dialog opened (stored text ran as script?) at ${where}`);
  assert.deepEqual(errors, [], `console errors, CSP violations or failed loads at ${where}`);
}

/** A new browser context (one user: its own cookies) with one watched page. */
export async function newUser(
  browser: Browser,
  baseURL: string,
  options: { viewport?: { width: number; height: number }; locale?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL,
    viewport: options.viewport ?? { width: 1280, height: 800 },
    locale: options.locale ?? 'en-US',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(20_000);
  const page = await context.newPage();
  watch(page);
  return { context, page };
}

/** A second tab of the same user (same cookies), also watched. */
export async function newTab(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  watch(page);
  return page;
}

/** Goes to a path and expects the document's HTTP status. */
export async function visit(page: Page, path: string, status = 200): Promise<void> {
  const response = await page.goto(path);
  assert.ok(response, `no response for ${path}`);
  assert.equal(
    response.status(),
    status,
    `GET ${path} answered ${response.status()}, not ${status}; now at ${page.url()}`,
  );
}

/** The page's path and query, e.g. `/contacts?search=x`. */
export const here = (page: Page) => {
  const url = new URL(page.url());
  return url.pathname + url.search;
};

export interface AxeReport {
  page: string;
  violations: string[];
}

/** Runs axe on the page and fails on any serious or critical violation, printed readably. */
export async function checkA11y(page: Page, label: string, seen?: Set<string>): Promise<void> {
  const started = Date.now();
  // axe.run in the page itself: by default AxeBuilder runs axe in parts and joins them in a blank page it opens for
  // each audit, 1.5 s an audit here against 0.86 s, with the same findings on a page given six faults.
  const result = await new AxeBuilder({ page }).setLegacyMode(true).analyze();
  if (process.env.AXE_TIMING) console.error(`axe ${label}: ${Date.now() - started} ms`);
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  // AXE_ALL=1 lists the moderate and minor findings too (they do not fail a test).
  if (process.env.AXE_ALL)
    for (const v of result.violations.filter((x) => !bad.includes(x)))
      console.error(
        `axe ${label}: [${v.impact}] ${v.id}: ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
      );
  seen?.add(label);
  const text = bad
    .map(
      (v) =>
        `- [${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${v.nodes
          .slice(0, 5)
          .map((n) => `    ${n.target.join(' ')}\n      ${n.failureSummary?.replace(/\n/g, '\n      ') ?? ''}`)
          .join('\n')}`,
    )
    .join('\n');
  assert.equal(bad.length, 0, `axe found serious/critical violations on "${label}" (${page.url()}):\n${text}`);
  assertClean(page, label);
}

/** The current 6-digit TOTP code for a base32 secret, computed by oathtool (an independent implementation). */
export function totp(secret: string, offsetSeconds = 0): string {
  const args = ['--totp', '-b', secret.replace(/\s+/g, '')];
  if (offsetSeconds)
    args.push(
      '--now',
      new Date(Date.now() + offsetSeconds * 1000)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC'),
    );
  return execFileSync('/usr/bin/oathtool', args, { encoding: 'utf8' }).trim();
}

/** Decodes a quoted-printable body: soft line breaks (`=\n`) and `=XX` escapes. */
export function decodeQuotedPrintable(text: string): string {
  const bytes = Buffer.from(text.replace(/=\r?\n/g, ''), 'latin1');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    const hex = bytes.subarray(i + 1, i + 3).toString('latin1');
    if (c === 0x3d && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      out.push(parseInt(hex, 16));
      i += 2;
    } else out.push(c);
  }
  return Buffer.from(out).toString('utf8');
}

/** The newest mail the app wrote to `${dataDir}/mail/` (no SMTP_URL), waiting for it to appear; its decoded text. */
export async function newestMail(dataDir: string, after: number, timeoutMs = 5000): Promise<string> {
  const dir = path.join(dataDir, 'mail');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const files = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.eml'))
          .map((f) => path.join(dir, f))
          .filter((f) => fs.statSync(f).mtimeMs >= after)
      : [];
    if (files.length) {
      const newest = files.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0]!;
      const raw = fs.readFileSync(newest, 'utf8');
      const [head = '', ...body] = raw.split(/\r?\n\r?\n/);
      const text = body.join('\n\n');
      return /content-transfer-encoding:\s*quoted-printable/i.test(head) ? decodeQuotedPrintable(text) : text;
    }
    if (Date.now() > deadline) throw new Error(`no mail in ${dir} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The path and query of the first link to `pathname` in a mail (the app's host in mails may differ from the test's port). */
export function linkIn(mail: string, pathname: string): string {
  const match = mail.match(new RegExp(`https?://[^\\s"<>]+${pathname.replace(/[/]/g, '\\/')}[^\\s"<>]*`));
  assert.ok(match, `no ${pathname} link in the mail:\n${mail}`);
  const url = new URL(match[0]);
  return url.pathname + url.search;
}

/** Signs in through the form (email, password, optional remember me); does not answer a two-factor challenge. */
export async function signIn(
  page: Page,
  email: string,
  password: string,
  options: { remember?: boolean } = {},
): Promise<void> {
  await visit(page, '/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  if (options.remember) await page.getByLabel('Remember me on this device').check();
  await Promise.all([
    page.waitForURL((u) => u.pathname !== '/login'),
    page.locator('main').getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

export async function signOut(page: Page): Promise<void> {
  await Promise.all([
    page.waitForURL('**/login'),
    page.locator('header').getByRole('button', { name: 'Sign out' }).click(),
  ]);
}

/** Clicks a submit button in <main> (never the header's "Sign out") and waits for the next document. */
export async function submit(page: Page, name: string | RegExp): Promise<void> {
  await Promise.all([
    page.waitForNavigation(),
    page
      .locator('main')
      .getByRole('button', { name, exact: typeof name === 'string' })
      .click(),
  ]);
}

/** Whether the text is shown on the page as text (and so was not taken for markup). */
export async function assertShowsText(page: Page, text: string, where: string): Promise<void> {
  const count = await page.getByText(text, { exact: false }).count();
  assert.ok(count > 0, `"${text}" is not shown as text on ${where}`);
}
