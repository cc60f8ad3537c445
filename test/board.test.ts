// The pipeline board over HTTP, on each database: a column per active stage
// in order with its count (up to 1,000, then "1,000+"), at most 20 cards and "and N more" to the list;
// mine=1, open=1 and q narrow it; a card moved with the plain form (no
// JavaScript) changes stage, comes back to the board with a flash and is an
// entry of the inquiry's activity; board.js's JSON answer; an agent moves only
// what they may change, and a refusal is a message on the board, not a crash.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BOARD_COUNT_CAP, CARDS_PER_COLUMN } from '../src/http/web/board-page.tsx';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

interface Stage {
  id: string;
  name: string;
  kind: string;
  position: number;
}

/** The board's columns as the page shows them: stage id, heading, count, and the ids of the cards. */
function columnsOf(html: string) {
  return [...html.matchAll(/<section class="board-column" data-stage="(\d+)"[\s\S]*?<\/section>/g)].map((m) => ({
    stage: m[1]!,
    name: /<h2 [^>]*>([^<]*)<\/h2>/.exec(m[0])![1]!,
    // "1,000+" past the cap: read as 1000.
    count: Number(/<span data-count[^>]*>([\d,]+)\+?<\/span>/.exec(m[0])![1]!.replaceAll(',', '')),
    cards: [...m[0].matchAll(/<li class="board-card" id="card-(\d+)"/g)].map((c) => c[1]!),
    movable: [...m[0].matchAll(/formaction="\/inquiries\/(\d+)\/stage"/g)].map((c) => c[1]!),
    more: /<p class="board-more"><a href="([^"]+)">and (\d+) more/.exec(m[0]),
  }));
}

const fromHtml = (s: string) => s.replaceAll('&amp;', '&');

for (const dialect of DIALECTS) {
  describe(`pipeline board (${dialect})`, () => {
    let app: TestApp;
    let stages: Stage[];
    let agent: Teammate;
    let adminPage: Client;
    let agentPage: Client;
    const byName = (name: string) => stages.find((s) => s.name === name)!;

    const create = async (name: string, values: Record<string, unknown> = {}, token?: string) => {
      const made = await app.request('POST', '/api/v1/inquiries', {
        json: { name, email: `${name.toLowerCase().replace(/\W+/g, '.')}@example.org`, ...values },
        token,
      });
      assert.equal(made.status, 201, made.text);
      return String(made.body.data.id);
    };
    const stageOf = async (id: string) => String((await app.get(`/api/v1/inquiries/${id}`)).body.data.stage_id);

    /**
     * Presses a card's Move button as a browser without JavaScript does: the board's form goes to the card's address
     * with every card's select (`to-<id>`), another card's too.
     */
    const moveForm = async (client: Client, id: string, stageId: string, extra: Record<string, string> = {}) => {
      const csrf = csrfOf((await client.get('/inquiries/board')).text);
      const other = stages.find((s) => s.id !== stageId)!.id;
      const f = form({ _csrf: csrf, 'to-1': other, [`to-${id}`]: stageId, 'to-999999': other, ...extra });
      return client.request('POST', `/inquiries/${id}/stage`, { body: f.body, headers: f.headers });
    };

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      const listed = await app.get('/api/v1/stages?sort=position');
      stages = listed.body.data.map((s: Record<string, unknown>) => ({ ...s, id: String(s.id) }));
      agent = await teammate(app, 'agent', 'Agnes Agent');
      adminPage = await pageSignIn(app, app.admin);
      agentPage = await pageSignIn(app, agent);
    });
    after(() => app?.close());

    test('a column per active stage, in order, with the count of its inquiries', async () => {
      assert.deepEqual(
        stages.map((s) => s.name),
        ['New', 'Contacted', 'Qualified', 'Won', 'Lost'],
      );
      for (const name of ['Ana Novak', 'Ben Okafor', 'Chen Wei']) await create(name);
      for (const name of ['Dora Ruiz', 'Emil Sand']) await create(name, { stage_id: Number(byName('Contacted').id) });
      const lostId = await create('Farah Lost', { stage_id: Number(byName('Lost').id) });
      // An archived stage is no column.
      const archived = await app.post('/api/v1/stages', { name: 'Parked', position: 6, kind: 'open', active: false });
      assert.equal(archived.status, 201, archived.text);

      const page = await adminPage.get('/inquiries/board');
      assert.equal(page.status, 200, page.text.slice(0, 300));
      const columns = columnsOf(page.text);
      assert.deepEqual(
        columns.map((c) => [c.name, c.count, c.cards.length]),
        [
          ['New', 3, 3],
          ['Contacted', 2, 2],
          ['Qualified', 0, 0],
          ['Won', 0, 0],
          ['Lost', 1, 1],
        ],
      );
      assert.deepEqual(columns.at(-1)!.cards, [lostId]);
      // Newest first; each card links to its inquiry, shows its age, and the kind of each column is shown.
      assert.match(page.text, /<a class="board-card-name" href="\/inquiries\/\d+"[^>]*>Chen Wei<\/a>/);
      assert.ok(page.text.indexOf('Chen Wei') < page.text.indexOf('Ana Novak'), 'newest first');
      assert.match(page.text, /<span aria-hidden="true">0 min<\/span>/);
      assert.match(page.text, /board-kind-won">Won</);
      // The admin may move every card: each has the form, its select listing the active stages.
      assert.deepEqual(columns[0]!.movable, columns[0]!.cards);
      assert.match(page.text, /<select id="move-(\d+)" name="to-\1" form="board-move">/);
      // One form for the board, with one CSRF token: the cards' controls belong to it.
      assert.equal([...page.text.matchAll(/name="_csrf"/g)].length, 2, 'the board form and the header’s sign-out');
      assert.doesNotMatch(page.text, />Parked</);
      // Without JavaScript nothing is missing; with it, the board's script (from our origin) adds the rest.
      assert.match(page.text, /<script src="\/assets\/board.js" defer(="")?><\/script>/);
      const script = await app.get('/assets/board.js');
      assert.equal(script.status, 200);
      assert.match(script.headers.get('content-type') ?? '', /javascript/);
    });

    test(`a column shows the ${CARDS_PER_COLUMN} newest; the rest are "and N more", a link to the list`, async () => {
      const qualified = byName('Qualified');
      const made: string[] = [];
      for (let i = 1; i <= CARDS_PER_COLUMN + 2; i++)
        made.push(await create(`Bulk ${String(i).padStart(2, '0')}`, { stage_id: Number(qualified.id) }));
      const column = columnsOf((await adminPage.get('/inquiries/board')).text).find((c) => c.stage === qualified.id)!;
      assert.equal(column.count, CARDS_PER_COLUMN + 2);
      assert.deepEqual(column.cards, made.slice(2).reverse(), 'the newest, newest first');
      assert.ok(column.more, 'an "and N more" link');
      assert.equal(column.more[2], '2');
      const href = fromHtml(column.more[1]!);
      assert.equal(decodeURIComponent(href), `/inquiries?filter[stage_id]=${qualified.id}`);
      const list = await adminPage.get(href);
      assert.equal(list.status, 200);
      assert.match(list.text, /Bulk 01/, 'the list has the oldest, which the board left out');
    });

    test(`past ${BOARD_COUNT_CAP} a column counts no further: "1,000+", and "and 980+ more"`, async () => {
      const lost = byName('Lost');
      const inLost = async () =>
        (await app.get(`/api/v1/inquiries?filter[stage_id]=${lost.id}&per_page=1`)).body.meta.total as number;
      const before = await inLost();
      const rows = Array.from({ length: BOARD_COUNT_CAP + 3 }, (_, i) => `Lost lead ${i},lost${i}@example.org,Lost`);
      const file = new FormData();
      file.append('file', new Blob([`name,email,stage_id\n${rows.join('\n')}\n`], { type: 'text/csv' }), 'lost.csv');
      const imported = await app.request('POST', '/api/v1/inquiries/import', { body: file });
      assert.equal(imported.status, 200, imported.text);
      assert.equal(imported.body.created, BOARD_COUNT_CAP + 3);
      const html = (await adminPage.get('/inquiries/board')).text;
      const section = new RegExp(`<section class="board-column" data-stage="${lost.id}"[\\s\\S]*?</section>`).exec(
        html,
      )!;
      assert.match(section[0], /<span data-count data-capped>1,000\+<\/span>/);
      assert.match(
        section[0],
        new RegExp(`and ${(BOARD_COUNT_CAP - CARDS_PER_COLUMN).toLocaleString('en-US')}\\+ more`),
      );
      assert.equal(await inLost(), before + BOARD_COUNT_CAP + 3, 'the list behind the link counts them all');
    });

    test('a move with the plain form changes the stage, comes back with a flash, and is in the activity', async () => {
      const id = await create('Gina Moves');
      const contacted = byName('Contacted');
      const before = await stageOf(id);
      assert.equal(before, byName('New').id);
      const moved = await moveForm(adminPage, id, contacted.id, { mine: '', q: 'Gina' });
      assert.equal(moved.status, 303, moved.text.slice(0, 300));
      assert.equal(moved.headers.get('location'), `/inquiries/board?q=Gina#card-${id}`);
      assert.equal(await stageOf(id), contacted.id);
      const back = await adminPage.get('/inquiries/board?q=Gina');
      assert.match(back.text, /Moved Gina Moves to Contacted\./);
      const columns = columnsOf(back.text);
      assert.deepEqual(columns.find((c) => c.stage === contacted.id)!.cards, [id]);
      assert.deepEqual(
        columns.filter((c) => c.stage !== contacted.id).flatMap((c) => c.cards),
        [],
      );

      const activity = await app.get(`/api/v1/inquiries/${id}/activity`);
      assert.equal(activity.status, 200, activity.text);
      const entry = activity.body.data[0];
      assert.equal(entry.action, 'updated');
      assert.equal(entry.via, 'web');
      assert.equal(String(entry.actor.id), String(app.admin.id));
      assert.deepEqual(entry.changes.stage_id.map(String), [before, contacted.id]);
      // The timeline on the inquiry's page names the stages.
      const detail = await adminPage.get(`/inquiries/${id}`);
      assert.match(detail.text, /Contacted/);

      // The same stage again: nothing changes, nothing is logged.
      const again = await moveForm(adminPage, id, contacted.id);
      assert.equal(again.status, 303);
      assert.match((await adminPage.get('/inquiries/board')).text, /Gina Moves is already in Contacted\./);
      assert.equal((await app.get(`/api/v1/inquiries/${id}/activity`)).body.data.length, activity.body.data.length);

      // A stage that does not exist, or none: a message, nothing changed.
      for (const wrong of ['999999', '']) {
        const refused = await moveForm(adminPage, id, wrong);
        assert.equal(refused.status, 303);
        assert.match((await adminPage.get('/inquiries/board')).text, /Gina Moves was not moved: the stage/);
        assert.equal(await stageOf(id), contacted.id);
      }
    });

    test('board.js gets JSON: the message to read out, or the refusal with its status', async () => {
      const id = await create('Hugo Json');
      const board = await adminPage.get('/inquiries/board');
      const f = form({ _csrf: csrfOf(board.text), stage_id: byName('Won').id });
      const reply = await adminPage.request('POST', `/inquiries/${id}/stage`, {
        body: f.body,
        headers: { ...f.headers, accept: 'application/json' },
      });
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(reply.body, { message: 'Moved Hugo Json to Won.', stage_id: byName('Won').id, moved: true });
      const missing = await adminPage.request('POST', '/inquiries/999999/stage', {
        body: f.body,
        headers: { ...f.headers, accept: 'application/json' },
      });
      assert.equal(missing.status, 404);
      assert.match(missing.body.message, /no longer exists/);
    });

    test('an agent moves their own inquiries, not another’s: a message on the board, not a crash', async () => {
      const mine = await create('Ida Mine', { assigned_to: Number(agent.id) });
      const theirs = await create('Jon Theirs');
      const board = await agentPage.get('/inquiries/board');
      const columns = columnsOf(board.text);
      const movable = columns.flatMap((c) => c.movable);
      assert.ok(movable.includes(mine), 'the agent’s own card has the form');
      assert.ok(!movable.includes(theirs), 'another’s card has none');
      assert.ok(columns.flatMap((c) => c.cards).includes(theirs), 'but the agent sees it');
      assert.match(board.text, />Agnes Agent</, 'the assignee by name');

      const refused = await moveForm(agentPage, theirs, byName('Contacted').id);
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('content-type') ?? '', /text\/html/);
      assert.match(
        refused.text,
        /class="flash flash-error" role="alert">Jon Theirs was not moved: your role \(agent\) may not change inquiries that are not yours\./,
      );
      assert.match(refused.text, /<div class="board" id="board">/, 'the board is shown under the message');
      assert.equal(await stageOf(theirs), byName('New').id);
      const json = await agentPage.request('POST', `/inquiries/${theirs}/stage`, {
        ...form({ _csrf: csrfOf(board.text), stage_id: byName('Contacted').id }),
        headers: { ...form({}).headers, accept: 'application/json' },
      });
      assert.equal(json.status, 403);
      assert.match(json.body.message, /may not change/);

      const allowed = await moveForm(agentPage, mine, byName('Qualified').id);
      assert.equal(allowed.status, 303, allowed.text.slice(0, 300));
      assert.equal(await stageOf(mine), byName('Qualified').id);

      // A viewer reads the board and moves nothing.
      const viewer = await pageSignIn(app, await teammate(app, 'viewer'));
      const seen = await viewer.get('/inquiries/board');
      assert.equal(seen.status, 200);
      assert.ok(columnsOf(seen.text).flatMap((c) => c.cards).length > 0);
      assert.doesNotMatch(seen.text, /\/stage"/);
      assert.doesNotMatch(seen.text, /Drag a card/);
      const viewerMove = await moveForm(viewer, mine, byName('New').id);
      assert.equal(viewerMove.status, 403);
      assert.match(viewerMove.text, /Ida Mine was not moved: your role \(viewer\) may not change inquiries/);
      // A stranger is sent to sign in.
      const stranger = await app.client().get('/inquiries/board');
      assert.equal(stranger.status, 303);
      assert.match(stranger.headers.get('location') ?? '', /^\/login/);
    });

    test('mine=1 shows only what is assigned to me; open=1 only open stages; q searches', async () => {
      const lost = byName('Lost');
      const kept = await create('Karl Assigned', { assigned_to: Number(agent.id) });
      const closed = await create('Lena Closed', { assigned_to: Number(agent.id), stage_id: Number(lost.id) });
      const mine = columnsOf((await agentPage.get('/inquiries/board?mine=1')).text);
      const cards = mine.flatMap((c) => c.cards);
      const assigned = await app.get(`/api/v1/inquiries?filter[assigned_to]=${agent.id}&per_page=100`);
      assert.deepEqual(cards.sort(), assigned.body.data.map((r: { id: unknown }) => String(r.id)).sort());
      assert.ok(cards.includes(kept) && cards.includes(closed));
      assert.equal(
        mine.reduce((n, c) => n + c.count, 0),
        assigned.body.meta.total,
        'the counts are of my inquiries',
      );
      // "My open inquiries": mine, in open stages only; a move to a closed stage is still offered.
      const open = await agentPage.get('/inquiries/board?mine=1&open=1');
      assert.match(open.text, /<h1>My open inquiries<\/h1>/);
      const openColumns = columnsOf(open.text);
      assert.deepEqual(
        openColumns.map((c) => c.name),
        ['New', 'Contacted', 'Qualified'],
      );
      assert.ok(!openColumns.flatMap((c) => c.cards).includes(closed));
      assert.match(open.text, /<option value="\d+">Won<\/option>/);
      // The form keeps the view: a move comes back to the same board.
      const moved = await moveForm(agentPage, kept, byName('Won').id, { mine: '1', open: '1' });
      assert.equal(moved.headers.get('location'), `/inquiries/board?mine=1&open=1#card-${kept}`);
      const search = columnsOf((await adminPage.get('/inquiries/board?q=karl')).text);
      assert.deepEqual(
        search.flatMap((c) => c.cards),
        [kept],
      );
      // The navigation has the board and "My open inquiries", one click from anywhere.
      const profile = await agentPage.get('/profile');
      assert.match(profile.text, /href="\/inquiries\/board"/);
      assert.match(profile.text, /href="\/inquiries\/board\?mine=1&amp;open=1"[^>]*>My open inquiries</);
    });
  });
}
