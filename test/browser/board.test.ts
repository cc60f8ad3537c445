// The pipeline board in Chromium at desktop (1280 px) and phone (390 px) width,
// on each database: a card dragged to another column and a card moved with
// the keyboard alone (the "Move to" select, then the Move button) move without
// a reload, the count of both columns follows, the status line says what
// happened, and each move is in the inquiry's timeline; without JavaScript the
// same form moves the card through a page load. Columns sit side by side at
// 1280 px and scroll sideways inside the board at 390 px (the page itself never
// does); axe finds no serious or critical violation.
// LEADBOOK_SHOTS=dir saves screenshots there (board-1280.png, board-390.png).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { assertClean, checkA11y, launchBrowser, newUser, signIn, visit } from './helpers.ts';

const WIDTHS = [1280, 390];
const SHOTS = process.env.LEADBOOK_SHOTS;

const column = (page: Page, stageId: string) => page.locator(`.board-column[data-stage="${stageId}"]`);
const countOf = async (page: Page, stageId: string) =>
  Number(await column(page, stageId).locator('[data-count]').innerText());

/** The first timeline entry of an inquiry's page, as text. */
async function latestChange(page: Page, id: string): Promise<string> {
  await visit(page, `/inquiries/${id}`);
  return page.locator('.activity-list > li').first().innerText();
}

for (const dialect of DIALECTS) {
  describe(`pipeline board in Chromium on ${dialect}`, { concurrency: false }, () => {
    let app: TestApp;
    let browser: Browser;
    const stage: Record<string, string> = {};
    // Axe takes about a second a page, and the HTML is the same on either database: the first one only.
    const audit = dialect === DIALECTS[0];

    const create = async (name: string, values: Record<string, unknown> = {}) => {
      const made = await app.post('/api/v1/inquiries', { name, ...values });
      assert.equal(made.status, 201, made.text);
      return String(made.body.data.id);
    };

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      browser = await launchBrowser();
      for (const s of (await app.get('/api/v1/stages?sort=position')).body.data) stage[s.name] = String(s.id);
      const agent = await app.post('/api/v1/users', {
        name: 'Tomás Silva',
        email: 'tomas@example.com',
        password: 'a long agent passphrase',
        role: 'agent',
      });
      assert.equal(agent.status, 201, agent.text);
      const people = ['Aiko Tanaka', 'Lars Eriksen', 'Fatima Zahra', 'Jonas Becker', 'Priya Raman', 'Diego Fernández'];
      const where = ['New', 'New', 'Contacted', 'Qualified', 'Won', 'Lost'];
      for (const [i, name] of people.entries())
        await create(name, {
          email: `${name.split(' ')[0]!.toLowerCase()}@example.org`,
          stage_id: Number(stage[where[i]!]),
          assigned_to: i % 2 === 0 ? Number(agent.body.data.id) : null,
        });
      if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await app?.close();
    });

    for (const width of WIDTHS) {
      test(`at ${width} px: drag and drop, and the keyboard, each move in the timeline`, async () => {
        const dragged = await create(`Dragged at ${width}`);
        const keyed = await create(`Keyed at ${width}`);
        const { context, page } = await newUser(browser, app.url, { viewport: { width, height: 800 } });
        try {
          await signIn(page, app.admin.email, app.admin.password);
          await visit(page, '/inquiries/board');
          assert.equal(await page.locator('h1').innerText(), 'Board');

          // The layout: side by side on a desktop; on a phone the board scrolls sideways, never the page.
          const boxes = await page.locator('.board-column').evaluateAll((els) =>
            els.map((el) => {
              const r = el.getBoundingClientRect();
              return { x: r.x, y: r.y, width: r.width };
            }),
          );
          assert.equal(boxes.length, 5);
          assert.ok(
            boxes.every((b, i) => i === 0 || (b.y === boxes[0]!.y && b.x > boxes[i - 1]!.x)),
            'columns side by side',
          );
          if (width === 1280)
            assert.ok(boxes.at(-1)!.x + boxes.at(-1)!.width <= width, `all five in view: ${JSON.stringify(boxes)}`);
          else assert.ok(boxes[0]!.width >= 300, 'a phone shows one readable column at a time');
          assert.ok(
            (await page.evaluate(() => document.documentElement.scrollWidth)) <= width,
            'the page does not scroll sideways',
          );
          if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `board-${width}.png`), fullPage: true });
          if (audit) await checkA11y(page, `board at ${width} px`);

          // No reload from here on: a page load would lose this mark.
          await page.evaluate(() => {
            (window as unknown as { stillHere: boolean }).stillHere = true;
          });
          const newCount = await countOf(page, stage.New!);
          const contactedCount = await countOf(page, stage.Contacted!);

          // Drag and drop, New → Contacted: dropped near the column's left edge, which a phone shows beside the
          // column in view.
          await page.locator(`#card-${dragged}`).dragTo(column(page, stage.Contacted!), {
            sourcePosition: { x: 8, y: 8 },
            targetPosition: { x: 15, y: 40 },
          });
          await page.locator('#board-status').getByText(`Moved Dragged at ${width} to Contacted.`).waitFor();
          assert.equal(await column(page, stage.Contacted!).locator(`#card-${dragged}`).count(), 1);
          assert.equal(await countOf(page, stage.New!), newCount - 1);
          assert.equal(await countOf(page, stage.Contacted!), contactedCount + 1);
          assert.equal(await page.locator(`#move-${dragged}`).inputValue(), stage.Contacted);

          // The keyboard alone: to the card's select, a stage chosen with the arrow keys (nothing moves yet), then
          // the Move button.
          const select = page.locator(`#move-${keyed}`);
          await select.focus();
          await page.keyboard.press('ArrowDown');
          await page.keyboard.press('ArrowDown');
          assert.equal(await select.inputValue(), stage.Qualified, 'two stages on');
          assert.equal(await column(page, stage.New!).locator(`#card-${keyed}`).count(), 1, 'not moved yet');
          await page.keyboard.press('Tab');
          assert.equal(
            await page.evaluate(() => document.activeElement?.textContent),
            `Move Keyed at ${width}`,
            'the Move button is next',
          );
          await page.keyboard.press('Enter');
          await page.locator('#board-status').getByText(`Moved Keyed at ${width} to Qualified.`).waitFor();
          assert.equal(await column(page, stage.Qualified!).locator(`#card-${keyed}`).count(), 1);
          assert.equal(
            await page.evaluate(() => document.activeElement?.closest('.board-card')?.id),
            `card-${keyed}`,
            'the focus stays on the moved card',
          );
          // Enter on the select moves it as well.
          await select.focus();
          await page.keyboard.press('ArrowUp');
          await page.keyboard.press('Enter');
          await page.locator('#board-status').getByText(`Moved Keyed at ${width} to Contacted.`).waitFor();
          assert.equal(await column(page, stage.Contacted!).locator(`#card-${keyed}`).count(), 1);
          assert.equal(await page.evaluate(() => document.activeElement?.id), `move-${keyed}`);
          assert.equal(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere), true);
          if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `board-${width}-moved.png`), fullPage: false });
          if (audit) await checkA11y(page, `board at ${width} px after moves`);

          // Each move is in the inquiry's timeline, by whom and through the web.
          const draggedChange = await latestChange(page, dragged);
          assert.match(draggedChange, /Admin/);
          assert.match(draggedChange, /Stage: New → Contacted/);
          const keyedChange = await latestChange(page, keyed);
          assert.match(keyedChange, /Stage: Qualified → Contacted/);
          const entries = await page.locator('.activity-list > li').allInnerTexts();
          assert.ok(
            entries.some((e) => /Stage: New → Qualified/.test(e)),
            `the first move too: ${entries.join(' | ')}`,
          );
          assertClean(page);
        } finally {
          await context.close();
        }
      });
    }

    test('without JavaScript the card’s form moves it through a page load, with a message', async () => {
      const id = await create('Without script');
      const context = await browser.newContext({ baseURL: app.url, javaScriptEnabled: false });
      try {
        const page = await context.newPage();
        await signIn(page, app.admin.email, app.admin.password);
        await visit(page, '/inquiries/board');
        await page.locator(`#move-${id}`).selectOption(stage.Won!);
        await Promise.all([
          page.waitForURL(/\/inquiries\/board#card-\d+$/),
          page.locator(`#card-${id} button`).click(),
        ]);
        await page.getByText('Moved Without script to Won.').waitFor();
        assert.equal(await column(page, stage.Won!).locator(`#card-${id}`).count(), 1);
        assert.match(await latestChange(page, id), /Stage: New → Won/);
      } finally {
        await context.close();
      }
    });
  });
}
