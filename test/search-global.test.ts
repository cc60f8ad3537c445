// The search across contacts and inquiries (issue 13, item 7) over HTTP on each
// database: GET /api/v1/search groups what the lists' `search=` finds, a few of
// each with how many match, for every role that may read them; its 422s name
// the parameter; the pages (/search and the box's suggestions) show the same;
// and the statements it sends are answered by the trigram index (EXPLAIN).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { SEARCHED } from '../src/http/search.ts';
import { user } from '../src/resources/index.ts';
import { searchRecords } from '../src/records/search.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const search = (app: TestApp, query: string, token?: string) =>
  app.request('GET', `/api/v1/search?${query}`, token === undefined ? {} : { token });

const group = (body: Json, resource: string) => {
  const found = (body.data as Json[]).find((g) => g.resource === resource);
  assert.ok(found, `a ${resource} group in ${JSON.stringify(body)}`);
  return found;
};

for (const dialect of DIALECTS) {
  describe(`global search (${dialect})`, () => {
    let app: TestApp;
    /** Contacts made here, newest last. */
    const harbour: string[] = [];
    let ticketInquiry: Json;
    let onlyInquiry: Json;
    let phoneOnly: Json;

    before(async () => {
      app = await startApp(dialect);
      for (let i = 1; i <= 7; i++) {
        const made = await app.post('/api/v1/contacts', {
          name: `Harbourline Person ${String.fromCharCode(64 + i)}`,
          email: `harbour${i}@example.com`,
          city: i % 2 ? 'Lisbon' : 'Porto',
        });
        assert.equal(made.status, 201, made.text);
        harbour.push(String(made.body.data.id));
      }
      phoneOnly = (await app.post('/api/v1/contacts', { name: 'Quillon Phonebody', phone: '+351 912 345 678' })).body
        .data;
      // An inquiry-only field (inquiry_country) holds the word: its contact, made from its contact fields, does not.
      const made = await app.post('/api/v1/inquiries', {
        name: 'Ottoline Brisk',
        email: 'ottoline@example.com',
        inquiry_country: 'Zanzibarland',
        ticket_id: 987654321,
      });
      assert.equal(made.status, 201, made.text);
      onlyInquiry = made.body.data;
      ticketInquiry = onlyInquiry;
    });
    after(() => app?.close());

    test('groups contacts and inquiries, a few of each newest first, with how many match in all', async () => {
      const found = await search(app, 'q=harbourline');
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(
        (found.body.data as Json[]).map((g) => [g.resource, g.label]),
        [
          ['contacts', 'Contacts'],
          ['inquiries', 'Inquiries'],
        ],
      );
      const contacts = group(found.body, 'contacts');
      assert.equal(contacts.total, 7);
      assert.deepEqual(
        contacts.results.map((r: Json) => String(r.id)),
        harbour.slice(-5).reverse(),
        'the first five, newest first',
      );
      const [first] = contacts.results;
      assert.deepEqual(
        { title: first.title, subtitle: first.subtitle, url: first.url },
        { title: 'Harbourline Person G', subtitle: 'harbour7@example.com', url: `/contacts/${harbour[6]}` },
      );
      assert.deepEqual(group(found.body, 'inquiries'), {
        resource: 'inquiries',
        label: 'Inquiries',
        total: 0,
        more: false,
        results: [],
      });

      const two = await search(app, 'q=harbourline&limit=2');
      assert.equal(group(two.body, 'contacts').results.length, 2);
      assert.equal(group(two.body, 'contacts').total, 7, 'the total does not depend on the limit');
    });

    test('two words must both occur (in any fields), as in the lists’ search', async () => {
      const found = await search(app, `q=${encodeURIComponent('  LISBON   harbourline ')}`);
      assert.equal(found.status, 200, found.text);
      const contacts = group(found.body, 'contacts');
      assert.equal(contacts.total, 4);
      const list = await app.get(`/api/v1/contacts?search=${encodeURIComponent('LISBON harbourline')}&per_page=5`);
      assert.equal(contacts.total, list.body.meta.total);
      assert.deepEqual(
        contacts.results.map((r: Json) => String(r.id)),
        list.body.data.map((r: Json) => String(r.id)),
      );
    });

    test('a word only an inquiry holds finds the inquiry, with its stage under its title', async () => {
      const found = await search(app, 'q=zanzibar');
      assert.equal(found.status, 200, found.text);
      assert.equal(group(found.body, 'contacts').total, 0, 'its contact does not hold the inquiry’s own field');
      const inquiries = group(found.body, 'inquiries');
      assert.equal(inquiries.total, 1);
      assert.deepEqual(inquiries.results, [
        {
          id: onlyInquiry.id,
          title: 'Ottoline Brisk',
          subtitle: 'ottoline@example.com · New',
          url: `/inquiries/${onlyInquiry.id}`,
        },
      ]);
      // The name is on both: the inquiry and the contact it was linked to.
      const both = await search(app, 'q=ottoline');
      assert.deepEqual(
        (both.body.data as Json[]).map((g) => g.total),
        [1, 1],
      );
      assert.equal(String(group(both.body, 'contacts').results[0].id), String(onlyInquiry.contact_id));
    });

    test('a number word also finds the inquiry with that ticket, as the lists do', async () => {
      const found = await search(app, 'q=987654321');
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(
        group(found.body, 'inquiries').results.map((r: Json) => String(r.id)),
        [String(ticketInquiry.id)],
      );
      assert.equal(group(found.body, 'contacts').total, 0);
      const list = await app.get('/api/v1/inquiries?search=987654321');
      assert.equal(list.body.meta.total, 1, 'the list agrees');
    });

    test('a record without email shows its phone; one without a name its kind and number', async () => {
      const found = await search(app, 'q=quillon');
      assert.equal(group(found.body, 'contacts').results[0].subtitle, '+351 912 345 678');
      const nameless = (await app.post('/api/v1/contacts', { email: 'nameless.quillon@example.com' })).body.data;
      const again = await search(app, 'q=quillon');
      const hit = group(again.body, 'contacts').results.find((r: Json) => String(r.id) === String(nameless.id));
      assert.equal(hit.title, `Contact #${nameless.id}`);
      assert.equal(hit.subtitle, 'nameless.quillon@example.com');
      assert.ok(phoneOnly);
    });

    test('past 1,000 matches a group counts no further: "1,000+" (more: true), and the list counts them all', async () => {
      const csv = ['name,email', ...Array.from({ length: 1003 }, (_, i) => `Vastmere ${i},vastmere${i}@example.com`)];
      const form = new FormData();
      form.append('file', new Blob([`${csv.join('\n')}\n`], { type: 'text/csv' }), 'many.csv');
      const imported = await app.request('POST', '/api/v1/contacts/import', { body: form });
      assert.equal(imported.status, 200, imported.text);
      assert.equal(imported.body.created, 1003);
      const contacts = group((await search(app, 'q=vastmere')).body, 'contacts');
      assert.deepEqual([contacts.total, contacts.more, contacts.results.length], [1000, true, 5]);
      assert.equal((await app.get('/api/v1/contacts?search=vastmere&per_page=1')).body.meta.total, 1003);
      const exact = group((await search(app, 'q=vastmere%20999')).body, 'contacts');
      assert.deepEqual([exact.total, exact.more], [1, false], 'below the cap the count is exact');
      const admin = await pageSignIn(app, app.admin);
      const fragment = await admin.get('/search/suggestions?q=vastmere');
      assert.match(fragment.text, /data-summary="1,000\+ contacts match “vastmere”\."/);
      assert.match(fragment.text, /See all 1,000\+ contacts/);
    });

    test('a viewer and an agent search too; a stranger is asked to sign in', async () => {
      for (const role of ['viewer', 'agent']) {
        const who = await teammate(app, role);
        const found = await search(app, 'q=harbourline', who.token);
        assert.equal(found.status, 200, `${role}: ${found.text}`);
        assert.equal(group(found.body, 'contacts').total, 7, role);
        assert.equal((await search(app, 'q=zanzibar', who.token)).body.data[1].total, 1, role);
      }
      const stranger = await search(app, 'q=harbourline', '');
      assert.equal(stranger.status, 401, stranger.text);
    });

    test('q blank, missing or too long, a bad limit or an unknown parameter: 422 naming it', async () => {
      const cases: [string, string][] = [
        ['', 'q'],
        ['q=', 'q'],
        [`q=${encodeURIComponent('   ')}`, 'q'],
        ['q=a&q=b', 'q'],
        [`q=${'x'.repeat(201)}`, 'q'],
        // Characters, not UTF-16 units: 200 emoji are 200 characters.
        [`q=${encodeURIComponent('😀'.repeat(201))}`, 'q'],
        [`q=${encodeURIComponent('a b c d e f g h i j k')}`, 'q'],
        ['q=harbourline&limit=0', 'limit'],
        ['q=harbourline&limit=21', 'limit'],
        ['q=harbourline&limit=two', 'limit'],
        ['q=harbourline&page=2', 'page'],
      ];
      for (const [query, field] of cases) {
        const refused = await search(app, query);
        assert.equal(refused.status, 422, `${query}: ${refused.text}`);
        assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
        assert.equal(refused.body.code, 'validation_failed');
        assert.deepEqual(Object.keys(refused.body.errors), [field], query);
      }
      for (const q of ['x'.repeat(200), '😀'.repeat(200)]) {
        const fits = await search(app, `q=${encodeURIComponent(q)}`);
        assert.equal(fits.status, 200, `200 characters are allowed: ${fits.text}`);
      }
    });

    test('the OpenAPI document describes the route', async () => {
      const doc = (await app.get('/api/v1/openapi.json')).body;
      const route = doc.paths['/api/v1/search'].get;
      assert.deepEqual(route.parameters.map((p: Json) => p.name).sort(), ['limit', 'q']);
      assert.ok(route.responses['200'] && route.responses['422']);
    });

    test('the results page and the suggestions show the same groups, with links to the whole lists', async () => {
      const viewer = await teammate(app, 'viewer');
      const browser = await pageSignIn(app, viewer);
      const page = await browser.get('/search?q=harbourline');
      assert.equal(page.status, 200, page.text.slice(0, 500));
      assert.match(page.text, /Results for “harbourline”/);
      assert.match(page.text, /href="\/contacts\?search=harbourline">See all 7 contacts</);
      assert.match(page.text, new RegExp(`href="/contacts/${harbour[6]}">Harbourline Person G<`));
      assert.match(page.text, /No inquiries match\./);
      assert.match(page.text, /<form[^>]*action="\/search"[^>]*role="search"/, 'the header’s box is a plain form');

      const empty = await browser.get('/search?q=');
      assert.equal(empty.status, 200, 'an empty search is a page to type into');
      const tooLong = await browser.get(`/search?q=${'y'.repeat(201)}`);
      assert.equal(tooLong.status, 422);
      assert.match(tooLong.text, /must be at most 200 characters/);

      const fragment = await browser.get('/search/suggestions?q=harbourline');
      assert.equal(fragment.status, 200);
      assert.doesNotMatch(fragment.text, /<html/);
      assert.equal(fragment.text.match(/role="option"/g)?.length, 6, 'five contacts and "see all"');
      assert.match(fragment.text, /data-href="\/contacts\?search=harbourline"/);
      assert.match(fragment.text, /data-summary="7 contacts match “harbourline”\."/);
      assert.doesNotMatch(fragment.text, /Inquiries/, 'a group without matches is left out');
    });

    test('a resource the caller may not read is left out, not refused', async () => {
      // Everyone reads contacts and inquiries; users are for admins: searched as a third target, they show the
      // rule the route relies on.
      const targets = [...SEARCHED, { resource: user, subtitle: [['email']] }];
      const viewer = await teammate(app, 'viewer', 'Harbourline Viewer');
      const as = (id: bigint | number, role: 'admin' | 'viewer') => ({
        database: app.database,
        actor: { id: BigInt(id), role },
      });
      const seenByViewer = await searchRecords(as(viewer.id, 'viewer'), targets, { q: 'harbourline' });
      assert.deepEqual(
        seenByViewer.map((g) => g.resource.name),
        ['contacts', 'inquiries'],
      );
      const seenByAdmin = await searchRecords(as(app.admin.id, 'admin'), targets, { q: 'harbourline' });
      assert.deepEqual(
        seenByAdmin.map((g) => [g.resource.name, g.total]),
        [
          ['contacts', 7],
          ['inquiries', 0],
          ['users', 1],
        ],
      );
    });

    test('EXPLAIN: a two-word search reads the trigram index, not the tables', async () => {
      const db = app.database.db;
      const sent: CompiledQuery[] = [];
      const recording = db.withPlugin({
        transformQuery: ({ node, queryId }) => {
          sent.push(db.getExecutor().compileQuery(node, queryId));
          return node;
        },
        transformResult: async ({ result }) => result,
      });
      const admin = { id: BigInt(app.admin.id), role: 'admin' as const };
      const groups = await searchRecords({ database: { ...app.database, db: recording }, actor: admin }, SEARCHED, {
        q: 'harbourline lisbon',
      });
      assert.equal(groups[0]!.total, 4);
      const searched = sent.filter((q) => /\b(contacts|inquiries)\b/.test(q.sql) && !/\bstages\b/.test(q.sql));
      assert.ok(searched.length >= 2, `the statements sent: ${sent.map((q) => q.sql).join('\n')}`);
      for (const query of searched) {
        const table = /\binquiries/.test(query.sql) ? 'inquiries' : 'contacts';
        const plan =
          dialect === 'sqlite'
            ? (await db.executeQuery({ ...query, sql: `explain query plan ${query.sql}` })).rows
                .map((r) => (r as { detail: string }).detail)
                .join('\n')
            : dialect === 'mysql'
              ? (await db.executeQuery({ ...query, sql: `explain format=json ${query.sql}` })).rows
                  .map((r) => (r as { EXPLAIN: string }).EXPLAIN)
                  .join('\n')
              : // On tables this small, reading them whole is the planner's rightful choice; with table scans and plain
                // index walks priced out, what it still can use must be the trigram index, holding both words.
                await db.transaction().execute(async (trx) => {
                  await sql`set local enable_seqscan = off`.execute(trx);
                  await sql`set local enable_indexscan = off`.execute(trx);
                  const { rows } = await trx.executeQuery({ ...query, sql: `explain ${query.sql}` });
                  return rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n');
                });
        const where = `${query.sql}\n${plan}`;
        if (dialect === 'sqlite') {
          assert.match(plan, new RegExp(`SCAN ${table}_search VIRTUAL TABLE INDEX`), where);
          assert.doesNotMatch(plan, new RegExp(`SCAN ${table}\\b(?!_search)`), where);
        } else if (dialect === 'mysql') {
          // MariaDB has no index for a word inside text (no n-gram parser): the table is read, and each row is
          // tested once, on the bytes of its stored lower-cased search text holding both words, never field by field.
          assert.doesNotMatch(query.sql, /lower\(`/, where);
          const conditions = [...plan.matchAll(/"attached_condition": "(.*)"/g)].map((m) => m[1]!);
          const text = `cast\\(${table}\\.search_text as char charset binary\\)`;
          const both = `${text} like .*%harbourline%.* and ${text} like .*%lisbon%`;
          assert.ok(conditions.length >= 1, where);
          for (const condition of conditions) assert.match(condition, new RegExp(both), where);
        } else {
          assert.match(plan, new RegExp(`Bitmap Index Scan on ${table}_search_text`), where);
          assert.match(plan, /Index Cond: .*%harbourline%.*%lisbon%/, where);
          assert.doesNotMatch(plan, /Seq Scan/, where);
        }
      }
    });
  });
}
