// Sorting by name follows the language's order on both databases (issue 13, item 5): "Åsa" and "Ärla" sort with the
// A's, "Łukasz" with the L's, as Intl.Collator compares them at the first level; a record without a name comes first
// (NULL is the smallest value). The order holds in the API's pages and cursors, the list page and the CSV export,
// and the sort key the server keeps for it (name_sort) is in no response.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const NAMES = ['Zoë', 'Åsa', 'Ärla', 'Łukasz', 'Lars', 'adam', 'Bob', 'Émile', null, 'asa'];
// Two records share a name, two have none: the id breaks those ties.
const TWINS = ['Lars', null];
/** What a sort key puts between its first-level text and the name (schema/keys.ts). */
const SEPARATOR = '\u0001';
const collator = new Intl.Collator('en', { sensitivity: 'base' });
const initial = (name: string) => [...'abcdefghijklmnopqrstuvwxyz'].find((c) => collator.compare(name[0]!, c) === 0);

/** The records in the order the API gives for `sort`, read through `cursor` pages of `perPage`. */
async function walk(app: TestApp, path: string, sort: string, perPage: number): Promise<Json[]> {
  const seen: Json[] = [];
  let cursor = '';
  for (let pages = 0; pages < 50; pages++) {
    const reply = await app.get(`${path}?sort=${sort}&per_page=${perPage}&cursor=${cursor}`);
    assert.equal(reply.status, 200, reply.text);
    seen.push(...reply.body.data);
    const next = reply.body.meta.next_cursor as string | null;
    if (next === null) return seen;
    const decoded = Buffer.from(next, 'base64url').toString('utf8');
    assert.ok(!decoded.includes(SEPARATOR) && !decoded.includes('\\u0001'), `the cursor holds no sort key: ${decoded}`);
    cursor = next;
  }
  throw new Error('the cursor never ended');
}

const ids = (records: Json[]) => records.map((r) => String(r.id));
const names = (records: Json[]) => records.map((r) => r.name as string | null);
const emails = (records: Json[]) => records.map((r) => r.email as string);

/** The email column of a CSV export, in its order (every record here has an address without a comma). */
function exported(reply: Reply): string[] {
  assert.equal(reply.status, 200, reply.text.slice(0, 300));
  const [header, ...rows] = reply.text
    .replace(/^\uFEFF/, '')
    .trim()
    .split('\r\n');
  assert.doesNotMatch(header!, /name_sort/);
  const column = header!.split(',').indexOf('email');
  return rows.map((row) => row.split(',')[column]!);
}

for (const dialect of DIALECTS) {
  describe(`sorting by name on ${dialect}`, () => {
    let app: TestApp;
    const created = new Map<string, string | null>();

    before(async () => {
      app = await startApp(dialect);
      for (const [i, name] of [...NAMES, ...TWINS].entries()) {
        const reply = await app.post('/api/v1/contacts', { name, email: `person${i}@example.org` });
        assert.equal(reply.status, 201, reply.text);
        created.set(String(reply.body.data.id), name);
      }
    });
    after(() => app?.close());

    test('sort=name puts Åsa, Ärla and asa among the A’s and Łukasz with Lars, as Intl.Collator does', async () => {
      const reply = await app.get('/api/v1/contacts?sort=name&per_page=100');
      assert.equal(reply.status, 200, reply.text);
      const order = names(reply.body.data);
      assert.deepEqual(order, [
        null,
        null,
        'adam',
        'Ärla',
        'asa',
        'Åsa',
        'Bob',
        'Émile',
        'Lars',
        'Lars',
        'Łukasz',
        'Zoë',
      ]);
      const named = order.filter((n) => n !== null);
      for (const [i, name] of named.slice(1).entries())
        assert.ok(collator.compare(named[i]!, name) <= 0, `${named[i]} before ${name}, as Intl.Collator orders them`);
      assert.deepEqual(
        named.filter((n) => initial(n) === 'a'),
        named.slice(0, 4),
      );
      assert.deepEqual(named.slice(6, 9), ['Lars', 'Lars', 'Łukasz']);
      // Equal names and no names keep the id order (the tie-break in the direction of the last key).
      for (const twin of TWINS) {
        const same = reply.body.data.filter((r: Json) => r.name === twin).map((r: Json) => Number(r.id));
        assert.deepEqual(
          same,
          [...same].sort((a, b) => a - b),
        );
      }
    });

    test('sort=-name is the exact reverse, the records without a name last', async () => {
      const up = await app.get('/api/v1/contacts?sort=name&per_page=100');
      const down = await app.get('/api/v1/contacts?sort=-name&per_page=100');
      assert.equal(down.status, 200, down.text);
      assert.deepEqual(ids(down.body.data), ids(up.body.data).reverse());
      assert.deepEqual(names(down.body.data).slice(0, 3), ['Zoë', 'Łukasz', 'Lars']);
    });

    test('a cursor over pages of 2 visits every record once, in the same order, both ways', async () => {
      // Pages of 1 also end between names equal at the first level ("asa" | "Åsa"), between twins and between NULLs.
      for (const sort of ['name', '-name'])
        for (const perPage of [2, 1, 3]) {
          const whole = await app.get(`/api/v1/contacts?sort=${sort}&per_page=100`);
          const paged = await walk(app, '/api/v1/contacts', sort, perPage);
          assert.deepEqual(ids(paged), ids(whole.body.data), `${sort}, pages of ${perPage}`);
          assert.equal(new Set(ids(paged)).size, created.size);
        }
    });

    test('a record renamed between two pages moves without a record being skipped or repeated', async () => {
      const first = await app.get('/api/v1/contacts?sort=name&per_page=4&cursor=');
      const rest = ids((await app.get('/api/v1/contacts?sort=name&per_page=100')).body.data).slice(4);
      const bob = { id: [...created].find(([, name]) => name === 'Bob')![0] };
      assert.equal((await app.patch(`/api/v1/contacts/${bob.id}`, { name: 'Ábel' })).status, 200);
      try {
        const next = await app.get(`/api/v1/contacts?sort=name&per_page=100&cursor=${first.body.meta.next_cursor}`);
        assert.deepEqual(
          ids(next.body.data),
          rest.filter((id) => id !== String(bob.id)),
          'Bob, renamed Ábel, is now before the cursor',
        );
      } finally {
        await app.patch(`/api/v1/contacts/${bob.id}`, { name: 'Bob' });
      }
    });

    test('the list page sorted by name shows the same order', async () => {
      const browser = await pageSignIn(app, app.admin);
      const api = await app.get('/api/v1/contacts?sort=name&per_page=100');
      for (const sort of ['name', '-name']) {
        const page = await browser.get(`/contacts?sort=${sort}&per_page=100`);
        assert.equal(page.status, 200, page.text.slice(0, 300));
        const shown = [...new Set([...page.text.matchAll(/href="\/contacts\/(\d+)"/g)].map((m) => m[1]!))];
        const expected = ids(api.body.data);
        assert.deepEqual(shown, sort === 'name' ? expected : expected.reverse());
      }
      assert.deepEqual(exported(await browser.get('/contacts/export.csv?sort=name')), emails(api.body.data));
    });

    test('the CSV export is in the same order, without the sort key', async () => {
      const api = await app.get('/api/v1/contacts?sort=-name&per_page=100');
      assert.deepEqual(exported(await app.get('/api/v1/contacts/export?format=csv&sort=-name')), emails(api.body.data));
    });

    test('inquiries sort by name the same way', async () => {
      for (const [i, name] of ['Łukasz', 'Zoë', 'Lars', 'Åsa', 'Mia'].entries()) {
        const reply = await app.post('/api/v1/inquiries', { name, email: `inquirer${i}@example.org` });
        assert.equal(reply.status, 201, reply.text);
      }
      const paged = await walk(app, '/api/v1/inquiries', 'name', 2);
      assert.deepEqual(names(paged), ['Åsa', 'Lars', 'Łukasz', 'Mia', 'Zoë']);
      assert.deepEqual(names(await walk(app, '/api/v1/inquiries', '-name', 2)), names(paged).reverse());
    });

    test('the sort key is neither a field one may sort or filter by, nor in any response', async () => {
      for (const query of ['sort=name_sort', 'sort=-name_sort', 'filter[name_sort]=asa']) {
        const reply = await app.get(`/api/v1/contacts?${query}`);
        assert.equal(reply.status, 422, `${query}: ${reply.text}`);
      }
      const one = await app.get(`/api/v1/contacts/${[...created.keys()][0]}`);
      assert.equal(one.status, 200);
      assert.equal(one.body.data.name_sort, undefined);
      for (const response of app.responses) {
        const body = response.slice(response.indexOf('\n\n'));
        assert.ok(
          !/"name_sort"|\\u0001/.test(body) && !body.includes(SEPARATOR),
          `no sort key in: ${response.slice(0, 200)}`,
        );
      }
    });

    if (dialect === 'postgres')
      test('on a database whose collation is not byte order, the keys are still compared byte by byte', async () => {
        // As on a server whose databases are made with an ICU or glibc locale: such a collation skips the key's
        // separator, which would put "Ann" after "Annabel".
        await sql`alter table contacts alter column name_sort type varchar(255) collate "en-x-icu"`.execute(
          app.database.db,
        );
        for (const [i, name] of ['Annabel', 'Anna', 'Ann Marie', 'Ann'].entries())
          assert.equal((await app.post('/api/v1/contacts', { name, email: `ann${i}@example.org` })).status, 201);
        const wanted = ['Ann', 'Ann Marie', 'Anna', 'Annabel'];
        assert.deepEqual(
          [...wanted].sort(new Intl.Collator('en').compare),
          wanted,
          'the order Intl.Collator gives (a space before a letter)',
        );
        const anns = (records: Json[]) => names(records).filter((n) => n?.startsWith('Ann'));
        assert.deepEqual(anns((await app.get('/api/v1/contacts?sort=name&per_page=100')).body.data), wanted);
        assert.deepEqual(anns(await walk(app, '/api/v1/contacts', 'name', 2)), wanted);
        assert.deepEqual(anns(await walk(app, '/api/v1/contacts', '-name', 3)), [...wanted].reverse());
      });
  });
}
