// The search index and the row counters, on each database: a search through
// the API (trigram index: FTS5 on SQLite, pg_trgm on PostgreSQL) must return
// exactly the rows a plain scan of every searchable field returns, on
// generated values full of traps (accents, case pairs that fold oddly, LIKE
// wildcards, backslashes, quotes, emoji), after creates, edits, deletes and a
// CSV import; and meta.total, which comes from the counters or the index,
// must equal a plain count(*).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import fc from 'fast-check';
import { type Expression, type SqlBool, sql } from 'kysely';
import { contact, recordResources, user } from '../src/resources/index.ts';
import { formats } from '../src/schema/formats.ts';
import { DIALECTS } from './helpers/database.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { sampler } from './helpers/samples.ts';
import { asRecordTables } from '../src/db/tables.ts';

// Pieces values are made of: each a trap for case folding, LIKE or FTS query syntax.
const PIECES = [
  'sol',
  'SOL',
  'Sol',
  'ar',
  'solar',
  'é',
  'É',
  'e\u0301',
  'ß',
  'SS',
  'İ',
  'ı',
  'i',
  'Σ',
  'σ',
  'ς',
  'ǅ',
  'ﬁ',
  'Å',
  'å',
  '%',
  '_',
  '\\',
  '"',
  "'",
  '*',
  '(',
  ')',
  'AND',
  'or',
  'NEAR',
  '-',
  ':',
  '^',
  '😀',
  '👍🏽',
  '中文',
  'x',
  'yz',
  ' ',
];
const RUNS = Number(process.env.LEADBOOK_SOAK ? 200 : 60);
const TEXT_FIELDS = contact.searchText.map((f) => f.name);

const valueArb = fc.array(fc.constantFrom(...PIECES), { minLength: 0, maxLength: 6 }).map((parts) => parts.join(''));
// An email must be a valid address (the second wave's rule): the pieces a local part may hold, traps included.
const LOCAL_PIECES = ['sol', 'SOL', 'solar', 'ar', '%', '_', "'", '*', '-', '^', 'AND', 'or', 'NEAR', 'x', 'yz'];
const emailArb = fc
  .tuple(
    fc.array(fc.constantFrom(...LOCAL_PIECES), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('example.com', 'solar.test', 'sol-ar.example'),
  )
  .map(([local, domain]) => `${local.join('')}@${domain}`);
const holds = (v: string | null | undefined) => typeof v === 'string' && v.trim() !== '';
// A field with a format gets valid values of it: an email from the pieces above; for any other format the pieces as
// they are when the format takes them (a phone), else carried by a value of it (a web address with them in its path).
const arbOf = (field: (typeof contact.searchText)[number]): fc.Arbitrary<string> => {
  if (!field.format) return valueArb;
  if (field.format === 'email') return emailArb;
  const format = formats[field.format];
  return valueArb.map((v) => (format.parse(v).ok ? v : format.tagged(v))).filter((v) => format.parse(v).ok);
};
const rowArb = fc
  .record(
    Object.fromEntries(contact.searchText.map((f) => [f.name, fc.option(arbOf(f), { nil: null })])) as Record<
      string,
      fc.Arbitrary<string | null>
    >,
  )
  // A contact needs a name, an email or a phone.
  .map((row) =>
    holds(row.name) || holds(row.email) || holds(row.phone) ? row : { ...row, name: `named ${row.city ?? ''}` },
  );
// Search words: whitespace-free runs of pieces, one to four of them (so one- and two-character words occur).
const wordArb = fc
  .array(fc.constantFrom(...PIECES.filter((p) => p !== ' ')), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join(''));

for (const dialect of DIALECTS) {
  describe(`search index and counters (${dialect})`, { timeout: 180_000 }, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(async () => {
      await app?.close();
    });

    /** Ids the API lists for a search, walking every page by cursor; and the total it reports for page 1. */
    async function apiSearch(search: string): Promise<{ ids: string[]; total: number }> {
      const first = await app.get(`/api/v1/contacts?search=${encodeURIComponent(search)}&per_page=1`);
      assert.equal(first.status, 200, first.text);
      const ids: string[] = [];
      let cursor = '';
      for (;;) {
        const page = await app.get(
          `/api/v1/contacts?search=${encodeURIComponent(search)}&per_page=100&cursor=${cursor}`,
        );
        assert.equal(page.status, 200, page.text);
        ids.push(...page.body.data.map((r: { id: unknown }) => String(r.id)));
        if (!page.body.meta.next_cursor) break;
        cursor = page.body.meta.next_cursor;
      }
      return { ids: ids.sort(), total: first.body.meta.total };
    }

    /** The same search as a plain scan of each field, written here without the index. */
    async function scan(words: string[]): Promise<string[]> {
      const contains = (column: string, word: string): Expression<SqlBool> =>
        dialect === 'sqlite'
          ? sql<SqlBool>`instr(lb_fold(${sql.ref(column)}), ${word.toLowerCase()}) > 0`
          : sql<SqlBool>`position(lower(${word}) in lower(${sql.ref(column)})) > 0`;
      const rows = await app.database.db
        .selectFrom('contacts')
        .select('id')
        .where((eb) => eb.and(words.map((w) => eb.or(TEXT_FIELDS.map((c) => contains(c, w))))))
        .execute();
      return rows.map((r) => String(r.id)).sort();
    }

    async function count(): Promise<number> {
      const row = await app.database.db
        .selectFrom('contacts')
        .select(sql<number | bigint | string>`count(*)`.as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    async function assertSame(words: string[]) {
      const search = words.join(' ');
      const [found, expected] = [await apiSearch(search), await scan(words)];
      assert.deepEqual(found.ids, expected, `search ${JSON.stringify(search)}: the index and a scan disagree`);
      assert.equal(found.total, expected.length, `search ${JSON.stringify(search)}: meta.total`);
    }

    /** Words to try: substrings of stored values (so that most searches find something) and generated ones. */
    async function wordsToTry(seed: number): Promise<string[][]> {
      const stored = await asRecordTables(app.database.db).selectFrom('contacts').select(TEXT_FIELDS).execute();
      const values = stored
        .flatMap((r) => TEXT_FIELDS.map((c) => r[c] as string | null))
        .filter((v): v is string => !!v && v.trim() !== '');
      const generated = fc.sample(fc.array(wordArb, { minLength: 1, maxLength: 2 }), { numRuns: RUNS, seed });
      const cut = fc
        .sample(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 6 })), { numRuns: RUNS, seed: seed + 1 })
        .map(([v, start, length]) => {
          const chars = [...values[v % values.length]!];
          const from = start % chars.length;
          return [
            chars
              .slice(from, from + length)
              .join('')
              .split(/\s+/u)
              .find(Boolean) ?? 'x',
          ];
        });
      return [...generated, ...cut];
    }

    test('the indexed search returns what a plain scan returns, with totals that match', async () => {
      const rows = fc.sample(rowArb, { numRuns: 150, seed: 42 });
      for (const row of rows) assert.equal((await app.post('/api/v1/contacts', row)).status, 201);
      const tries = await wordsToTry(7);
      for (const words of tries) await assertSame(words);
      const hits = (await Promise.all(tries.map((w) => scan(w)))).filter((ids) => ids.length > 0).length;
      assert.ok(hits > tries.length / 3, `most searches should find rows (found rows for ${hits} of ${tries.length})`);
    });

    test('the index follows edits, deletes and imports in the same transaction', async () => {
      const listed = await app.get('/api/v1/contacts?per_page=100');
      const ids: string[] = listed.body.data.map((r: { id: unknown }) => String(r.id));
      const edits = fc.sample(rowArb, { numRuns: 40, seed: 9 });
      for (const [i, row] of edits.entries())
        assert.equal((await app.patch(`/api/v1/contacts/${ids[i]}`, row)).status, 200);
      for (const id of ids.slice(40, 70)) assert.equal((await app.delete(`/api/v1/contacts/${id}`)).status, 204);
      const imported = fc.sample(rowArb, { numRuns: 60, seed: 11 });
      // Written as the export writes it: a value that starts like a formula gets a quote the import takes off again.
      const cell = (v: string | null) =>
        v === null ? '' : `"${(/^'*[=+\-@\t\r]/.test(v) ? `'${v}` : v).replaceAll('"', '""')}"`;
      const csv = [
        TEXT_FIELDS.join(','),
        ...imported.map((r) => TEXT_FIELDS.map((c) => cell(r[c] ?? null)).join(',')),
      ].join('\r\n');
      const form = new FormData();
      form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
      const report = await app.request('POST', '/api/v1/contacts/import', { body: form });
      assert.equal(report.status, 200, report.text);
      assert.equal(report.body.created, 60, report.text);
      for (const words of await wordsToTry(13)) await assertSame(words);
    });

    test('every searchable text field of every resource is in its search index (migration T0003 agrees with the declarations)', async () => {
      // A valid record of each resource (what it references exists), then one text field marked.
      const samples = sampler((path, body) => app.post(path, body), new Map([[user, app.admin.id]]));
      let n = 0;
      for (const resource of recordResources) {
        for (const field of resource.searchText.filter((f) => !f.readOnly)) {
          const marker = `zq${field.name.replaceAll('_', '')}${resource.name}`;
          const body = await samples.input(resource, ++n, 'indexed');
          if (resource === user) body.email = `user.${field.name.replaceAll('_', '')}@example.test`;
          body[field.name] = field.format ? formats[field.format].tagged(marker) : `before ${marker} after`;
          const created = await app.post(`/api/v1/${resource.name}`, body);
          assert.equal(created.status, 201, created.text);
          const found = await app.get(`/api/v1/${resource.name}?search=${marker}`);
          assert.deepEqual(
            found.body.data.map((r: { id: unknown }) => String(r.id)),
            [String(created.body.data.id)],
            `${resource.name}.${field.name} is searched`,
          );
        }
      }
    });

    test('an unfiltered total is exact after creates, deletes and imports', async () => {
      const before = await app.get('/api/v1/contacts?per_page=1');
      assert.equal(before.body.meta.total, await count());
      const created = await Promise.all(
        Array.from({ length: 12 }, (_, i) => app.post('/api/v1/contacts', { name: `counted ${i}` })),
      );
      for (const r of created) assert.equal(r.status, 201);
      await Promise.all(created.slice(0, 5).map((r) => app.delete(`/api/v1/contacts/${r.body.data.id}`)));
      const afterwards = await app.get('/api/v1/contacts?per_page=1');
      assert.equal(afterwards.body.meta.total, before.body.meta.total + 7);
      assert.equal(afterwards.body.meta.total, await count());
      // A rejected write (a validation failure) changes no counter.
      assert.equal((await app.post('/api/v1/contacts', { name: 'x'.repeat(256) })).status, 422);
      assert.equal((await app.get('/api/v1/contacts?per_page=1')).body.meta.total, await count());
    });

    if (dialect === 'postgres')
      test('PostgreSQL counts a search through the trigram index where reading the table looks cheaper to it', async () => {
        // A table this small is one the planner would read whole; the app prices that out for a read of every match
        // of a search (db/dialect.ts, readingEveryMatch), which on a large table is the difference between milliseconds
        // and a read of every row. The index's own scan counter says which was used (the app's connections report it
        // when they go idle, within a second or so).
        const indexScans = async () => {
          const { rows } = await sql<{ n: string }>`
          select idx_scan as n from pg_stat_user_indexes where indexrelname = 'contacts_search_text'`.execute(
            app.database.db,
          );
          return Number(rows[0]!.n);
        };
        const before = await indexScans();
        const listed = await app.get('/api/v1/contacts?search=sol');
        assert.equal(listed.status, 200, listed.text);
        assert.equal(listed.body.meta.total, (await scan(['sol'])).length);
        let after = before;
        for (const deadline = Date.now() + 20_000; after === before && Date.now() < deadline; ) {
          await setTimeout(250);
          after = await indexScans();
        }
        assert.ok(after > before, `contacts_search_text was scanned ${before} times before the search and after it`);
      });
  });
}
