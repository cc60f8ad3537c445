// CSV export and import, through the JSON API and the pages, on each
// database: an export is the list as the API answers it, streamed past one
// page; an import keeps the good rows, reports the bad ones by row number,
// and never writes half a row.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { exportFields } from '../src/records/csv.ts';
import { importCsv } from '../src/records/import.ts';
import { contact, inquiry } from '../src/resources/index.ts';
import type { Field } from '../src/schema/resource.ts';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { csrfOf, form } from './reliability/helpers/security.ts';

/** A CSV file as the API and the pages take it: multipart, field `file`. */
function upload(csv: string | Uint8Array<ArrayBuffer>, filename = 'rows.csv', type = 'text/csv'): FormData {
  const form = new FormData();
  form.append('file', new Blob([csv], { type }), filename);
  return form;
}

const rowsOf = (text: string): string[][] => parse(text, { bom: true });

/** A CSV line; cells with a comma, quote or line break are quoted. */
const line = (cells: unknown[]) =>
  cells
    .map((c) => {
      const s = c === null || c === undefined ? '' : String(c);
      return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    })
    .join(',');
const csvOf = (header: string[], rows: unknown[][]) => `${[line(header), ...rows.map(line)].join('\r\n')}\r\n`;

/**
 * What the export writes for a value the API answers; a reference, as the name `names` gives for its id (a source's
 * name, a user's email: what the import takes back), written as text.
 */
function cell(field: Field, value: unknown, names?: ReadonlyMap<string, string>): string {
  if (value === null) return '';
  const name = names?.get(String(value));
  const text = name ?? String(value);
  return (name !== undefined || field.kind.textual) && /^'*[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

function assertProblem(reply: Reply, status: number, code: string) {
  assert.equal(reply.status, status, reply.text);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(reply.body.code, code);
}

/** Every record of a list, walked with the API's own cursor. */
async function everything(app: TestApp, path: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor = '';
  for (;;) {
    const page = await app.get(`${path}${path.includes('?') ? '&' : '?'}per_page=100&cursor=${cursor}`);
    assert.equal(page.status, 200, page.text);
    out.push(...page.body.data);
    if (!page.body.meta.next_cursor) return out;
    cursor = page.body.meta.next_cursor;
  }
}

/** The body's bytes as sent (Response.text() would drop a byte order mark). */
async function rawBody(app: TestApp, path: string, headers: Record<string, string>): Promise<Buffer> {
  const res = await fetch(app.url + path, { headers });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The import form's CSRF token: a field before the file, never in its address (it would stay in the history). */
const csrfOfImportForm = (html: string) => {
  const form =
    /<form method="post" action="\/[a-z]+\/import" enctype="multipart\/form-data"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, 'the import form posts to an address without its token');
  const fields = [...form[1]!.matchAll(/<input[^>]* name="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(fields.slice(0, 2), ['_csrf', 'file'], 'the token comes before the file');
  return /name="_csrf" value="([^"]+)"/.exec(form[1]!)![1]!;
};

/** An upload with the form's token first, as the browser sends it. */
function withToken(token: string, body: FormData): FormData {
  const out = new FormData();
  out.append('_csrf', token);
  for (const [name, value] of body) out.append(name, value);
  return out;
}

// A value a spreadsheet would run, with everything a CSV writer must quote.
const TRICKY = '=HYPERLINK("http://evil.example","a, b")\nsecond line 😀';

for (const dialect of DIALECTS) {
  describe(`CSV import and export (${dialect})`, () => {
    let app: TestApp;
    /** Services and a source for service_id and source_id to name (references name records that exist). */
    const services: unknown[] = [];
    let sourceId: unknown;
    /** The names a CSV writes for the ids of the records referenced (CONTRACT.md: a source's name, a user's email). */
    const names: Record<string, Map<string, string>> = {};
    before(async () => {
      app = await startApp(dialect);
      for (let n = 1; n <= 10; n++) {
        const made = await app.post('/api/v1/services', { name: `Service ${n}` });
        assert.equal(made.status, 201, made.text);
        services.push(made.body.data.id);
      }
      const source = await app.post('/api/v1/sources', { name: 'Trade fair' });
      assert.equal(source.status, 201, source.text);
      sourceId = source.body.data.id;
      names.service_id = new Map(services.map((id, i) => [String(id), `Service ${i + 1}`]));
      names.source_id = new Map([[String(sourceId), 'Trade fair']]);
      names.created_by = new Map([[String(app.admin.id), app.admin.email]]);
    });
    after(async () => {
      await app?.close();
    });

    const total = async (resource = 'contacts') =>
      (await app.get(`/api/v1/${resource}?per_page=1`)).body.meta.total as number;
    const importFile = (resource: string, csv: string | Uint8Array<ArrayBuffer>, token?: string | null) =>
      app.request('POST', `/api/v1/${resource}/import`, { body: upload(csv), token });

    test('an import of 1,200 rows creates them all; the export streams them all, past one page, in list order', async () => {
      const header = ['name', 'email', 'city', 'service_id'];
      const rows = Array.from({ length: 1200 }, (_, i) => [
        `Bulk ${String(i).padStart(4, '0')}`,
        `bulk${i}@example.com`,
        i % 2 ? 'Oslo' : 'Porto',
        services[i % services.length],
      ]);
      const imported = await importFile('contacts', csvOf(header, rows));
      assert.equal(imported.status, 200, imported.text);
      assert.deepEqual([imported.body.created, imported.body.updated, imported.body.failed], [1200, 0, []]);
      assert.equal(await total(), 1200);

      const exported = await app.get('/api/v1/contacts/export?format=csv');
      assert.equal(exported.status, 200, exported.text);
      assert.equal(exported.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.match(
        exported.headers.get('content-disposition') ?? '',
        /^attachment; filename="contacts-\d{4}-\d{2}-\d{2}\.csv"$/,
      );
      const [head, ...body] = rowsOf(exported.text);
      assert.deepEqual(
        head,
        exportFields(contact).map((f) => f.name),
        'the header row is the fields in index',
      );
      assert.ok(!head!.includes('password') && head![0] === 'id', 'the id first, to import back over the records');
      assert.equal(body.length, 1200);
      const listed = await everything(app, '/api/v1/contacts');
      assert.deepEqual(
        body.map((r) => r[head!.indexOf('name')]),
        listed.map((r) => r.name),
        'the same records in the same (default, newest first) order',
      );
      const createdBy = head!.indexOf('created_by');
      assert.ok(
        body.every((r) => r[createdBy] === app.admin.email),
        'created_by is the importer, by email',
      );
      const serviceOf = head!.indexOf('service_id');
      assert.deepEqual(
        body.slice(0, 3).map((r) => r[serviceOf]),
        listed.slice(0, 3).map((r) => names.service_id!.get(String(r.service_id))),
        'a service by its name',
      );
    });

    test('a filtered, sorted export is the API list: same rows, same order, values written exactly and safely', async () => {
      // Ann's service was made after the other one: a larger id.
      const [three, nine] = [services[2], services[8]];
      const made = [
        {
          name: TRICKY,
          city: 'Zürich',
          service_id: three,
          detail: 'has "quotes", commas\r\nand a CRLF',
          budget: '-5 EUR',
        },
        { name: 'Béla', city: 'Zürich', service_id: three, detail: '+41 44 000 00 00', phone: '@home' },
        { name: 'Ann', city: 'Zürich', service_id: nine, source_id: sourceId, email: null },
        { name: 'Not me', city: 'Bern', service_id: three },
      ];
      for (const body of made) assert.equal((await app.post('/api/v1/contacts', body)).status, 201);
      const query = `search=${encodeURIComponent('zür')}&filter[service_id][in]=${three},${nine}&sort=-service_id,name`;
      const listed = (await app.get(`/api/v1/contacts?${query}&per_page=100`)).body.data as Json[];
      assert.deepEqual(
        listed.map((r) => r.name),
        ['Ann', TRICKY, 'Béla'],
        'by service_id descending, then name ("=" sorts before "B")',
      );

      const exported = await app.get(`/api/v1/contacts/export?${query}`);
      assert.equal(exported.status, 200, exported.text);
      assert.ok(
        exported.text.includes('"\'=HYPERLINK(""http://evil.example"",""a, b"")\nsecond line 😀"'),
        'quoted, quotes doubled, formula defused',
      );
      const fields = exportFields(contact);
      const [, ...rows] = rowsOf(exported.text);
      assert.deepEqual(
        rows,
        listed.map((record) => fields.map((f) => cell(f, record[f.name], names[f.name]))),
      );
      const at = (name: string) => rows[listed.findIndex((r) => r.name === name)]!;
      assert.equal(at('Béla')[fields.findIndex((f) => f.name === 'phone')], "'@home");
      assert.equal(at(TRICKY)[fields.findIndex((f) => f.name === 'budget')], "'-5 EUR");
      assert.equal(at('Ann')[fields.findIndex((f) => f.name === 'source_id')], 'Trade fair', 'a source by its name');

      // The export imports again, to the same values (the names read back as the records they name): the quote added
      // against formulas comes off.
      const before = await total();
      const again = await importFile('contacts', exported.text);
      assert.deepEqual([again.body.created, again.body.failed], [3, []]);
      assert.equal(await total(), before + 3);
      const copies = (await app.get(`/api/v1/contacts?${query}&per_page=100`)).body.data as Json[];
      assert.equal(copies.length, 6);
      for (const original of listed) {
        const twins = copies.filter((c) => c.name === original.name);
        assert.equal(twins.length, 2, original.name);
        for (const f of fields.filter((f) => f.name !== 'created_by' && f.name !== 'id'))
          assert.deepEqual(twins[0][f.name], twins[1][f.name], f.name);
      }

      const wrongFormat = await app.get('/api/v1/contacts/export?format=xml');
      assertProblem(wrongFormat, 422, 'validation_failed');
      assert.deepEqual(Object.keys(wrongFormat.body.errors), ['format']);
      assertProblem(await app.get('/api/v1/contacts/export?filter[nope]=1'), 422, 'validation_failed');
      const auth = { authorization: `Bearer ${app.admin.token}` };
      assert.ok(
        !(await rawBody(app, '/api/v1/contacts/export?search=B%C3%A9la', auth)).subarray(0, 3).equals(BOM),
        'no byte order mark unless asked for',
      );
      const withBom = await rawBody(app, '/api/v1/contacts/export?bom=true&search=B%C3%A9la', auth);
      assert.ok(withBom.subarray(0, 6).equals(Buffer.concat([BOM, Buffer.from('id,')])));
    });

    test('inquiries: big integers exact, booleans true/false/empty, dates RFC 3339 — and back', async () => {
      const big = 9007199254740993n;
      const made = await app.post('/api/v1/inquiries', {
        name: 'Big ticket',
        ticket_id: big,
        status: true,
        inquiry_status: false,
        ticket_date: '2026-11-22',
      });
      assert.equal(made.status, 201, made.text);
      const exported = await app.get('/api/v1/inquiries/export?search=Big%20ticket');
      const [head, row] = rowsOf(exported.text);
      const value = (name: string) => row![head!.indexOf(name)];
      assert.equal(value('ticket_id'), '9007199254740993');
      assert.equal(value('status'), 'true');
      assert.equal(value('inquiry_status'), 'false');
      assert.equal(value('inquiry_type'), '');
      assert.equal(value('ticket_date'), '2026-11-22T00:00:00.000Z');
      assert.equal(value('stage_id'), 'New', 'the stage by its name');
      assert.equal(value('contact_id'), String(made.body.data.contact_id), 'the contact by its id');
      assert.deepEqual(
        head,
        exportFields(inquiry).map((f) => f.name),
      );

      const again = await importFile('inquiries', exported.text);
      assert.deepEqual([again.body.created, again.body.failed], [1, []]);
      const both = (await app.get('/api/v1/inquiries?search=Big%20ticket')).body.data as Json[];
      assert.equal(both.length, 2);
      for (const copy of both) {
        assert.equal(copy.ticket_id, big, 'exact after the round trip');
        assert.equal(copy.status, true);
        assert.equal(copy.inquiry_status, false);
        assert.equal(copy.inquiry_type, null);
        assert.equal(copy.ticket_date, '2026-11-22T00:00:00.000Z');
        assert.equal(String(copy.contact_id), String(made.body.data.contact_id), 'the same contact');
        assert.equal(String(copy.stage_id), String(made.body.data.stage_id), 'the same stage');
      }

      const refund = await app.post('/api/v1/inquiries', { name: 'Refund ticket', ticket_id: -7 });
      assert.equal(refund.status, 201, refund.text);
      const [refundHead, refundRow] = rowsOf((await app.get('/api/v1/inquiries/export?search=Refund%20ticket')).text);
      assert.equal(refundRow![refundHead!.indexOf('ticket_id')], '-7', 'a negative number stays a number');
    });

    test('3 good rows and 1 bad: 3 created, the bad one reported by row number with its field errors', async () => {
      const before = await total();
      const csv = csvOf(
        ['id', 'name', 'service_id', 'created_at', 'email'],
        [
          [999999, 'Good one', services[0], '2001-01-01T00:00:00Z', 'one@example.com'],
          ['', 'Good two', '', '', ''],
          ['', 'Good, "three"', 'service 5', '', 'three@example.com'],
          ['', 'x'.repeat(256), 'abc', '', 'four@example.com'],
        ],
      );
      const reply = await importFile('contacts', `\uFEFF${csv}`);
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.created, 3);
      assert.equal(reply.body.failed.length, 1);
      const [failure] = reply.body.failed;
      assert.equal(failure.row, 4, 'the header is row 0; the bad row is the fourth under it');
      assert.equal(failure.line, 5);
      assert.deepEqual(Object.keys(failure.errors).sort(), ['name', 'service_id']);
      assert.match(failure.errors.service_id[0], /names no service/);
      assert.match(failure.errors.name[0], /at most 255/);
      assert.equal(await total(), before + 3, 'exactly the 3 good rows were written');
      const one = (await app.get('/api/v1/contacts?search=Good%20one')).body.data[0];
      assert.notEqual(String(one.id), '999999', 'id is read-only: ignored');
      assert.notEqual(one.created_at, '2001-01-01T00:00:00.000Z', 'created_at is read-only: ignored');
      const two = (await app.get('/api/v1/contacts?search=Good%20two')).body.data[0];
      assert.equal(two.service_id, null, 'an empty cell is null');
      assert.equal(two.email, null);
      const three = (await app.get('/api/v1/contacts?search=three')).body.data[0];
      assert.equal(three.name, 'Good, "three"');
      assert.equal(String(three.service_id), String(services[4]), 'a service named by its name, in any case');
    });

    test('a column that fills no field is left out and listed; a file that fills none, or one field twice, is a 422', async () => {
      const before = await total();
      const reply = await importFile(
        'contacts',
        csvOf(['name', 'emial', 'password'], [['Nobody', 'x@example.com', 'secret123']]),
      );
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(reply.body.columns, [
        { header: 'name', field: 'name' },
        { header: 'emial', field: null },
        { header: 'password', field: null },
      ]);
      assert.equal(reply.body.created, 1);
      const nobody = (await app.get('/api/v1/contacts?search=Nobody')).body.data[0];
      assert.equal(nobody.email, null, 'the misspelt column was left out, not guessed');

      const none = await importFile('contacts', csvOf(['colour', 'mood'], [['red', 'fine']]));
      assertProblem(none, 422, 'validation_failed');
      assert.deepEqual(Object.keys(none.body.errors), ['file']);
      const twice = await importFile('contacts', csvOf(['email', 'E-mail'], [['a@example.com', 'b@example.com']]));
      assertProblem(twice, 422, 'validation_failed');
      assert.deepEqual(Object.keys(twice.body.errors), ['E-mail']);
      assert.equal(await total(), before + 1);
      assertProblem(await importFile('contacts', ''), 422, 'validation_failed');
    });

    test('a mapping sent with a file overrides the headers and is remembered for the next file of the resource', async () => {
      const mapping = JSON.stringify({ Firma: 'occupation', 'E-mail': null });
      const form = new FormData();
      form.append('mapping', mapping);
      form.append(
        'file',
        new Blob([csvOf(['Name', 'E-mail', 'Firma'], [['Mapped', 'm@example.com', 'Acme']])]),
        'a.csv',
      );
      const first = await app.request('POST', '/api/v1/contacts/import', { body: form });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.body.columns, [
        { header: 'Name', field: 'name' },
        { header: 'E-mail', field: null },
        { header: 'Firma', field: 'occupation' },
      ]);
      const second = await importFile('contacts', csvOf(['name', ' firma '], [['Remembered', 'Globex']]));
      assert.deepEqual(second.body.columns[1], { header: 'firma', field: 'occupation' });
      const remembered = (await app.get('/api/v1/contacts?search=Remembered')).body.data[0];
      assert.equal(remembered.occupation, 'Globex');
      const bad = await app.request('POST', '/api/v1/contacts/import?mapping=%7B%22Firma%22%3A%22colour%22%7D', {
        body: upload(csvOf(['Firma'], [['x']])),
      });
      assertProblem(bad, 422, 'validation_failed');
      assert.deepEqual(Object.keys(bad.body.errors), ['mapping']);
    });

    test('a row with the wrong number of values fails alone; malformed CSV stops at its line, keeping the rows before', async () => {
      const before = await total();
      const ragged = await importFile('contacts', 'name,city\r\nRagged,Oslo,extra\r\nFine,Oslo\r\n');
      assert.equal(ragged.body.created, 1);
      assert.deepEqual(ragged.body.failed, [
        {
          row: 1,
          line: 2,
          errors: { _row: ['has 3 values; the header row has 2 columns'] },
          cells: ['Ragged', 'Oslo', 'extra'],
        },
      ]);

      const broken = await importFile(
        'contacts',
        'name,city\nKept one,Oslo\nKept two,Oslo\n"Broken"x,Oslo\nNever,Oslo\n',
      );
      assertProblem(broken, 400, 'malformed_csv');
      assert.match(broken.body.detail, /at line 4/);
      assert.match(broken.body.detail, /2 created/);
      assert.equal(await total(), before + 3);
      assert.equal((await app.get('/api/v1/contacts?search=Never')).body.data.length, 0);
      const stopped = (await app.get('/api/v1/imports')).body.data[0];
      assert.deepEqual([stopped.status, stopped.created], ['failed', 2], 'the import that stopped part-way says so');
    });

    test('the upload: non-multipart 415, no file 422, not CSV 415, too large 413', async () => {
      const json = await app.request('POST', '/api/v1/contacts/import', { json: { name: 'x' } });
      assertProblem(json, 415, 'unsupported_media_type');
      const text = await app.request('POST', '/api/v1/contacts/import', {
        body: 'name\nx\n',
        headers: { 'content-type': 'text/csv' },
      });
      assertProblem(text, 415, 'unsupported_media_type');
      assert.match(text.body.detail, /multipart\/form-data/);
      const other = new FormData();
      other.append('upload', new Blob(['name\nx\n'], { type: 'text/csv' }), 'a.csv');
      assertProblem(await app.request('POST', '/api/v1/contacts/import', { body: other }), 422, 'validation_failed');
      const image = await app.request('POST', '/api/v1/contacts/import', {
        body: upload(Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'photo.png', 'image/png'),
      });
      assertProblem(image, 415, 'unsupported_media_type');
      const workbook = await importFile(
        'contacts',
        Buffer.from('PK\u0003\u0004\u0014\u0000\u0006\u0000name', 'latin1'),
      );
      assertProblem(workbook, 415, 'unsupported_media_type');
      assert.match(workbook.body.detail, /not CSV text/);

      const before = await total();
      const tooBig = await importCsv(
        { database: app.database, actor: { id: BigInt(app.admin.id), role: 'admin' } },
        contact,
        Readable.from([Buffer.from('name\n'), Buffer.from('a\n'.repeat(100))]),
        { maxBytes: 64 },
      ).catch((e: unknown) => e);
      assert.equal((tooBig as { status?: number }).status, 413);
      assert.equal(await total(), before, 'rows of the batch in progress are not written past the limit');
    });

    test('users: the hashed password works, a taken email fails that row only; agents may neither export nor import users', async () => {
      const csv = csvOf(
        ['name', 'email', 'password', 'role'],
        [
          ['Agent One', 'agent.one@example.com', 'correct horse 1', 'agent'],
          ['Copycat', app.admin.email.toUpperCase(), 'correct horse 2', ''],
          ['Agent Two', 'agent.two@example.com', 'short', 'agent'],
          ['Agent Three', 'agent.three@example.com', 'correct horse 3', ''],
        ],
      );
      const reply = await importFile('users', csv);
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.created, 2);
      assert.deepEqual(
        reply.body.failed.map((f: Json) => [f.row, Object.keys(f.errors)]),
        [
          [2, ['email']],
          [3, ['password']],
        ],
      );
      assert.deepEqual(reply.body.failed[0].errors.email, ['is already taken']);

      const token = await app.request('POST', '/api/v1/auth/token', {
        json: { email: 'agent.one@example.com', password: 'correct horse 1', device_name: 'csv test' },
        token: null,
      });
      assert.equal(token.status, 201, 'the imported password was hashed and works');
      const agent = token.body.token as string;
      const exported = await app.get('/api/v1/users/export');
      assert.equal(exported.status, 200);
      assert.ok(!/password|two_factor_secret|remember_token|\$argon2/.test(exported.text), 'no hidden field or hash');
      const three = rowsOf(exported.text).find((r) => r[1] === 'Agent Three')!;
      assert.ok(three.includes('agent'), 'role defaults to agent');

      assertProblem(await app.request('GET', '/api/v1/users/export', { token: agent }), 403, 'forbidden');
      assertProblem(
        await app.request('POST', '/api/v1/users/import', { body: upload(csv), token: agent }),
        403,
        'forbidden',
      );
      // Export and import are a manager's (CONTRACT.md, "Roles"): an agent reads contacts one page at a time.
      assertProblem(await app.request('GET', '/api/v1/contacts/export?search=Ann', { token: agent }), 403, 'forbidden');
      assertProblem(await app.request('GET', '/api/v1/contacts/export', { token: null }), 401, 'unauthenticated');
    });

    test('the routes are documented in the OpenAPI document', async () => {
      const doc = JSON.parse((await app.get('/api/v1/openapi.json')).text);
      for (const resource of ['contacts', 'inquiries', 'users']) {
        assert.ok(doc.paths[`/api/v1/${resource}/export`]?.get?.responses['200'].content['text/csv'], resource);
        const post = doc.paths[`/api/v1/${resource}/import`]?.post;
        assert.ok(post?.requestBody.content['multipart/form-data'], resource);
        assert.deepEqual(Object.keys(post.responses['200'].content['application/json'].schema.properties), [
          'import_id',
          'created',
          'updated',
          'would_create',
          'would_update',
          'unchanged',
          'failed',
          'failed_truncated',
          'columns',
          'encoding',
          'delimiter',
        ]);
      }
    });

    describe('pages', () => {
      let browser: Client;
      before(async () => {
        browser = app.client();
        const login = await browser.request('POST', '/api/v1/auth/login', {
          json: { email: app.admin.email, password: app.admin.password },
        });
        assert.equal(login.status, 200, login.text);
      });

      /** The wizard's form fields: each column's field by position ("" leaves it out), and the field to match by. */
      const choices = (token: string, fields: string[], upsertBy = '') =>
        form({ _csrf: token, ...Object.fromEntries(fields.map((f, i) => [`column_${i}`, f])), upsert_by: upsertBy });

      /** Uploads a file through step 1 (with the form's token): the address of its matching step. */
      async function uploadThroughPage(csv: string | Uint8Array<ArrayBuffer>, resource = 'contacts') {
        const token = csrfOfImportForm((await browser.get(`/${resource}/import`)).text);
        const staged = await browser.request('POST', `/${resource}/import`, { body: withToken(token, upload(csv)) });
        assert.equal(staged.status, 303, staged.text);
        const next = staged.headers.get('location') ?? '';
        assert.match(next, new RegExp(`^/${resource}/import/\\d+$`));
        return next;
      }

      /** An import's page once it is no longer running (it runs in the background, the page polls while it does). */
      async function finished(path: string): Promise<Reply> {
        for (let i = 0; i < 200; i++) {
          const page = await browser.get(path);
          assert.equal(page.status, 200, page.text);
          if (!page.text.includes('hx-trigger="every 1s"')) return page;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`${path} still running`);
      }

      test('the wizard: upload, match the columns, preview (nothing written), import in the background, report, roll back', async () => {
        const page = await browser.get('/contacts/import');
        assert.equal(page.status, 200, page.text);
        assert.equal(page.text.match(/<h1[ >]/g)?.length, 1);
        assert.ok(
          page.text.includes(
            `<pre class="csv-header"><code>${contact.writable.map((f) => f.name).join(',')}</code></pre>`,
          ),
          'the writable fields, in order',
        );
        assert.match(page.text, /semicolons or tabs, in UTF-8, UTF-16 or Windows-1252/);
        assert.match(page.text, /enctype="multipart\/form-data"/);
        assert.match(page.text, /hx-encoding="multipart\/form-data"/);
        assert.match(page.text, /<progress id="import-progress" hidden/);
        assert.doesNotMatch(page.text, /style=|<script>/);

        const before = await total();
        const csv = csvOf(
          ['Name', 'E-mail', 'service_id', 'Betrieb', 'Colour'],
          [
            ['Page one', 'page.one@example.org', services[0], 'Acme', 'red'],
            ['Page two', 'page.two@example.org', 'abc', 'Globex', 'blue'],
            ['Page three', '', '', 'Initech', 'green'],
          ],
        );
        const matching = await uploadThroughPage(csv);
        const id = matching.split('/').at(-1)!;
        assert.equal(await total(), before, 'an upload writes no record');

        // Step 2: how the file was read, a select per column preselected by the headers, the first values.
        const match = await browser.get(matching);
        assert.equal(match.status, 200, match.text);
        assert.match(match.text, /Read as <strong>UTF-8<\/strong>, separated by <strong>comma \(,\)<\/strong>/);
        /** The value of the option a column's select has selected. */
        const selected = (i: number) => {
          const select = new RegExp(`<select id="column-${i}" name="column_${i}">([\\s\\S]*?)</select>`).exec(
            match.text,
          )!;
          const option = [...select[1]!.matchAll(/<option([^>]*)>/g)].find((o) => / selected/.test(o[1]!));
          // An empty value is written as a bare attribute.
          return option ? (/value="([^"]*)"/.exec(option[1]!)?.[1] ?? '') : undefined;
        };
        assert.deepEqual([0, 1, 2, 3, 4].map(selected), ['name', 'email', 'service_id', '', '']);
        assert.match(match.text, /<label for="column-1">E-mail<\/label>/);
        assert.match(match.text, /<li>page\.two@example\.org<\/li>/);
        assert.match(match.text, /<option value="occupation">Occupation \(occupation\)<\/option>/);
        assert.match(match.text, /name="upsert_by" value="email"/);
        const token = csrfOf(match.text);
        const chosen = ['name', 'email', 'service_id', 'occupation', ''];

        // Step 3: a dry run with the mapping chosen; the failed row with its cells and reason; nothing written.
        const preview = await browser.request('POST', `${matching}/preview`, choices(token, chosen));
        assert.equal(preview.status, 200, preview.text);
        assert.match(preview.text, /Nothing is written yet\. The import would create 2 contacts/);
        assert.match(
          preview.text,
          /<td>2<\/td><td class="cell-text"><ul class="import-errors"><li>service_id names no service: there is no service &quot;abc&quot;<\/li><\/ul><\/td><td>Page two<\/td>/,
        );
        assert.match(preview.text, /<input type="hidden" name="column_3" value="occupation"\/>/);
        assert.match(preview.text, /<button type="submit">Import 2 rows<\/button>/);
        assert.match(preview.text, new RegExp(`<form method="get" action="${matching}"`));
        assert.equal(await total(), before, 'a preview writes nothing');
        // Back to matching keeps the choices (the address carries them).
        const back = await browser.get(
          `${matching}?${new URLSearchParams({ column_3: 'occupation', column_0: 'name' })}`,
        );
        assert.match(back.text, /<option value="occupation" selected/);

        // Step 4: the run answers at once with the import's page, which follows it until it is done.
        const run = await browser.request('POST', `${matching}/run`, choices(token, chosen));
        assert.equal(run.status, 303, run.text);
        assert.equal(run.headers.get('location'), `/imports/${id}`);
        const report = await finished(`/imports/${id}`);
        assert.match(report.text, /<dd>Done<\/dd>/);
        assert.match(report.text, /<p class="stat">2<\/p><p class="stat-label">Created<\/p>/);
        assert.match(report.text, /service_id names no service: there is no service &quot;abc&quot;/);
        assert.match(report.text, new RegExp(`href="/imports/${id}/failed.csv"`));
        assert.match(report.text, new RegExp(`<form method="post" action="/imports/${id}/rollback">`));
        assert.equal(await total(), before + 2);
        const one = (await app.get('/api/v1/contacts?search=page.one@example.org')).body.data;
        assert.equal(one[0].occupation, 'Acme', 'the column mapped by hand');
        assert.equal(one[0].email, 'page.one@example.org');

        const list = await browser.get('/imports');
        assert.equal(list.status, 200, list.text);
        assert.match(list.text, new RegExp(`<a href="/imports/${id}">rows.csv</a>`));
        assert.match(list.text, /<a href="\/imports" aria-current="page">Imports<\/a>/);

        const failedCsv = await browser.get(`/imports/${id}/failed.csv`);
        assert.equal(failedCsv.status, 200, failedCsv.text);
        assert.deepEqual(rowsOf(failedCsv.text), [
          ['Name', 'E-mail', 'service_id', 'Betrieb', 'Colour', 'Import problems'],
          [
            'Page two',
            'page.two@example.org',
            'abc',
            'Globex',
            'blue',
            'service_id names no service: there is no service "abc"',
          ],
        ]);

        // Run twice: the staged file is gone.
        const again = await browser.request('POST', `${matching}/run`, choices(token, chosen));
        assert.equal(again.status, 409, again.text);
        assert.match(again.text, /imported already/);

        const rollback = await browser.request('POST', `/imports/${id}/rollback`, form({ _csrf: token }));
        assert.equal(rollback.status, 303, rollback.text);
        const rolled = await browser.get(`/imports/${id}`);
        assert.match(rolled.text, /The import was rolled back: 2 removed, 0 put back\./);
        assert.match(rolled.text, /<dd>Rolled back<\/dd>/);
        assert.doesNotMatch(rolled.text, /action="\/imports\/\d+\/rollback"/);
        assert.equal(await total(), before);
        const twice = await browser.request('POST', `/imports/${id}/rollback`, form({ _csrf: token }));
        assert.equal(twice.status, 409);
        assert.match(twice.text, /rolled back already/);
      });

      test('a problem shows the step again with a message and a 4xx', async () => {
        const token = csrfOfImportForm((await browser.get('/contacts/import')).text);
        const action = '/contacts/import';
        // A browser sends a file input left empty as a file part with an empty name (FormData cannot say that).
        const boundary = 'leadbook-no-file';
        const noFile =
          `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${token}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--${boundary}--\r\n`;
        const none = await browser.request('POST', action, {
          body: noFile,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        });
        assert.equal(none.status, 422);
        assert.match(none.text, /choose a CSV file/);
        assert.match(none.text, /<h1>Import contacts<\/h1>/);
        const notCsv = await browser.request('POST', action, {
          body: withToken(token, upload('GIF89a', 'cat.gif', 'image/gif')),
        });
        assert.equal(notCsv.status, 415);
        assert.match(notCsv.text, /cat\.gif is not a CSV file/);
        // htmx sends the token in its header too (hx-headers on <body>), and follows HX-Redirect to the next step.
        const viaHtmx = await browser.request('POST', action, {
          body: upload('name,colour\nx,red\n'),
          headers: { 'hx-request': 'true', 'x-csrf-token': token },
        });
        assert.equal(viaHtmx.status, 200, 'htmx swaps only 2xx answers in');
        assert.match(viaHtmx.headers.get('hx-redirect') ?? '', /^\/contacts\/import\/\d+$/);
        const noToken = await browser.request('POST', '/contacts/import', { body: upload('name\nMallory\n') });
        assert.equal(noToken.status, 403);

        // A file the matching step cannot read goes back to step 1, saying why.
        const empty = await browser.get(await uploadThroughPage('\n'));
        assert.equal(empty.status, 422, empty.text);
        assert.match(empty.text, /The file is empty/);
        assert.match(empty.text, /aria-current="step">Upload the file</);

        // A mapping that cannot stand goes back to the matching, with the choices made.
        const matching = await uploadThroughPage('name,email,colour\nx,x@example.org,red\n');
        const csrf = csrfOf((await browser.get(matching)).text);
        const twice = await browser.request('POST', `${matching}/preview`, choices(csrf, ['name', 'name', '']));
        assert.equal(twice.status, 422, twice.text);
        assert.match(twice.text, /Two columns fill the same field/);
        assert.match(twice.text, /aria-current="step">Match the columns</);
        const noKey = await browser.request('POST', `${matching}/preview`, choices(csrf, ['name', '', ''], 'email'));
        assert.equal(noKey.status, 422, noKey.text);
        assert.match(noKey.text, /needs a column for email/);
        const run = await browser.request('POST', `${matching}/run`, choices(csrf, ['name', 'colour', '']));
        assert.equal(run.status, 422, run.text);
        assert.match(run.text, /colour is not a field you can import/);
        const noPost = await browser.request('POST', `${matching}/run`, form({ name: 'x' }));
        assert.equal(noPost.status, 403, 'the token is checked');
        assert.equal((await app.get('/api/v1/contacts?search=x@example.org')).body.data.length, 0);

        // Nobody else's upload, and no import that is not there.
        assert.equal((await browser.get('/contacts/import/999999')).status, 404);
        assert.equal((await browser.get('/imports/999999')).status, 404);
        assert.equal((await browser.get('/imports/abc')).status, 404);
        const other = app.client();
        assert.equal((await other.get(matching)).status, 303, 'a stranger is sent to sign in');
      });

      test('export.csv is the current view of the index (its filters and sort), with a byte order mark', async () => {
        const path = `search=${encodeURIComponent('zür')}&filter[service_id]=${services[2]}&sort=name&page=2&per_page=10`;
        const page = await browser.get(`/contacts/export.csv?${path}`);
        assert.equal(page.status, 200, page.text.slice(0, 3000));
        assert.equal(page.headers.get('content-type'), 'text/csv; charset=utf-8');
        const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        assert.ok(
          (await rawBody(app, `/contacts/export.csv?${path}`, { cookie })).subarray(0, 3).equals(BOM),
          'a byte order mark, for spreadsheets',
        );
        const api = await app.get(
          `/api/v1/contacts/export?search=${encodeURIComponent('zür')}&filter[service_id]=${services[2]}&sort=name`,
        );
        assert.equal(page.text, api.text, 'the same rows as the API, all of them (paging ignored)');
        assert.ok(rowsOf(api.text).length > 2);
        const index = await browser.get(`/contacts?${path}`);
        assert.match(index.text, /href="\/contacts\/export\.csv\?[^"]*search=/);

        const agent = app.client();
        await agent.request('POST', '/api/v1/auth/login', {
          json: { email: 'agent.one@example.com', password: 'correct horse 1' },
        });
        assert.equal((await agent.get('/users/export.csv')).status, 403);
        assert.equal((await agent.get('/users/import')).status, 403);
        assert.equal((await agent.get('/contacts/import')).status, 403, 'importing is a manager’s');
        assert.doesNotMatch((await agent.get('/contacts')).text, /Import CSV|Export CSV/, 'nor offered to an agent');
      });
    });
  });
}
