// The import wizard in Chromium on each database, at 1280 and 390 px: a file
// as Excel saves it in Western Europe (semicolons, Windows-1252, accented
// letters) is uploaded; the matching step says how it was read and matches the
// headers it knows (E-mail, Town), the user matches "Firma" by hand and leaves
// "Colour" out; the preview counts what would happen and shows the row that
// would fail and why; the import runs in the background while its page follows
// it; the records hold the right characters; the failed rows download as CSV;
// the rollback removes what the import created. Axe finds no serious or
// critical violation on any step nor on the Imports page.
// LEADBOOK_SHOTS=dir saves screenshots there (wizard-*.png).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { assertClean, checkA11y, launchBrowser, newUser, signIn, submit, visit } from './helpers.ts';

const SHOTS = process.env.LEADBOOK_SHOTS;

const HEADER = ['Full name', 'E-mail', 'Town', 'Firma', 'Colour'];
const ROWS = [
  ['Renée Müller', 'renee@example.org', 'Köln', 'Straße & Söhne', 'grün'],
  ['Jürgen Weiß', 'juergen@example.org', 'Zürich', 'Café Größe', 'blau'],
  ['Zoë Broken', 'not an email', 'Genève', 'Crème', 'rot'],
];
/** The file as Excel saves "CSV" on a German Windows: semicolons, Windows-1252, CRLF. */
const FILE = iconv.encode(`${[HEADER, ...ROWS].map((r) => r.join(';')).join('\r\n')}\r\n`, 'win1252');

/** The value of the select a column's header labels. */
const choiceOf = (page: Page, header: string) => page.getByLabel(header, { exact: true }).inputValue();

for (const dialect of DIALECTS) {
  describe(`import wizard in Chromium on ${dialect}`, { concurrency: false }, () => {
    let app: TestApp;
    let browser: Browser;
    // Axe takes about a second a page, and the HTML is the same on either database: the first one only.
    const audit = dialect === DIALECTS[0];

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      browser = await launchBrowser();
      if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await app?.close();
    });

    const contactsBy = async (email: string) =>
      (await app.get(`/api/v1/contacts?search=${encodeURIComponent(email)}`)).body.data as Record<string, unknown>[];

    for (const [round, width] of [1280, 390].entries()) {
      test(`upload, match, preview, import, download the failed rows, roll back at ${width} px`, async () => {
        const { context, page } = await newUser(browser, app.url, { viewport: { width, height: 900 } });
        const step = async (name: string) => {
          if (SHOTS && audit)
            await page.screenshot({ path: path.join(SHOTS, `wizard-${name}-${width}.png`), fullPage: true });
          if (audit) await checkA11y(page, `${name} at ${width} px`);
          assertClean(page, `${name} at ${width} px`);
        };
        try {
          await signIn(page, app.admin.email, app.admin.password);
          await visit(page, '/contacts/import');
          await page.getByText('semicolons or tabs, in UTF-8, UTF-16 or Windows-1252').waitFor();
          await step('1-upload');

          // Step 1: htmx sends the file (its progress shown), then the browser follows to the matching step.
          await page.getByLabel('CSV file').setInputFiles({ name: 'leads.csv', mimeType: 'text/csv', buffer: FILE });
          await Promise.all([
            page.waitForURL(/\/contacts\/import\/\d+$/),
            page.getByRole('button', { name: 'Upload and match columns' }).click(),
          ]);

          // Step 2: how the file was read, and the headers it knows matched already.
          const read = await page.locator('main form p').first().innerText();
          assert.match(read, /Read as Windows-1252 \(Western European\), separated by semicolon \(;\): 5 columns/);
          assert.equal(await choiceOf(page, 'Full name'), 'name');
          assert.equal(await choiceOf(page, 'E-mail'), 'email');
          assert.equal(await choiceOf(page, 'Town'), 'city');
          // What was matched by hand is remembered for the next file with these headers.
          assert.equal(await choiceOf(page, 'Firma'), round === 0 ? '' : 'occupation');
          await page.getByText('Straße & Söhne').waitFor();
          await page.getByLabel('Firma', { exact: true }).selectOption('occupation');
          await page.getByLabel('Colour', { exact: true }).selectOption({ label: 'Don’t import this column' });
          await step('2-match');

          // Step 3: the dry run's counts, the row that would fail and why; nothing written yet.
          await submit(page, 'Preview the import');
          const counts = await page.locator('.import-counts').innerText();
          assert.match(counts.replace(/\s+/g, ' '), /2 Would be created 0 Would be updated 0 Unchanged 1 Would fail/);
          const failed = page.locator('.failed-rows tbody tr');
          assert.equal(await failed.count(), 1);
          assert.match(await failed.innerText(), /^3\s+email .*\s+Zoë Broken\s+not an email\s+Genève/);
          assert.deepEqual(await contactsBy('renee@example.org'), [], 'a preview writes nothing');
          await step('3-preview');

          // "Back to matching" keeps the choices.
          await submit(page, 'Back to matching');
          assert.equal(await choiceOf(page, 'Firma'), 'occupation');
          assert.equal(await choiceOf(page, 'Colour'), '');
          await submit(page, 'Preview the import');

          // Step 4: the import runs in the background; its page follows it until it is done.
          await submit(page, 'Import 2 rows');
          assert.match(new URL(page.url()).pathname, /^\/imports\/\d+$/);
          const importPath = new URL(page.url()).pathname;
          await page.locator('dd', { hasText: /^Done$/ }).waitFor();
          assert.match(
            (await page.locator('.import-counts').innerText()).replace(/\s+/g, ' '),
            /2 Created 0 Updated 0 Unchanged 1 Failed/,
          );
          await page.locator('.failed-rows').getByText('Zoë Broken').waitFor();
          await step('4-report');

          const [renee] = await contactsBy('renee@example.org');
          assert.equal(renee?.name, 'Renée Müller');
          assert.equal(renee?.city, 'Köln');
          assert.equal(renee?.occupation, 'Straße & Söhne');
          const [juergen] = await contactsBy('juergen@example.org');
          assert.equal(juergen?.occupation, 'Café Größe');

          // The failed rows, as the file had them, with what was wrong.
          const [download] = await Promise.all([
            page.waitForEvent('download'),
            page.getByRole('link', { name: 'Download failed rows (CSV)' }).click(),
          ]);
          const rows: string[][] = parse(fs.readFileSync((await download.path())!), { bom: true });
          assert.deepEqual(rows[0], [...HEADER, 'Import problems']);
          assert.equal(rows.length, 2);
          assert.deepEqual(rows[1]!.slice(0, 5), ROWS[2]);
          assert.match(rows[1]![5]!, /^email /);

          // The rollback removes what the import created.
          await submit(page, 'Roll back this import');
          assert.equal(new URL(page.url()).pathname, importPath);
          await page.getByText('The import was rolled back: 2 removed, 0 put back.').waitFor();
          await page.locator('dd', { hasText: /^Rolled back$/ }).waitFor();
          assert.deepEqual(await contactsBy('renee@example.org'), []);
          assert.deepEqual(await contactsBy('juergen@example.org'), []);
          await step('5-rolled-back');

          await page.locator('header').getByRole('link', { name: 'Imports' }).click();
          await page.waitForURL('**/imports');
          await page.getByRole('link', { name: 'leads.csv' }).first().waitFor();
          assert.equal(await page.locator('main tbody tr').count(), round + 1);
          await step('6-imports');
        } finally {
          await context.close();
        }
      });
    }
  });
}
