// A large file is read and checked in a worker thread while the main thread
// writes (src/records/import-rows.ts); a small one on the main thread. The
// outcome must not depend on which: on each database, one app imports a file
// larger than READ_IN_WORKER_BYTES whole, another imports the same rows as
// files under it, over HTTP, and the two must store the same contacts and
// refuse the same rows for the same reasons: references named by name (looked
// up by the main thread for the worker, one of them naming nothing), rows with
// an invalid email, with no name, email or phone, with a wrong number of
// values, blank lines; then the same again with upsert_by=email, which updates
// what the first files created.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { stringify } from 'csv-stringify/sync';
import { READ_IN_WORKER_BYTES } from '../src/records/import.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';

const ROWS = 11_000;
const SERVICES = ['Roofing', 'Solar panels', 'Heat pumps'];
const SOURCES = ['Website', 'Referral'];
const HEADER = ['name', 'email', 'phone', 'city', 'service_id', 'source_id', 'detail', 'created_by'];

/** Row i of the file; `round` 1 changes the city and the detail, as a second file would. */
function row(i: number, round: number, admin: string): string[] {
  const email = `lead${i}@example.com`;
  const detail = `${round ? 'Called back about' : 'Asked for'} a quote, visit ${i % 7} in the morning. `.repeat(3);
  const cells = [
    `Lead ${i}`,
    email,
    i % 5 === 0 ? '' : `+49 30 ${String(1000000 + i)}`,
    `${round ? 'New' : 'Old'} Town ${i % 40}`,
    // By name (any case), by id, or empty.
    i % 3 === 0 ? SERVICES[i % SERVICES.length]!.toUpperCase() : i % 3 === 1 ? '1' : '',
    i % 4 === 0 ? SOURCES[i % SOURCES.length]! : '',
    detail,
    i % 2 ? admin : '',
  ];
  // Rows the import must refuse, each for its own reason.
  if (i % 997 === 5) cells[1] = `not an email ${i}`;
  if (i % 1009 === 7) cells[5] = 'Radio';
  if (i % 1013 === 11) return [`Lead ${i}`, email];
  if (i % 1019 === 13) return ['', '', '', '', '', '', '', ''];
  if (i % 1021 === 17) return ['', '', '', `Town ${i}`, '', '', '', ''];
  return cells;
}

const csv = (rows: string[][]) => Buffer.from(stringify([HEADER, ...rows], { record_delimiter: 'windows' }), 'utf8');

function importFile(app: TestApp, file: Buffer, upsertBy?: string) {
  const form = new FormData();
  if (upsertBy) form.append('upsert_by', upsertBy);
  form.append('file', new Blob([new Uint8Array(file)], { type: 'text/csv' }), 'leads.csv');
  return app.request('POST', '/api/v1/contacts/import', { body: form });
}

interface Outcome {
  created: number;
  updated: number;
  unchanged: number;
  /** Each refused row's cells and reasons, sorted (row numbers differ between one file and several). */
  failed: string[];
}

/** Imports the rows as one file, or as files of `per` rows each; answers the counts and refusals summed. */
async function importRows(app: TestApp, rows: string[][], per: number, upsertBy?: string): Promise<Outcome> {
  const out: Outcome = { created: 0, updated: 0, unchanged: 0, failed: [] };
  for (let start = 0; start < rows.length; start += per) {
    const reply = await importFile(app, csv(rows.slice(start, start + per)), upsertBy);
    assert.equal(reply.status, 200, reply.text);
    const body = reply.body as Json;
    out.created += body.created;
    out.updated += body.updated;
    out.unchanged += body.unchanged;
    for (const f of body.failed as Json[]) out.failed.push(JSON.stringify([f.cells, f.errors]));
  }
  out.failed.sort();
  return out;
}

/** The stored contacts, each as its columns but the id and the clock's, sorted. */
async function stored(app: TestApp): Promise<string[]> {
  const { rows } = await sql<Record<string, unknown>>`select * from contacts`.execute(app.database.db);
  return rows
    .map((r) =>
      JSON.stringify(
        Object.keys(r)
          .filter((k) => !['id', 'created_at', 'updated_at'].includes(k))
          .sort()
          .map((k) => [k, r[k] === null || r[k] === undefined ? null : String(r[k])]),
      ),
    )
    .sort();
}

for (const dialect of DIALECTS) {
  describe(`import in a worker thread (${dialect})`, () => {
    let whole: TestApp;
    let pieces: TestApp;
    before(async () => {
      [whole, pieces] = await Promise.all([startApp(dialect), startApp(dialect)]);
      for (const app of [whole, pieces]) {
        for (const name of SERVICES) assert.equal((await app.post('/api/v1/services', { name })).status, 201);
        for (const name of SOURCES) assert.equal((await app.post('/api/v1/sources', { name })).status, 201);
      }
    });
    after(async () => {
      await Promise.all([whole?.close(), pieces?.close()]);
    });

    test('a file too large for the main thread imports as the same rows in small files do', async () => {
      for (const [round, upsertBy] of [
        [0, undefined],
        [1, 'email'],
      ] as const) {
        const rows = Array.from({ length: ROWS }, (_, i) => row(i, round, whole.admin.email));
        const size = csv(rows).length;
        const per = Math.ceil(ROWS / Math.ceil((size * 2) / READ_IN_WORKER_BYTES));
        assert.ok(size > READ_IN_WORKER_BYTES, `the file (${size} bytes) is read in a worker`);
        assert.ok(csv(rows.slice(0, per)).length < READ_IN_WORKER_BYTES, 'each piece is read on the main thread');
        const [inWorker, onMain] = await Promise.all([
          importRows(whole, rows, ROWS, upsertBy),
          importRows(pieces, rows, per, upsertBy),
        ]);
        assert.deepEqual(inWorker, onMain, `round ${round}: the same counts and refusals`);
        if (round === 0) assert.ok(inWorker.created > ROWS * 0.95, `created ${inWorker.created}`);
        else assert.ok(inWorker.updated > ROWS * 0.95, `updated ${inWorker.updated}`);
        // Each way of failing is there: an invalid email, a source named by a name nobody has, too few values, no
        // name, email or phone.
        const reasons = inWorker.failed.join('\n');
        for (const reason of [/"email":\["/, /there is no source \\"Radio\\"/, /has 2 values/, /is needed/])
          assert.match(reasons, reason);
        assert.deepEqual(await stored(whole), await stored(pieces), `round ${round}: the same contacts`);
      }
      // Names became ids: the services and sources named by name are stored by id.
      const { rows } = await sql<{ n: unknown }>`select count(*) as n from contacts
        where service_id is not null and source_id is not null`.execute(whole.database.db);
      assert.ok(Number(rows[0]!.n) > 100);
    });
  });
}
