// The import engine's acceptance (issue 15), on each database, over HTTP
// against the real app (and the real command line): files as spreadsheets
// write them (made with exceljs and iconv-lite, not by hand), an export that
// imports back as no change at all, the rollback of a 10,000-row import that
// puts every row back as it was except those touched since, a dry run that
// writes nothing and says what the import then does, the failed rows' CSV
// corrected and imported again, and `leadbook import` / `import:rollback`.
// Rows are read straight from the database for the digests.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { sql } from 'kysely';
import { seed } from '../src/cli/seed.ts';
import { type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { runCli } from './helpers/process.ts';

// ------------------------------------------------------------------ helpers

interface ImportParams {
  filename?: string;
  type?: string;
  mapping?: Record<string, string | null>;
  upsert_by?: 'id' | 'email';
  dry_run?: boolean;
  /** Send the options as query parameters instead of form fields before the file. */
  inQuery?: boolean;
}

/** POST /api/v1/{resource}/import: the options as multipart fields before the file (or in the query), then the file. */
function importFile(app: TestApp, file: string | Uint8Array, params: ImportParams = {}, resource = 'contacts') {
  const options: Record<string, string> = {};
  if (params.mapping) options.mapping = JSON.stringify(params.mapping);
  if (params.upsert_by) options.upsert_by = params.upsert_by;
  if (params.dry_run !== undefined) options.dry_run = String(params.dry_run);
  const form = new FormData();
  if (!params.inQuery) for (const [k, v] of Object.entries(options)) form.append(k, v);
  const bytes = typeof file === 'string' ? Buffer.from(file, 'utf8') : file;
  form.append(
    'file',
    new Blob([new Uint8Array(bytes)], { type: params.type ?? 'text/csv' }),
    params.filename ?? 'rows.csv',
  );
  const query = params.inQuery && Object.keys(options).length ? `?${new URLSearchParams(options)}` : '';
  return app.request('POST', `/api/v1/${resource}/import${query}`, { body: form });
}

function ok(reply: Reply, status = 200): Json {
  assert.equal(reply.status, status, reply.text);
  return reply.body;
}

/** The body's bytes exactly as sent (a byte order mark kept). */
async function rawBody(app: TestApp, urlPath: string): Promise<Buffer> {
  const res = await fetch(app.url + urlPath, { headers: { authorization: `Bearer ${app.admin.token}` } });
  assert.equal(res.status, 200, urlPath);
  return Buffer.from(await res.arrayBuffer());
}

const exportCsv = (app: TestApp) => rawBody(app, '/api/v1/contacts/export?format=csv');

/** A value as the digest compares it: the same on both drivers' types (Date, bigint, number, string). */
function canonical(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint' || typeof v === 'number') return String(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return v;
}

/** Every column of every row of `contacts`, straight from the database: id → the row as JSON, columns in name order. */
async function contactDigests(app: TestApp): Promise<Map<string, string>> {
  const { rows } = await sql<Record<string, unknown>>`select * from contacts order by id`.execute(app.database.db);
  return new Map(
    rows.map((r) => [
      String(r.id),
      JSON.stringify(
        Object.keys(r)
          .sort()
          .map((k) => [k, canonical(r[k])]),
      ),
    ]),
  );
}

const TABLES = ['contacts', 'change_log', 'imports', 'import_failures', 'import_mappings', 'notes'] as const;

async function tableCounts(app: TestApp): Promise<Record<(typeof TABLES)[number], number>> {
  const out = {} as Record<(typeof TABLES)[number], number>;
  for (const table of TABLES) {
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table)}`.execute(app.database.db);
    out[table] = Number(rows[0]!.n);
  }
  return out;
}

/** Rows of contacts as stored, by email (lower-cased). */
async function contactsByEmail(app: TestApp): Promise<Map<string, Record<string, unknown>>> {
  const { rows } = await sql<Record<string, unknown>>`select * from contacts`.execute(app.database.db);
  return new Map(rows.filter((r) => r.email).map((r) => [String(r.email).toLowerCase(), r]));
}

const csvText = (rows: unknown[][], delimiter = ',') =>
  stringify(rows as string[][], { delimiter, record_delimiter: 'windows' });

/** The contacts of the spreadsheet files: name, email, phone, company, town, and a column that fills no field. */
const HEADERS = ['Full name', 'E-mail', 'Mobile', 'Company', 'Town', 'Favourite colour'];
const EXPECTED_COLUMNS = [
  { header: 'Full name', field: 'name' },
  { header: 'E-mail', field: 'email' },
  { header: 'Mobile', field: 'phone' },
  { header: 'Company', field: 'occupation' },
  { header: 'Town', field: 'city' },
  { header: 'Favourite colour', field: null },
];

/** Asserts the stored contact of each row, field by field (email matched case-insensitively). */
async function assertStored(app: TestApp, rows: string[][]) {
  const stored = await contactsByEmail(app);
  for (const [name, email, phone, company, town] of rows) {
    const r = stored.get(email!.toLowerCase());
    assert.ok(r, `a contact for ${email}`);
    assert.deepEqual(
      { name: r.name, email: r.email, phone: r.phone, occupation: r.occupation, city: r.city },
      // An empty cell is stored as null.
      { name, email, phone: phone || null, occupation: company || null, city: town || null },
      `the contact ${email}`,
    );
  }
}

/** DATA_DIR and DATABASE_URL of the app's own database, for the command line. */
function cliEnv(app: TestApp): Record<string, string> {
  return { DATA_DIR: app.dataDir, DATABASE_URL: app.databaseUrl ?? '', LOG_LEVEL: 'warn' };
}

for (const dialect of DIALECTS) {
  describe(`import engine (${dialect})`, () => {
    // ---------------------------------------------------------------- (a)
    describe('files as spreadsheets write them', () => {
      let app: TestApp;
      before(async () => {
        app = await startApp(dialect);
      });
      after(async () => app?.close());

      test('Excel "CSV" on a Western Windows: exceljs, semicolons, Windows-1252', async () => {
        const rows = [
          ['Jürgen Weiß', 'juergen@beispiel.de', '+49 30 1234567', 'Bäckerei Müller; Söhne', 'München', 'grün'],
          ['Renée Côté', 'renee@exemple.fr', '+33 1 42 68 53 00', 'Café "Crème"', 'Besançon', 'bleu'],
          ['Zoë Dvořák'.replace('ř', 'r'), 'zoe@example.com', '', '=1+1 Inc', 'Düsseldorf', ''],
        ];
        const workbook = new ExcelJS.Workbook();
        const sheet = workbook.addWorksheet('Kontakte');
        sheet.addRow(HEADERS);
        for (const r of rows) sheet.addRow(r);
        const utf8 = Buffer.from(await workbook.csv.writeBuffer({ formatterOptions: { delimiter: ';' } }));
        const file = iconv.encode(utf8.toString('utf8'), 'win1252');
        assert.ok(file.includes(0xfc) && file.includes(0xdf), 'ü and ß as single Windows-1252 bytes');
        assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(file), 'the file is not UTF-8');

        const answer = ok(await importFile(app, file, { filename: 'Kontakte.csv', type: 'application/vnd.ms-excel' }));
        assert.equal(answer.encoding, 'windows-1252');
        assert.equal(answer.delimiter, ';');
        assert.deepEqual(answer.columns, EXPECTED_COLUMNS);
        assert.equal(answer.created, 3, JSON.stringify(answer.failed));
        assert.deepEqual(answer.failed, []);
        assert.ok(answer.import_id !== undefined);
        // An empty cell is null; a text that looks like a formula (not exported by us) is kept as written.
        await assertStored(app, rows);
        const zoe = (await contactsByEmail(app)).get('zoe@example.com')!;
        assert.equal(zoe.phone, null);
        const summary = ok(await app.get(`/api/v1/imports/${answer.import_id}`)).data;
        assert.equal(summary.encoding, 'windows-1252');
        assert.equal(summary.delimiter, ';');
        assert.equal(summary.created, 3);
        assert.equal(summary.status, 'done');
      });

      test('Excel "Unicode Text": UTF-16 LE with a byte order mark, tab-separated, a .txt', async () => {
        const rows = [
          ['Łukasz Wróbel', 'lukasz@przyklad.pl', '+48 22 123 45 67', 'Spółka "Łąka"', 'Łódź', 'zielony'],
          ['Małgorzata Straße', 'malgorzata@example.com', '+49 40 7654321', 'Gießerei, Ost', 'Gdańsk', ''],
          ['Chloé Lefèvre', 'Chloe@Example.FR', '', '', 'Besançon', 'rouge'],
        ];
        // As Excel writes it: tabs, CRLF, a cell with a quote quoted (quotes doubled).
        const text = csvText([HEADERS, ...rows], '\t');
        assert.match(text, /\t"Spółka ""Łąka"""\t/);
        const file = iconv.encode(text, 'utf16le', { addBOM: true });
        assert.deepEqual([...file.subarray(0, 2)], [0xff, 0xfe]);

        const answer = ok(await importFile(app, file, { filename: 'Contacts.txt', type: 'text/plain' }));
        assert.equal(answer.encoding, 'utf-16le');
        assert.equal(answer.delimiter, '\t');
        assert.deepEqual(answer.columns, EXPECTED_COLUMNS);
        assert.equal(answer.created, 3, JSON.stringify(answer.failed));
        assert.deepEqual(answer.failed, []);
        await assertStored(app, rows);
      });

      test('UTF-8 with a byte order mark and commas; quoted commas, quotes and line breaks', async () => {
        const rows = [
          ['Søren Ærø', 'soren@eksempel.dk', '+45 33 12 34 56', 'Smith, Jones & Co', 'Århus', 'rød'],
          ['Ana "Nani" Muñoz', 'ana@ejemplo.es', '+34 91 123 45 67', 'Línea 1\nLínea 2', 'A Coruña', 'azul'],
          ['Noël Ñandú 😀', 'noel@example.org', '@handle', "'=SUM(A1)", 'Köln', ''],
        ];
        const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(csvText([HEADERS, ...rows]))]);
        const answer = ok(await importFile(app, file, { filename: 'export.csv' }));
        assert.equal(answer.encoding, 'utf-8');
        assert.equal(answer.delimiter, ',');
        assert.deepEqual(answer.columns, EXPECTED_COLUMNS);
        assert.equal(answer.created, 3, JSON.stringify(answer.failed));
        // '=SUM(A1) is a cell our export neutralised: read back as the value it stood for.
        const expected = rows.map((r) => r.map((c) => (c === "'=SUM(A1)" ? '=SUM(A1)' : c)));
        await assertStored(app, expected);
        // The first header kept no byte order mark.
        assert.equal(answer.columns[0].header, 'Full name');
      });

      test('a mapping given with the file overrides the headers; null leaves a column out', async () => {
        const file = csvText([
          ['Kunde', 'E-mail', 'Town', 'Bemerkung'],
          ['Paul Übel', 'paul@example.de', 'Straßburg', 'ruft zurück'],
        ]);
        const answer = ok(
          await importFile(app, file, {
            mapping: { Kunde: 'name', Town: null, Bemerkung: 'detail' },
            inQuery: true,
          }),
        );
        assert.deepEqual(answer.columns, [
          { header: 'Kunde', field: 'name' },
          { header: 'E-mail', field: 'email' },
          { header: 'Town', field: null },
          { header: 'Bemerkung', field: 'detail' },
        ]);
        const paul = (await contactsByEmail(app)).get('paul@example.de')!;
        assert.deepEqual([paul.name, paul.city, paul.detail], ['Paul Übel', null, 'ruft zurück']);
      });
    });

    // ---------------------------------------------------------------- (b)
    test('export, then import with upsert_by=id, changes nothing; upsert_by=email into an empty database recreates it', async () => {
      const app = await startApp(dialect);
      let other: TestApp | undefined;
      try {
        const services = ['Heat pump', 'Roof panels', '=Formula service'];
        const sources = ['Trade fair', 'Referral, partner'];
        const agent = { name: 'Agnes Agent', email: 'agnes@example.com', password: 'agnes agent pass phrase 42' };
        const prepare = async (target: TestApp) => {
          const ids: Record<string, unknown[]> = { services: [], sources: [] };
          for (const name of services)
            ids.services!.push(ok(await target.post('/api/v1/services', { name }), 201).data.id);
          for (const name of sources)
            ids.sources!.push(ok(await target.post('/api/v1/sources', { name }), 201).data.id);
          ok(await target.post('/api/v1/users', { ...agent, role: 'agent' }), 201);
          const token = ok(
            await target.request('POST', '/api/v1/auth/token', {
              json: { email: agent.email, password: agent.password, device_name: 'tests' },
              token: null,
            }),
            201,
          ).token as string;
          return { ids, token };
        };
        const { ids, token: agentToken } = await prepare(app);

        const N = 300;
        const pick = <T>(list: readonly T[], i: number) => list[i % list.length]!;
        const bodies = Array.from({ length: N }, (_, i) => {
          const body: Record<string, unknown> = {
            name: pick(
              [
                `Zoë "Zed" O'Neil ${i}`,
                `Smith, John ${i}`,
                `=1+1 ${i}`,
                `Line\nbreak ${i}`,
                `-minus ${i}`,
                `Łukasz ${i}`,
              ],
              i,
            ),
            email: i % 17 === 0 ? null : i % 5 === 0 ? `Person.${i}@Example.COM` : `person${i}@example.com`,
            phone: pick([`+49 30 ${123456 + i}`, null, `@handle${i}`, `-${i}`, `(555) 010-${1000 + i}`], i),
            occupation: pick(['@handle', '=1+1', 'Company, Inc.', null, '"Quoted"', "'already quoted"], i),
            address: pick([`${i} Main St`, 'Line 1\r\nLine 2', null, "''=double", '+1 Plus road'], i),
            country: pick(['Germany', 'Poland', null, 'Côte d’Ivoire'], i),
            city: pick(['München', 'Kraków', null, 'Zürich', '=cmd|" /C calc"!A0'], i),
            service_id: i % 4 === 3 ? null : pick(ids.services!, i),
            source_id: i % 3 === 2 ? null : pick(ids.sources!, i),
            detail: pick(['', 'Asked about "solar", twice,\nthen again', '\ttabbed', '😀 emoji', '@everyone', null], i),
            budget: pick(['€1,000', null, '-5', '=2*3'], i),
          };
          if (body.detail === '') body.detail = null;
          return body;
        });
        for (let start = 0; start < N; start += 20)
          await Promise.all(
            bodies.slice(start, start + 20).map(async (body, j) => {
              const byAgent = (start + j) % 7 === 0;
              const made = await app.request('POST', '/api/v1/contacts', {
                json: body,
                ...(byAgent ? { token: agentToken } : {}),
              });
              assert.equal(made.status, 201, made.text);
            }),
          );
        const digests = await contactDigests(app);
        assert.equal(digests.size, N);
        const counts = await tableCounts(app);

        const exported = await exportCsv(app);
        const answer = ok(await importFile(app, exported, { upsert_by: 'id', filename: 'contacts.csv' }));
        assert.deepEqual(
          { created: answer.created, updated: answer.updated, unchanged: answer.unchanged, failed: answer.failed },
          { created: 0, updated: 0, unchanged: N, failed: [] },
        );
        assert.deepEqual(await contactDigests(app), digests, 'every column of every row as it was');
        const countsAfter = await tableCounts(app);
        assert.equal(countsAfter.change_log, counts.change_log, 'no change logged');
        assert.equal(countsAfter.imports, counts.imports + 1);
        assert.ok((await exportCsv(app)).equals(exported), 'the export again is byte for byte the same');

        // Into an empty database with the same services, sources and users (named the same, created in another
        // order so that their ids differ): the same rows. Compared through the exports, which name references by
        // name and email, leaving out what a new database gives anew: id, created_at and updated_at (set by the
        // database when a record is made; the import never writes them).
        other = await startApp(dialect);
        await other.post('/api/v1/sources', { name: 'Decoy, to shift the ids' });
        await other.post('/api/v1/services', { name: 'Decoy service' });
        await prepare(other);
        const recreated = ok(await importFile(other, exported, { upsert_by: 'email', filename: 'contacts.csv' }));
        assert.deepEqual(
          { created: recreated.created, updated: recreated.updated, unchanged: recreated.unchanged },
          { created: N, updated: 0, unchanged: 0 },
          JSON.stringify(recreated.failed.slice(0, 3)),
        );
        assert.deepEqual(recreated.failed, []);
        const withoutNew = (file: Buffer) => {
          const [header, ...rows] = parse(file, { bom: true }) as string[][];
          const keep = header!
            .map((h, i) => (['id', 'created_at', 'updated_at'].includes(h) ? -1 : i))
            .filter((i) => i >= 0);
          return [keep.map((i) => header![i]!), ...rows.map((r) => keep.map((i) => r[i]!))];
        };
        // The export lists the newest first, so the new database (which made them in the file's order) lists them
        // the other way round: compared as sets of rows (each row is unique: its name carries its number).
        const sorted = (rows: string[][]) => [
          rows[0]!,
          ...rows.slice(1).sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1)),
        ];
        const there = withoutNew(await exportCsv(other));
        const here = withoutNew(exported);
        // created_by: an id is each database's own (the lookups there were even made in another order), but the
        // export names the creator by email and an admin's import takes it back by email: compared as such.
        const byCol = here[0]!.indexOf('created_by');
        assert.ok(byCol >= 0, 'the export has created_by');
        assert.deepEqual(
          [...new Set(there.slice(1).map((r) => r[byCol]))].sort(),
          [app.admin.email, agent.email].sort(),
          "the agent's contacts are the agent's there too",
        );
        assert.equal(there.length, N + 1);
        assert.deepEqual(sorted(there), sorted(here), 'the same rows, column by column');
      } finally {
        await other?.close();
        await app.close();
      }
    });

    // ---------------------------------------------------------------- (c)
    test('the rollback of a 10,000-row import puts back the exact state before, except what was touched since', async (t) => {
      const app = await startApp(dialect);
      try {
        const started = performance.now();
        await seed(app.database, { contacts: 2000, inquiries: 0, seed: 15 });
        const before = await contactDigests(app);
        assert.equal(before.size, 2000);
        const { rows: existing } = await sql<{ id: unknown; email: string; name: string; city: string | null }>`
          select id, email, name, city from contacts order by id`.execute(app.database.db);

        // 2,000 updates by email (a tenth written upper-case: matched on the normalised email), 8,000 new rows.
        const header = ['email', 'name', 'city', 'occupation', 'source_id'];
        const lines: string[][] = [header];
        existing.forEach((c, i) => {
          lines.push([
            i % 10 === 0 ? c.email.toUpperCase() : c.email,
            c.name,
            `${c.city ?? 'Nowhere'} Nord`,
            i % 2 ? 'Imported occupation' : '',
            i % 3 ? 'Referral' : '',
          ]);
        });
        for (let i = 0; i < 8000; i++)
          lines.push([`new${i}@import.example`, `Neu Kontakt ${i}`, 'Zürich', i % 2 ? '=1+1' : '', 'Trade fair']);
        const file = csvText(lines);
        const tImport = performance.now();
        const answer = ok(await importFile(app, file, { upsert_by: 'email', filename: 'big.csv' }));
        const importSeconds = (performance.now() - tImport) / 1000;
        assert.deepEqual(
          { created: answer.created, updated: answer.updated, unchanged: answer.unchanged, failed: answer.failed },
          { created: 8000, updated: 2000, unchanged: 0, failed: [] },
        );
        const importId = answer.import_id;

        const created = (
          await sql<{
            id: unknown;
          }>`select id from contacts where email like ${'%@import.example'} order by id`.execute(app.database.db)
        ).rows.map((r) => String(r.id));
        assert.equal(created.length, 8000);
        const updatedIds = existing.map((c) => String(c.id));
        const touched = new Map<string, RegExp>();
        for (const id of [...updatedIds.slice(0, 5), ...created.slice(0, 5)]) {
          ok(await app.patch(`/api/v1/contacts/${id}`, { city: 'Edited since' }));
          touched.set(id, /changed/);
        }
        for (const id of created.slice(100, 102)) {
          ok(await app.post(`/api/v1/contacts/${id}/notes`, { body: 'Called back, wants a quote' }), 201);
          touched.set(id, /note|linked|changed/);
        }
        const deleted = created[200]!;
        assert.equal((await app.delete(`/api/v1/contacts/${deleted}`)).status, 204);
        touched.set(deleted, /deleted/);

        const tRollback = performance.now();
        const report = ok(await app.post(`/api/v1/imports/${importId}/rollback`));
        const rollbackSeconds = (performance.now() - tRollback) / 1000;
        const skipped = new Map<string, string>(
          report.skipped.map((s: Json) => [String(s.id), `${s.resource}: ${s.reason}`]),
        );
        assert.deepEqual([...skipped.keys()].sort(), [...touched.keys()].sort(), JSON.stringify(report.skipped));
        for (const [id, reason] of touched) assert.match(skipped.get(id)!, reason, `contact ${id}`);
        for (const s of report.skipped) assert.equal(s.resource, 'contacts');
        assert.equal(report.removed, 8000 - 8);
        assert.equal(report.restored, 2000 - 5);

        const afterRollback = await contactDigests(app);
        for (const [id, digest] of before)
          if (!touched.has(id)) assert.equal(afterRollback.get(id), digest, `contact ${id} as it was`);
        const left = [...afterRollback.keys()].filter((id) => !before.has(id)).sort();
        // The created ones are gone but for those edited or noted since (the deleted one is in the trash).
        assert.deepEqual(left, [...created.slice(0, 5), ...created.slice(100, 102)].sort());
        for (const id of updatedIds.slice(0, 5)) assert.notEqual(afterRollback.get(id), before.get(id));

        const total = (performance.now() - started) / 1000;
        t.diagnostic(
          `${dialect}: import of 10,000 rows ${importSeconds.toFixed(1)} s, rollback ${rollbackSeconds.toFixed(1)} s, ` +
            `the test up to here ${total.toFixed(1)} s`,
        );
        assert.ok(total < 60, `the test took ${total.toFixed(1)} s (under 60 s expected)`);

        const again = await app.post(`/api/v1/imports/${importId}/rollback`);
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.code, 'already_rolled_back');
        const listed = ok(await app.get('/api/v1/imports')).data.find((i: Json) => String(i.id) === String(importId));
        assert.equal(listed?.status, 'rolled_back');
        // The import's own page, with what its rollback did.
        const summary = ok(await app.get(`/api/v1/imports/${importId}`)).data;
        assert.equal(summary.status, 'rolled_back');
        assert.deepEqual(
          { removed: summary.rollback.removed, restored: summary.rollback.restored },
          { removed: 7992, restored: 1995 },
        );
        assert.equal(summary.rollback.skipped.length, 13);
      } finally {
        await app.close();
      }
    });

    // ---------------------------------------------------------------- (d), (e), (f)
    describe('dry run, failed rows, command line', () => {
      let app: TestApp;
      before(async () => {
        app = await startApp(dialect);
        ok(await app.post('/api/v1/sources', { name: 'Trade fair' }), 201);
      });
      after(async () => app?.close());

      test('a dry run writes nothing, and says what the import then does', async () => {
        const seedFile = csvText([
          ['name', 'email', 'city'],
          ['Dry One', 'dry1@example.com', 'Oslo'],
          ['Dry Two', 'dry2@example.com', 'Bergen'],
          ['Dry Three', 'dry3@example.com', 'Tromsø'],
        ]);
        ok(await importFile(app, seedFile));
        const file = csvText([
          ['Full name', 'E-mail', 'Town', 'Source'],
          ['Dry One', 'dry1@example.com', 'Oslo', ''], // unchanged
          ['Dry Two', 'dry2@example.com', 'Stavanger', 'Trade fair'], // update
          ['Dry Three', 'dry3@example.com', 'Tromsø', 'No such source'], // fails: names no source
          ['New Four', 'new4@example.com', 'Ålesund', 'trade FAIR'], // create
          ['New Five', 'not an email', 'Bodø', ''], // fails: email
          ['New Six', '', 'Narvik', ''], // create (no email: nothing to match)
          ['', '', 'Only a town', ''], // fails: needs a name, email or phone
        ]);
        const countsBefore = await tableCounts(app);
        const digestsBefore = await contactDigests(app);
        const dry = ok(await importFile(app, file, { upsert_by: 'email', dry_run: true, mapping: { Town: 'city' } }));
        assert.deepEqual(await tableCounts(app), countsBefore, 'no table has a row more or less');
        assert.deepEqual(await contactDigests(app), digestsBefore, 'no contact changed');
        assert.equal(dry.import_id, undefined);
        assert.equal(dry.created, undefined);
        assert.deepEqual(
          { would_create: dry.would_create, would_update: dry.would_update, unchanged: dry.unchanged },
          { would_create: 2, would_update: 1, unchanged: 1 },
        );
        assert.deepEqual(
          dry.failed.map((f: Json) => [f.row, Object.keys(f.errors).sort()]),
          [
            [3, ['source_id']],
            [5, ['email']],
            [7, ['email', 'name', 'phone']],
          ],
        );

        const real = ok(await importFile(app, file, { upsert_by: 'email', mapping: { Town: 'city' } }));
        assert.deepEqual(
          { created: real.created, updated: real.updated, unchanged: real.unchanged },
          { created: dry.would_create, updated: dry.would_update, unchanged: dry.unchanged },
        );
        assert.deepEqual(real.failed, dry.failed);
        assert.deepEqual(real.columns, dry.columns);
        const after = await tableCounts(app);
        assert.equal(after.contacts, countsBefore.contacts + 2);
        assert.equal(after.imports, countsBefore.imports + 1);
        assert.equal(after.import_failures, countsBefore.import_failures + 3);
        const stored = await contactsByEmail(app);
        assert.equal(stored.get('dry2@example.com')!.city, 'Stavanger');
        assert.equal(stored.get('new4@example.com')!.city, 'Ålesund');
      });

      test('the failed rows download as CSV; corrected, they import', async () => {
        const header = ['Full name', 'E-mail', 'Company', 'Source', 'Favourite colour'];
        const file = csvText([
          header,
          ['Good One', 'good1@example.com', 'Acme', 'Trade fair', 'blue'],
          ['Bad Email', 'bad-email@', 'Acme, Ltd', '', 'red'],
          ['Bad Source', 'bad.source@example.com', '', 'Radio', ''],
          ['Good Two', 'good2@example.com', '', '', ''],
          ['Too Long', 'too.long@example.com', 'x'.repeat(101), 'Trade fair', 'line\nbreak'],
        ]);
        const answer = ok(await importFile(app, file));
        assert.equal(answer.created, 2);
        assert.deepEqual(
          answer.failed.map((f: Json) => [f.row, Object.keys(f.errors)]),
          [
            [2, ['email']],
            [3, ['source_id']],
            [5, ['occupation']],
          ],
        );
        const res = await fetch(`${app.url}/api/v1/imports/${answer.import_id}/failed`, {
          headers: { authorization: `Bearer ${app.admin.token}` },
        });
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
        const [head, ...rows] = parse(Buffer.from(await res.arrayBuffer()), { bom: true }) as string[][];
        assert.deepEqual(head, [...header, 'Import problems']);
        assert.equal(rows.length, 3);
        assert.deepEqual(
          rows.map((r) => r.slice(0, header.length)),
          answer.failed.map((f: Json) => f.cells),
          'the cells as they were read',
        );
        assert.match(rows[0]![5]!, /email/);
        assert.match(rows[1]![5]!, /source_id.*Radio/);
        assert.match(rows[2]![5]!, /occupation/);

        const fixes: Record<string, (r: string[]) => void> = {
          'Bad Email': (r) => (r[1] = 'bad.email@example.com'),
          'Bad Source': (r) => (r[3] = 'Trade fair'),
          'Too Long': (r) => (r[2] = 'x'.repeat(100)),
        };
        for (const r of rows) fixes[r[0]!]!(r);
        const corrected = ok(
          await importFile(app, stringify([head!, ...rows], { bom: true }), { filename: 'fixed.csv' }),
        );
        assert.equal(corrected.created, 3, JSON.stringify(corrected.failed));
        assert.deepEqual(corrected.failed, []);
        assert.deepEqual(corrected.columns.at(-1), { header: 'Import problems', field: null });
        assert.deepEqual(corrected.columns.at(-2), { header: 'Favourite colour', field: null });
        const stored = await contactsByEmail(app);
        assert.equal(stored.get('bad.email@example.com')!.occupation, 'Acme, Ltd');
        assert.equal(stored.get('too.long@example.com')!.occupation, 'x'.repeat(100));
        assert.ok(stored.get('bad.source@example.com')!.source_id !== null);
      });

      test('leadbook import with --map, --dry-run, --upsert-by email; import:rollback', async (t) => {
        const env = cliEnv(app);
        const dir = fs.mkdtempSync(path.join(app.dataDir, 'cli-'));
        const first = path.join(dir, 'leads.csv');
        fs.writeFileSync(
          first,
          csvText([
            ['Lead', 'Mail', 'Hometown', 'Ignored'],
            ['Cli Ärger', 'cli1@example.com', 'Graz', 'x'],
            ['Cli Bär', 'cli2@example.com', 'Linz', 'y'],
            ['Cli Çelik', 'cli3@example.com', 'Wien', 'z'],
          ]),
        );
        const maps = ['--map', 'Lead=name', '--map', 'Mail=email', '--map', 'Hometown=city'];
        const countsBefore = await tableCounts(app);
        const dry = await runCli(['import', 'contacts', first, ...maps, '--dry-run'], env);
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stdout, /Would create 3, would update 0, 0 unchanged contacts/);
        assert.match(dry.stdout, /Columns left out .*: Ignored/);
        assert.doesNotMatch(dry.stdout, /Import \d+/);
        assert.deepEqual(await tableCounts(app), countsBefore, 'the dry run wrote nothing');

        const made = await runCli(['import', 'contacts', first, ...maps], env);
        assert.equal(made.code, 0, made.stderr);
        assert.match(made.stdout, /Created 3, updated 0/);
        const createdId = /Import (\d+): undo it with leadbook import:rollback \1/.exec(made.stdout)?.[1];
        assert.ok(createdId, made.stdout);
        let stored = await contactsByEmail(app);
        assert.deepEqual(
          ['cli1', 'cli2', 'cli3'].map((k) => stored.get(`${k}@example.com`)?.city),
          ['Graz', 'Linz', 'Wien'],
        );
        const digests = await contactDigests(app);

        const second = path.join(dir, 'leads-moved.csv');
        fs.writeFileSync(
          second,
          csvText([
            ['Lead', 'Mail', 'Hometown', 'Ignored'],
            ['Cli Ärger', 'CLI1@example.com', 'Salzburg', 'x'],
            ['Cli Bär', 'cli2@example.com', 'Linz', 'y'],
            ['Cli Neu', 'cli4@example.com', 'Bregenz', 'z'],
          ]),
        );
        const upserted = await runCli(['import', 'contacts', second, ...maps, '--upsert-by', 'email'], env);
        assert.equal(upserted.code, 0, upserted.stderr);
        assert.match(upserted.stdout, /Created 1, updated 1, 1 unchanged contacts/);
        const upsertId = /Import (\d+):/.exec(upserted.stdout)?.[1];
        assert.ok(upsertId && upsertId !== createdId);
        stored = await contactsByEmail(app);
        assert.equal(stored.get('cli1@example.com')!.city, 'Salzburg');
        assert.equal(stored.get('cli4@example.com')!.city, 'Bregenz');

        const undoUpsert = await runCli(['import:rollback', upsertId!], env);
        assert.equal(undoUpsert.code, 0, undoUpsert.stderr);
        assert.match(undoUpsert.stdout, /1 removed, 1 put back/);
        assert.deepEqual(await contactDigests(app), digests, 'as before the second import, updated_at too');

        // A third file, imported and rolled back: its records are gone; a second rollback is refused.
        const third = path.join(dir, 'more-leads.csv');
        fs.writeFileSync(
          third,
          csvText([
            ['Lead', 'Mail', 'Hometown'],
            ['Cli Fünf', 'cli5@example.com', 'Innsbruck'],
            ['Cli Sechs', 'cli6@example.com', 'Villach'],
          ]),
        );
        const more = await runCli(['import', 'contacts', third, ...maps], env);
        assert.equal(more.code, 0, more.stderr);
        const moreId = /Import (\d+):/.exec(more.stdout)?.[1];
        assert.ok(moreId, more.stdout);
        assert.ok((await contactsByEmail(app)).has('cli5@example.com'));
        const undoMore = await runCli(['import:rollback', moreId], env);
        assert.equal(undoMore.code, 0, undoMore.stderr);
        assert.match(undoMore.stdout, /2 removed, 0 put back/);
        stored = await contactsByEmail(app);
        assert.equal(stored.has('cli5@example.com'), false);
        assert.equal(stored.has('cli6@example.com'), false);
        const twice = await runCli(['import:rollback', moreId], env);
        assert.notEqual(twice.code, 0);
        assert.match(twice.stderr, /rolled back already/);
        assert.deepEqual(await contactDigests(app), digests, 'as before the later imports');

        // Undoing imports newest first: the first import's records are as it left them again, so all three go.
        await t.test('then the rollback of the first import removes all it created', async () => {
          const undo = await runCli(['import:rollback', createdId!], env);
          assert.equal(undo.code, 0, undo.stderr);
          const left = await contactsByEmail(app);
          for (const k of ['cli1', 'cli2', 'cli3', 'cli4']) assert.equal(left.has(`${k}@example.com`), false, k);
          assert.match(undo.stdout, /3 removed, 0 put back/);
        });
      });
    });
  });
}
