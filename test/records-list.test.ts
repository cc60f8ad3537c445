// List parameters of the records API (CONTRACT.md, "List parameters"): search,
// filter, sort, page paging and keyset (cursor) paging, on every dialect.
//
// Rows are seeded through the API; every expectation is computed in this file
// from the seeded rows by a small independent model of the contract's
// semantics (search words, filter operators per kind, NULL as the smallest
// value, id tie-break in the direction of the last key), then compared with
// what the API answers: the same ids, in the same order. Requests go through
// the harness, which signs in as the first admin.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asRecordTables } from '../src/db/tables.ts';
import { sortKey } from '../src/schema/keys.ts';
import { startApp, type Reply, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

type Rec = Record<string, unknown>;
type Kind = 'text' | 'integer' | 'bigInteger' | 'boolean' | 'dateTime';
type ResourceName = 'contacts' | 'inquiries';
type Params = Record<string, string>;

// ---------------------------------------------------------------- the seed's fields

const CONTACT_KINDS: Record<string, Kind> = {
  id: 'bigInteger',
  name: 'text',
  email: 'text',
  phone: 'text',
  occupation: 'text',
  address: 'text',
  country: 'text',
  city: 'text',
  service_id: 'integer',
  source_id: 'integer',
  detail: 'text',
  budget: 'text',
  created_by: 'integer',
  created_at: 'dateTime',
  updated_at: 'dateTime',
};

const INQUIRY_KINDS: Record<string, Kind> = {
  ...CONTACT_KINDS,
  contact_id: 'integer',
  stage_id: 'integer',
  inquiry_country: 'text',
  inquiry_status: 'boolean',
  status: 'boolean',
  inquiry_type: 'boolean',
  assigned_to: 'integer',
  assigned_date: 'dateTime',
  ticket_id: 'bigInteger',
  ticket_date: 'dateTime',
};

const KINDS: Record<ResourceName, Record<string, Kind>> = { contacts: CONTACT_KINDS, inquiries: INQUIRY_KINDS };

/** Not searchable: the primary key and the timestamps (seed, attribute flags). */
const NOT_SEARCHABLE = new Set(['id', 'created_at', 'updated_at']);

const searchTextFields = (r: ResourceName) =>
  Object.entries(KINDS[r])
    .filter(([f, k]) => k === 'text' && !NOT_SEARCHABLE.has(f))
    .map(([f]) => f);
const searchIntegerFields = (r: ResourceName) =>
  Object.entries(KINDS[r])
    .filter(([f, k]) => (k === 'integer' || k === 'bigInteger') && !NOT_SEARCHABLE.has(f))
    .map(([f]) => f);

// ---------------------------------------------------------------- the model

const lower = (s: string) => s.toLowerCase();
const idOf = (row: Rec) => String(row.id);
const ids = (rows: Rec[]) => rows.map(idOf);
const sortedIds = (list: string[]) => [...list].sort((a, b) => Number(a) - Number(b));

/** A field value in a comparable form: BigInt for integers, milliseconds for date-times. */
function norm(kind: Kind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'integer':
    case 'bigInteger':
      return BigInt(v as number | bigint | string);
    case 'dateTime':
      return Date.parse(v as string);
    default:
      return v;
  }
}

/** Non-null values of one kind. Text compares by code point (UTF-8 byte order). */
function compare(kind: Kind, a: unknown, b: unknown): number {
  switch (kind) {
    case 'text':
      return Buffer.compare(Buffer.from(a as string, 'utf8'), Buffer.from(b as string, 'utf8'));
    case 'integer':
    case 'bigInteger':
      return (a as bigint) < (b as bigint) ? -1 : (a as bigint) > (b as bigint) ? 1 : 0;
    case 'boolean':
      return Number(a) - Number(b);
    case 'dateTime':
      return Math.sign((a as number) - (b as number));
  }
}

/** NULL is the smallest value. */
function compareNullable(kind: Kind, a: unknown, b: unknown): number {
  if (a === null && b === null) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compare(kind, a, b);
}

/** A filter value written in a query, for the model. */
function parseFilterValue(kind: Kind, op: string, raw: string): unknown {
  if (raw === 'null' && kind !== 'text' && (op === 'eq' || op === 'ne')) return null;
  switch (kind) {
    case 'text':
      return raw;
    case 'integer':
    case 'bigInteger':
      return BigInt(raw);
    case 'boolean':
      return raw === 'true';
    case 'dateTime': {
      const ms = Date.parse(raw);
      assert.ok(Number.isFinite(ms), `test bug: unparsable date ${raw}`);
      return ms;
    }
  }
}

function filterHolds(kind: Kind, value: unknown, op: string, raw: string): boolean {
  const v = norm(kind, value);
  if (op === 'null') return raw === 'true' ? v === null : v !== null;
  if (op === 'contains') return typeof v === 'string' && lower(v).includes(lower(raw));
  if (op === 'in') return raw.split(',').some((item) => filterHolds(kind, value, 'eq', item));
  const w = parseFilterValue(kind, op, raw);
  if (op === 'eq') return w === null ? v === null : v !== null && compare(kind, v, w) === 0;
  if (op === 'ne') return w === null ? v !== null : v === null || compare(kind, v, w) !== 0;
  if (v === null) return false;
  const c = compare(kind, v, w);
  switch (op) {
    case 'gt':
      return c > 0;
    case 'gte':
      return c >= 0;
    case 'lt':
      return c < 0;
    case 'lte':
      return c <= 0;
  }
  throw new Error(`test bug: operator ${op}`);
}

function searchHolds(resource: ResourceName, row: Rec, search: string): boolean {
  const words = search.split(/\s+/u).filter(Boolean);
  const texts = searchTextFields(resource);
  const integers = searchIntegerFields(resource);
  return words.every(
    (word) =>
      texts.some((f) => typeof row[f] === 'string' && lower(row[f] as string).includes(lower(word))) ||
      (/^-?\d+$/.test(word) &&
        integers.some((f) => row[f] !== null && BigInt(row[f] as number | bigint) === BigInt(word))),
  );
}

interface SortKey {
  field: string;
  desc: boolean;
}

function sortKeys(sort: string | undefined): SortKey[] {
  const keys = (sort ? sort.split(',') : ['-id']).map((part) => ({
    field: part.replace(/^-/, ''),
    desc: part.startsWith('-'),
  }));
  const at = keys.findIndex((k) => k.field === 'id');
  if (at >= 0) return keys.slice(0, at + 1);
  return [...keys, { field: 'id', desc: keys.at(-1)!.desc }];
}

const FILTER_KEY = /^filter\[(\w+)\](?:\[(\w+)\])?$/;

/** The rows the list should answer for these parameters, in order. */
function expected(resource: ResourceName, rows: Rec[], params: Params): Rec[] {
  const kinds = KINDS[resource];
  let out = rows.filter((row) => searchHolds(resource, row, params.search ?? ''));
  for (const [key, raw] of Object.entries(params)) {
    const m = FILTER_KEY.exec(key);
    if (!m) continue;
    const field = m[1]!;
    const kind = kinds[field];
    assert.ok(kind, `test bug: no field ${field}`);
    out = out.filter((row) => filterHolds(kind, row[field], m[2] ?? 'eq', raw));
  }
  const keys = sortKeys(params.sort);
  // A name sorts as a language does ("Åsa" with the A's): by its sort key, compared byte by byte.
  const sortValue = (field: string, row: Rec) => (field === 'name' ? sortKey(row.name) : row[field]);
  return [...out].sort((a, b) => {
    for (const { field, desc } of keys) {
      const kind = kinds[field]!;
      const c = compareNullable(kind, norm(kind, sortValue(field, a)), norm(kind, sortValue(field, b)));
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  });
}

// ---------------------------------------------------------------- seed data

const CONTACT_SPECIALS: Rec[] = [
  { name: 'a%b', email: 'pct@example.test', city: 'Paris', service_id: 1 },
  { name: 'a_b', email: 'under@example.test', city: 'paris', service_id: 2 },
  { name: 'axb', email: 'plain@example.test', city: 'PARIS', service_id: 2 },
  { name: 'AXB', email: 'plain2@example.test', city: 'Paris', service_id: 3 },
  { name: 'back\\slash', email: 'bs@example.test', city: null },
  { name: 'backxslash', email: 'bx@example.test', city: null },
  { name: 'école du Nord', email: 'ecole1@example.test', city: 'Lille' },
  { name: 'ÉCOLE Sud', email: 'ecole2@example.test', city: 'Nîmes' },
  { name: 'Ecole sans accent', email: 'ecole3@example.test', city: 'Lyon' },
  { name: 'Müller', email: 'mueller@example.test', detail: 'Ärger mit Äpfeln', occupation: 'bäcker', city: 'Zürich' },
  { name: 'Jane Roe', email: 'jroe@example.test', city: 'Oslo', occupation: 'baker' },
  { name: 'Jane Doe', email: 'jdoe@example.test', city: 'Berlin', occupation: 'teacher' },
  { name: 'Svc', email: 'svc@example.test', service_id: 42, phone: '000' },
  { name: 'Phone', email: 'phone@example.test', phone: '+1 555 0042', service_id: 7 },
  { name: 'Svc four-twenty', email: 'svc-four-twenty@example.test', service_id: 420 },
  { name: 'Neg', email: 'neg@example.test', service_id: -3, source_id: 42 },
  { name: 'Literal null', email: 'lnull@example.test', city: 'null' },
  { name: 'Zed', email: 'zed@example.test', city: 'Zürich', service_id: 2147483647 },
  { name: 'Big in text', email: 'big@example.test', detail: 'ref 9007199254740993 here' },
];

function contactBulk(i: number): Rec {
  return {
    name: ['Same', 'Same', 'Same', 'alpha', 'Beta', 'gamma', null][i % 7],
    email: `bulk${i}@example.test`,
    phone: `555-${1000 + i}`,
    city: ['Paris', 'Berlin', null, 'Oslo', 'berlin', null, 'Åre', 'Same'][i % 8],
    service_id: [2, null, 5, 2, 9, null, -3][i % 7 === 6 ? 6 : i % 5],
    country: i % 2 ? 'France' : null,
    created_by: i % 3 ? 1 : null,
  };
}

const TICKETS: (bigint | null)[] = [
  9007199254740991n,
  9007199254740992n,
  9007199254740993n,
  9007199254740994n,
  null,
  1n,
  -9223372036854775808n,
  9223372036854775807n,
  9007199254740993n,
  null,
  9007199254740992n,
];
const TICKET_DATES: (string | null)[] = [
  '2026-02-28T22:59:59.999Z',
  '2026-02-28T23:00:00.000Z',
  '2026-03-01T00:00:00.000Z',
  null,
  '2026-03-01T00:30:00.000Z',
  '2025-12-31T23:59:59.000Z',
  '2026-03-02T00:00:00.000Z',
  '2026-03-01',
  '2026-03-01T02:00:00+02:00',
];
const ASSIGNED_DATES: (string | null)[] = [
  '2026-01-01T10:00:00+02:00',
  null,
  '2026-01-01',
  '2026-01-01T08:00:00Z',
  '2026-01-02T00:00:00.5-01:00',
];
const BOOLS = [true, false, null];

function inquiryBulk(i: number): Rec {
  return {
    name: ['Same', 'Same', 'Other', 'Same', null, 'Zeta'][i % 6],
    email: `inq${i}@example.test`,
    city: ['Paris', null, 'Oslo', 'Paris', 'berlin'][i % 5],
    service_id: [1, 2, null, 2][i % 4],
    status: BOOLS[i % 3],
    inquiry_status: BOOLS[Math.floor(i / 3) % 3],
    inquiry_type: BOOLS[(i * 2 + 1) % 3],
    assigned_to: [null, 5, 6][i % 3],
    assigned_date: ASSIGNED_DATES[i % ASSIGNED_DATES.length],
    ticket_id: TICKETS[i % TICKETS.length],
    ticket_date: TICKET_DATES[i % TICKET_DATES.length],
    inquiry_country: i % 4 ? 'Norway' : 'Österreich',
    detail: i === 5 ? 'x19007199254740993y' : i === 6 ? 'see 9007199254740992' : null,
  };
}

// ---------------------------------------------------------------- HTTP helpers

const qs = (params: Params | [string, string][]) => new URLSearchParams(params).toString();
const listPath = (resource: ResourceName, params: Params | [string, string][]) => `/api/v1/${resource}?${qs(params)}`;

function assert422(reply: Reply, key: string): void {
  assert.equal(reply.status, 422, `expected 422 naming ${key}, got ${reply.status}: ${reply.text}`);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(reply.body.code, 'validation_failed');
  assert.ok(reply.body.errors && Object.hasOwn(reply.body.errors, key), `errors should name ${key}: ${reply.text}`);
}

for (const dialect of DIALECTS) {
  describe(`records list parameters (${dialect})`, () => {
    let app: TestApp;
    const seeded: Record<ResourceName, Rec[]> = { contacts: [], inquiries: [] };

    async function seed(resource: ResourceName, input: Rec): Promise<void> {
      const reply = await app.post(`/api/v1/${resource}`, input);
      assert.equal(reply.status, 201, reply.text);
      const row = reply.body.data as Rec;
      // The model trusts the stored values; check they are what was sent.
      for (const [field, sent] of Object.entries(input)) {
        const kind = KINDS[resource][field]!;
        if (kind === 'dateTime')
          assert.equal(row[field], sent === null ? null : new Date(sent as string).toISOString(), field);
        else assert.deepEqual(norm(kind, row[field]), norm(kind, sent), field);
      }
      seeded[resource].push(row);
    }

    async function list(resource: ResourceName, params: Params | [string, string][]): Promise<Reply> {
      return app.get(listPath(resource, params));
    }

    /** Every row of a page-mode list, page by page (100 a page). */
    async function listAll(resource: ResourceName, params: Params): Promise<Rec[]> {
      const rows: Rec[] = [];
      for (let page = 1; ; page++) {
        const reply = await list(resource, { ...params, per_page: '100', page: String(page) });
        assert.equal(reply.status, 200, reply.text);
        rows.push(...(reply.body.data as Rec[]));
        assert.equal(reply.body.meta.page, page);
        // The last page of an empty list is not fixed by the contract (0 or 1).
        if (reply.body.meta.total > 0) assert.equal(reply.body.meta.last_page, Math.ceil(reply.body.meta.total / 100));
        if (page >= reply.body.meta.last_page) {
          assert.equal(reply.body.meta.total, rows.length);
          return rows;
        }
      }
    }

    /** Every row, by walking the cursor from `cursor=` to `next_cursor: null`. */
    async function walkCursor(resource: ResourceName, params: Params, perPage: number): Promise<Rec[]> {
      const rows: Rec[] = [];
      let cursor = '';
      for (let step = 0; step < 200; step++) {
        const reply = await list(resource, { ...params, per_page: String(perPage), cursor });
        assert.equal(reply.status, 200, reply.text);
        const { data, meta } = reply.body as { data: Rec[]; meta: Record<string, unknown> };
        assert.deepEqual(Object.keys(meta).sort(), ['next_cursor', 'per_page'], `cursor meta: ${reply.text}`);
        assert.equal(meta.per_page, perPage);
        assert.ok(data.length <= perPage, 'at most per_page rows');
        rows.push(...data);
        if (meta.next_cursor === null) return rows;
        assert.equal(typeof meta.next_cursor, 'string');
        assert.equal(data.length, perPage, 'a page before the last one is full');
        cursor = meta.next_cursor as string;
      }
      throw new Error('the cursor never reached the end');
    }

    async function checkList(
      resource: ResourceName,
      params: Params,
      opts: { nonEmpty?: boolean; notAll?: boolean } = {},
    ): Promise<Rec[]> {
      const want = expected(resource, seeded[resource], params);
      if (opts.nonEmpty ?? true) assert.ok(want.length > 0, `test data gives no row for ${qs(params)}`);
      if (opts.notAll ?? true)
        assert.ok(want.length < seeded[resource].length, `test data gives every row for ${qs(params)}`);
      const got = await listAll(resource, params);
      assert.deepEqual(ids(got), ids(want), `ids for ${decodeURIComponent(qs(params))}`);
      return got;
    }

    before(async () => {
      app = await startApp(dialect);
      // Team members #2–#6: the rows below assign inquiries to #5 and #6 (a reference must name a record).
      for (let i = 2; i <= 6; i++) {
        const member = await app.post('/api/v1/users', {
          name: `Member ${i}`,
          email: `member${i}@example.test`,
          password: 'a long enough passphrase 42',
        });
        assert.equal(member.body.data?.id, i, member.text);
      }
      // The services and the source the rows name (a reference names a record). Written here with the ids the integer
      // cases need (42 and 420, -3, the largest 32-bit integer), which the API, numbering records itself, cannot give.
      const now = new Date().toISOString();
      const lookup = (id: number, label: string) => ({
        id,
        name: `${label} ${id}`,
        active: true,
        created_at: now,
        updated_at: now,
      });
      await asRecordTables(app.database.db)
        .insertInto('services')
        .values([1, 2, 3, 5, 7, 9, 42, 420, -3, 2147483647].map((id) => lookup(id, 'Service')))
        .execute();
      await asRecordTables(app.database.db).insertInto('sources').values(lookup(42, 'Source')).execute();
      for (const row of CONTACT_SPECIALS) await seed('contacts', row);
      for (let i = 0; i < 30; i++) await seed('contacts', contactBulk(i));
      // Each inquiry names a contact of the bulk: none is made for it, so the contacts stay the rows seeded above.
      const bulk = seeded.contacts.slice(CONTACT_SPECIALS.length);
      for (let i = 0; i < 42; i++)
        await seed('inquiries', { ...inquiryBulk(i), contact_id: bulk[i % bulk.length]!.id });
    });
    after(async () => {
      await app?.close();
    });

    const byName = (resource: ResourceName, name: string) => {
      const row = seeded[resource].find((r) => r.name === name);
      assert.ok(row, `seeded ${name}`);
      return row;
    };

    // ------------------------------------------------------------ search

    describe('search', () => {
      test('% and _ are literal, not LIKE wildcards', async () => {
        const pct = await checkList('contacts', { search: '%' });
        assert.deepEqual(
          pct.map((r) => r.name),
          ['a%b'],
        );
        const underscore = await checkList('contacts', { search: 'a_b' });
        assert.deepEqual(
          underscore.map((r) => r.name),
          ['a_b'],
        );
        const upper = await checkList('contacts', { search: 'A_B' });
        assert.deepEqual(
          upper.map((r) => r.name),
          ['a_b'],
        );
        const only = await checkList('contacts', { search: '_' });
        assert.ok(!only.some((r) => r.name === 'axb' || r.name === 'AXB'), "'_' is no wildcard");
        const pctB = await checkList('contacts', { search: 'a%B' });
        assert.deepEqual(
          pctB.map((r) => r.name),
          ['a%b'],
        );
      });

      test('backslash is literal', async () => {
        const bs = await checkList('contacts', { search: '\\' });
        assert.deepEqual(
          bs.map((r) => r.name),
          ['back\\slash'],
        );
        const mid = await checkList('contacts', { search: 'k\\s' });
        assert.deepEqual(
          mid.map((r) => r.name),
          ['back\\slash'],
        );
        await checkList('contacts', { search: '\\%' }, { nonEmpty: false });
        await checkList('contacts', { search: 'back\\\\slash' }, { nonEmpty: false });
      });

      test('case-insensitive, ASCII and beyond', async () => {
        const ascii = await checkList('contacts', { search: 'JANE' });
        assert.equal(ascii.length, 2);
        for (const word of ['ÉCOLE', 'école', 'éCoLe']) {
          const got = await checkList('contacts', { search: word });
          assert.deepEqual(
            sortedIds(ids(got)),
            sortedIds([idOf(byName('contacts', 'école du Nord')), idOf(byName('contacts', 'ÉCOLE Sud'))]),
            word,
          );
        }
        for (const word of ['ä', 'Ä', 'äRGER', 'BÄCKER', 'zÜrich']) {
          const got = await checkList('contacts', { search: word });
          assert.ok(
            got.some((r) => r.name === 'Müller'),
            word,
          );
        }
        await checkList('inquiries', { search: 'ÖSTERREICH' });
      });

      test('every word must match, each in any field', async () => {
        const both = await checkList('contacts', { search: 'jane oslo' });
        assert.deepEqual(
          both.map((r) => r.name),
          ['Jane Roe'],
        );
        const across = await checkList('contacts', { search: '  BAKER\tjane  ' });
        assert.deepEqual(
          across.map((r) => r.name),
          ['Jane Roe'],
        );
        await checkList('contacts', { search: 'jane nowhere' }, { nonEmpty: false });
        await checkList('contacts', { search: 'same paris' });
        await checkList('contacts', { search: 'same 2' });
      });

      test('an integer word equals an integer field, or is a substring of text', async () => {
        const got = await checkList('contacts', { search: '42' });
        const names = got.map((r) => r.name);
        assert.ok(names.includes('Svc'), 'service_id = 42');
        assert.ok(names.includes('Phone'), "phone '+1 555 0042' contains 42");
        assert.ok(names.includes('Neg'), 'source_id = 42');
        assert.ok(!names.includes('Svc four-twenty'), 'service_id 420 is not equal to 42');
        const neg = await checkList('contacts', { search: '-3' });
        assert.ok(
          neg.some((r) => r.name === 'Neg'),
          'service_id = -3',
        );
        await checkList('contacts', { search: '2147483647' });
        // Out of the 32-bit range: no integer field can equal it, and it is no error.
        await checkList('contacts', { search: '99999999999' }, { nonEmpty: false });
      });

      test('a 64-bit integer word equals ticket_id exactly and matches text', async () => {
        const got = await checkList('inquiries', { search: '9007199254740993' });
        assert.ok(
          got.some((r) => r.detail === 'x19007199254740993y'),
          'substring in text',
        );
        assert.ok(
          got.some((r) => BigInt(r.ticket_id as bigint) === 9007199254740993n),
          'equal ticket_id',
        );
        assert.ok(
          !got.some(
            (r) => r.ticket_id !== null && BigInt(r.ticket_id as bigint) === 9007199254740992n && r.detail === null,
          ),
          'not …992',
        );
        const low = await checkList('inquiries', { search: '9007199254740992' });
        assert.ok(
          !low.some(
            (r) => r.ticket_id !== null && BigInt(r.ticket_id as bigint) === 9007199254740993n && r.detail === null,
          ),
          'not …993',
        );
        await checkList('inquiries', { search: '9223372036854775807' });
        await checkList('inquiries', { search: '-9223372036854775808' });
        // Contacts have no 64-bit searchable field: only text matches.
        const text = await checkList('contacts', { search: '9007199254740993' });
        assert.deepEqual(
          text.map((r) => r.name),
          ['Big in text'],
        );
      });

      test('non-searchable and non-text fields are not searched', async () => {
        const contact = seeded.contacts[0]!;
        const day = String(contact.created_at).slice(0, 10);
        await checkList('contacts', { search: day }, { nonEmpty: false });
        await checkList('contacts', { search: String(contact.created_at) }, { nonEmpty: false });
        // id is not searchable: a row whose other fields do not hold its id is not found by it.
        const loner = seeded.contacts.find((row) => !searchHolds('contacts', row, idOf(row)));
        assert.ok(loner, 'test data has a row not found by its own id');
        const byId = await listAll('contacts', { search: idOf(loner) });
        assert.ok(!ids(byId).includes(idOf(loner)), 'id is not searchable');
        assert.deepEqual(ids(byId), ids(expected('contacts', seeded.contacts, { search: idOf(loner) })));
        // Booleans and date-times of inquiries are no text.
        await checkList('inquiries', { search: 'true' }, { nonEmpty: false });
        await checkList('inquiries', { search: '2026-03-01' }, { nonEmpty: false });
      });

      test('an empty or blank search returns every row', async () => {
        for (const search of ['', '   ']) {
          const got = await listAll('contacts', { search });
          assert.deepEqual(ids(got), ids(expected('contacts', seeded.contacts, {})));
        }
      });
    });

    // ------------------------------------------------------------ filter

    describe('filter', () => {
      const textCases: Params[] = [
        { 'filter[city]': 'Paris' },
        { 'filter[city][eq]': 'paris' },
        { 'filter[city][eq]': 'PARIS' },
        { 'filter[city][ne]': 'Paris' },
        { 'filter[city][gt]': 'Oslo' },
        { 'filter[city][gte]': 'Oslo' },
        { 'filter[city][lt]': 'Paris' },
        { 'filter[city][lte]': 'berlin' },
        { 'filter[city][gt]': 'Z' },
        { 'filter[city][contains]': 'PAR' },
        { 'filter[city][contains]': 'ü' },
        { 'filter[city][contains]': 'Ü' },
        { 'filter[name][contains]': '%' },
        { 'filter[name][contains]': 'A_B' },
        { 'filter[name][contains]': '\\' },
        { 'filter[name][contains]': 'ÉCOLE' },
        { 'filter[city][in]': 'Paris,Oslo' },
        { 'filter[city][in]': 'Paris,null' },
        { 'filter[city]': 'null' },
        { 'filter[city][null]': 'true' },
        { 'filter[city][null]': 'false' },
        { 'filter[name]': 'Same' },
        { 'filter[name][eq]': 'same' },
      ];
      for (const params of textCases) {
        test(`text ${decodeURIComponent(qs(params))}`, async () => {
          const got = await checkList('contacts', params, { nonEmpty: params['filter[name][eq]'] !== 'same' });
          if (params['filter[city][ne]'])
            assert.ok(
              got.some((r) => r.city === null),
              'ne keeps rows whose city is NULL',
            );
          if (params['filter[city]'] === 'null')
            assert.deepEqual(
              got.map((r) => r.name),
              ['Literal null'],
              "'null' is a word for text",
            );
        });
      }

      test('text equality is exact and case-sensitive', async () => {
        const got = await listAll('contacts', { 'filter[city]': 'Paris' });
        assert.ok(got.length > 0 && got.every((r) => r.city === 'Paris'), 'only Paris, exactly');
        const none = await listAll('contacts', { 'filter[name]': 'jane roe' });
        assert.equal(none.length, 0);
        const contains = await listAll('contacts', { 'filter[city][contains]': 'paris' });
        assert.deepEqual(new Set(contains.map((r) => r.city)), new Set(['Paris', 'paris', 'PARIS']));
      });

      const integerCases: Params[] = [
        { 'filter[service_id]': '42' },
        { 'filter[service_id][eq]': '-3' },
        { 'filter[service_id][ne]': '2' },
        { 'filter[service_id][gt]': '2' },
        { 'filter[service_id][gte]': '2' },
        { 'filter[service_id][lt]': '2' },
        { 'filter[service_id][lte]': '2' },
        { 'filter[service_id][gte]': '-3' },
        { 'filter[service_id][in]': '1,2,7' },
        { 'filter[service_id][in]': '1,2,null' },
        { 'filter[service_id][in]': 'null' },
        { 'filter[service_id]': 'null' },
        { 'filter[service_id][ne]': 'null' },
        { 'filter[service_id][null]': 'true' },
        { 'filter[service_id][null]': 'false' },
        { 'filter[service_id][gt]': '2147483646' },
        { 'filter[created_by]': '1' },
        { 'filter[id][gt]': '10' },
        { 'filter[id][in]': '3,5,8' },
        { 'filter[id][lte]': '4' },
      ];
      for (const params of integerCases) {
        test(`integer ${decodeURIComponent(qs(params))}`, async () => {
          const got = await checkList('contacts', params);
          if (params['filter[service_id][ne]'] === '2')
            assert.ok(
              got.some((r) => r.service_id === null),
              'ne keeps NULL',
            );
        });
      }

      const bigCases: Params[] = [
        { 'filter[ticket_id][gt]': '9007199254740992' },
        { 'filter[ticket_id][gte]': '9007199254740993' },
        { 'filter[ticket_id][lte]': '9007199254740992' },
        { 'filter[ticket_id][lt]': '9007199254740993' },
        { 'filter[ticket_id][lt]': '9007199254740992' },
        { 'filter[ticket_id]': '9007199254740993' },
        { 'filter[ticket_id][eq]': '9007199254740992' },
        { 'filter[ticket_id][ne]': '9007199254740993' },
        { 'filter[ticket_id][in]': '9007199254740993,null' },
        { 'filter[ticket_id][in]': '9007199254740991,9223372036854775807' },
        { 'filter[ticket_id]': '9223372036854775807' },
        { 'filter[ticket_id][lt]': '-9223372036854775807' },
        { 'filter[ticket_id][null]': 'true' },
      ];
      for (const params of bigCases) {
        test(`bigInteger ${decodeURIComponent(qs(params))}`, async () => {
          const got = await checkList('inquiries', params);
          const tickets = got.map((r) => (r.ticket_id === null ? null : BigInt(r.ticket_id as bigint)));
          if (params['filter[ticket_id][gt]'] === '9007199254740992') {
            assert.ok(
              tickets.includes(9007199254740993n) && !tickets.includes(9007199254740992n),
              'gt is exact at 2^53',
            );
          }
          if (params['filter[ticket_id][lte]'] === '9007199254740992') {
            assert.ok(
              tickets.includes(9007199254740992n) && !tickets.includes(9007199254740993n),
              'lte is exact at 2^53',
            );
          }
          if (params['filter[ticket_id]'] === '9007199254740993') {
            assert.ok(
              tickets.every((t) => t === 9007199254740993n),
              'eq is exact beyond 2^53',
            );
          }
        });
      }

      const booleanCases: Params[] = [
        { 'filter[status]': 'true' },
        { 'filter[status]': 'false' },
        { 'filter[status]': 'null' },
        { 'filter[status][eq]': 'null' },
        { 'filter[status][in]': 'true,null' },
        { 'filter[status][in]': 'false' },
        { 'filter[status][ne]': 'true' },
        { 'filter[status][ne]': 'false' },
        { 'filter[status][ne]': 'null' },
        { 'filter[status][null]': 'true' },
        { 'filter[status][null]': 'false' },
        { 'filter[inquiry_type]': 'false' },
        { 'filter[inquiry_status][in]': 'null,false' },
      ];
      for (const params of booleanCases) {
        test(`boolean ${decodeURIComponent(qs(params))}`, async () => {
          const got = await checkList('inquiries', params);
          if (params['filter[status][ne]'] === 'true') {
            assert.deepEqual(new Set(got.map((r) => r.status)), new Set([false, null]), 'ne true keeps false and null');
          }
          if (params['filter[status]'] === 'null')
            assert.ok(
              got.every((r) => r.status === null),
              "'null' means NULL for a boolean",
            );
        });
      }

      const dateCases: Params[] = [
        { 'filter[ticket_date][gte]': '2026-03-01' },
        { 'filter[ticket_date][lt]': '2026-03-01' },
        { 'filter[ticket_date][gt]': '2026-03-01' },
        { 'filter[ticket_date][lte]': '2026-03-01' },
        { 'filter[ticket_date][gte]': '2026-03-01T01:00:00+02:00' },
        { 'filter[ticket_date][lt]': '2026-03-01T01:00:00+02:00' },
        { 'filter[ticket_date][lt]': '2026-03-01T00:00:00-00:30' },
        { 'filter[ticket_date][gte]': '2026-02-28T22:59:59.999Z' },
        { 'filter[ticket_date][gt]': '2026-02-28T22:59:59.999Z' },
        { 'filter[ticket_date][gte]': '2026-02-28', 'filter[ticket_date][lt]': '2026-03-02' },
        { 'filter[ticket_date][gte]': '2026-02-28T23:00:00Z', 'filter[ticket_date][lte]': '2026-03-01T00:30:00Z' },
        { 'filter[ticket_date]': '2026-03-01T00:00:00.000Z' },
        { 'filter[ticket_date][eq]': '2026-03-01T01:00:00+01:00' },
        { 'filter[ticket_date][ne]': '2026-03-01' },
        { 'filter[ticket_date][in]': '2026-03-01,2025-12-31T23:59:59Z' },
        { 'filter[ticket_date][in]': 'null,2026-03-02' },
        { 'filter[ticket_date][null]': 'true' },
        { 'filter[assigned_date][gte]': '2026-01-01T09:00:00+01:00' },
        { 'filter[assigned_date]': '2026-01-01T10:00:00+02:00' },
        { 'filter[assigned_date][lt]': '2026-01-02T01:00:00Z' },
      ];
      for (const params of dateCases) {
        test(`dateTime ${decodeURIComponent(qs(params))}`, async () => {
          await checkList('inquiries', params);
        });
      }

      test('dateTime range on contacts.created_at', async () => {
        const times = seeded.contacts.map((r) => String(r.created_at)).sort();
        const mid = times[Math.floor(times.length / 2)]!;
        await checkList('contacts', { 'filter[created_at][gte]': mid });
        await checkList('contacts', { 'filter[created_at][lt]': mid }, { nonEmpty: false });
        const all = await listAll('contacts', { 'filter[created_at][gte]': times[0]!.slice(0, 10) });
        assert.equal(all.length, seeded.contacts.length);
      });

      test('search and filters combine with AND', async () => {
        await checkList('contacts', { search: 'same', 'filter[city][ne]': 'Paris', 'filter[service_id][gte]': '2' });
        await checkList('contacts', {
          search: 'example 5',
          'filter[city][null]': 'false',
          'filter[country]': 'France',
        });
        await checkList('inquiries', {
          search: 'same',
          'filter[status]': 'true',
          'filter[ticket_date][gte]': '2026-03-01',
        });
        await checkList('inquiries', {
          search: 'norway inq',
          'filter[ticket_id][gt]': '9007199254740992',
          'filter[inquiry_type][in]': 'true,null',
        });
        await checkList('inquiries', { 'filter[status][ne]': 'true', 'filter[status][null]': 'false' });
      });

      const invalid: [ResourceName, Params | [string, string][], string][] = [
        ['contacts', { 'filter[nope]': '1' }, 'filter[nope]'],
        ['contacts', { 'filter[nope][eq]': '1' }, 'filter[nope]'],
        ['contacts', { 'filter[status]': 'true' }, 'filter[status]'],
        ['contacts', { 'filter[name][like]': 'x' }, 'filter[name][like]'],
        ['inquiries', { 'filter[status][contains]': 'x' }, 'filter[status][contains]'],
        ['inquiries', { 'filter[status][gt]': 'true' }, 'filter[status][gt]'],
        ['inquiries', { 'filter[status]': 'maybe' }, 'filter[status]'],
        ['inquiries', { 'filter[status][in]': 'true,maybe' }, 'filter[status][in]'],
        ['contacts', { 'filter[service_id][contains]': '4' }, 'filter[service_id][contains]'],
        ['contacts', { 'filter[service_id]': 'abc' }, 'filter[service_id]'],
        ['contacts', { 'filter[service_id][gt]': '1.5' }, 'filter[service_id][gt]'],
        ['contacts', { 'filter[service_id][gt]': 'null' }, 'filter[service_id][gt]'],
        ['contacts', { 'filter[service_id][eq]': '2147483648' }, 'filter[service_id][eq]'],
        ['contacts', { 'filter[service_id][in]': '1,x' }, 'filter[service_id][in]'],
        ['contacts', { 'filter[city][null]': 'maybe' }, 'filter[city][null]'],
        ['contacts', { 'filter[created_at][contains]': '2026' }, 'filter[created_at][contains]'],
        ['inquiries', { 'filter[ticket_id][gt]': '9223372036854775808' }, 'filter[ticket_id][gt]'],
        ['inquiries', { 'filter[ticket_date][gte]': '2026-02-30' }, 'filter[ticket_date][gte]'],
        ['inquiries', { 'filter[ticket_date][lt]': 'yesterday' }, 'filter[ticket_date][lt]'],
        [
          'contacts',
          [
            ['filter[city]', 'a'],
            ['filter[city]', 'b'],
          ],
          'filter[city]',
        ],
        ['contacts', { filter: 'city' }, 'filter'],
        ['contacts', { foo: '1' }, 'foo'],
        ['contacts', { sort: 'nope' }, 'sort'],
        ['contacts', { sort: '-nope' }, 'sort'],
        ['contacts', { sort: 'name,,city' }, 'sort'],
        ['contacts', { sort: 'name,status' }, 'sort'],
      ];
      for (const [resource, params, key] of invalid) {
        test(`422 naming ${key}: ${resource}?${decodeURIComponent(qs(params))}`, async () => {
          assert422(await list(resource, params), key);
        });
      }

      test('a valid parameter does not hide an invalid one', async () => {
        const reply = await list('contacts', { 'filter[city]': 'Paris', 'filter[service_id][gt]': 'x', sort: 'nope' });
        assert422(reply, 'filter[service_id][gt]');
        assert422(reply, 'sort');
      });
    });

    // ------------------------------------------------------------ sort

    describe('sort', () => {
      const contactSorts = [
        'name',
        '-name',
        'city',
        '-city',
        'service_id',
        '-service_id',
        'city,-service_id',
        '-city,service_id',
        'name,city',
        '-name,-city',
        'id',
        '-id',
        'name,-id',
        'created_at',
        '-created_at',
      ];
      for (const sort of contactSorts) {
        test(`contacts sort=${sort}`, async () => {
          await checkList('contacts', { sort }, { nonEmpty: true, notAll: false });
        });
      }
      const inquirySorts = [
        'status',
        '-status',
        'status,-ticket_id',
        'ticket_id',
        '-ticket_id',
        'ticket_date',
        '-ticket_date,name',
        'assigned_date',
        '-inquiry_type,inquiry_status',
      ];
      for (const sort of inquirySorts) {
        test(`inquiries sort=${sort}`, async () => {
          await checkList('inquiries', { sort }, { notAll: false });
        });
      }

      test('default sort is -id', async () => {
        const reply = await list('contacts', { per_page: '100' });
        assert.equal(reply.status, 200);
        const got = ids(reply.body.data);
        assert.deepEqual(got, sortedIds(ids(seeded.contacts)).reverse());
      });

      test('NULL sorts first ascending, last descending', async () => {
        const asc = await listAll('contacts', { sort: 'city' });
        const nulls = seeded.contacts.filter((r) => r.city === null).length;
        assert.ok(nulls > 0, 'test data has NULL cities');
        assert.ok(
          asc.slice(0, nulls).every((r) => r.city === null),
          'NULL first ascending',
        );
        assert.ok(
          asc.slice(nulls).every((r) => r.city !== null),
          'then the others',
        );
        const desc = await listAll('contacts', { sort: '-city' });
        assert.ok(
          desc.slice(-nulls).every((r) => r.city === null),
          'NULL last descending',
        );
        const status = await listAll('inquiries', { sort: 'status' });
        assert.deepEqual([...new Set(status.map((r) => r.status))], [null, false, true]);
        const statusDesc = await listAll('inquiries', { sort: '-status' });
        assert.deepEqual([...new Set(statusDesc.map((r) => r.status))], [true, false, null]);
      });

      test('ties are broken by id in the direction of the last key', async () => {
        const sameIds = seeded.contacts.filter((r) => r.name === 'Same').map(idOf);
        assert.ok(sameIds.length >= 5, 'test data has many rows named Same');
        const asc = (await listAll('contacts', { sort: 'name' })).filter((r) => r.name === 'Same').map(idOf);
        assert.deepEqual(asc, sortedIds(sameIds));
        const desc = (await listAll('contacts', { sort: '-name' })).filter((r) => r.name === 'Same').map(idOf);
        assert.deepEqual(desc, sortedIds(sameIds).reverse());
        // Last key ascending, first descending: ties go by ascending id.
        const mixed = (await listAll('contacts', { sort: '-name,city' }))
          .filter((r) => r.name === 'Same' && r.city === 'Paris')
          .map(idOf);
        assert.ok(mixed.length >= 2, 'test data has ties on name and city');
        assert.deepEqual(mixed, sortedIds(mixed));
        const mixed2 = (await listAll('contacts', { sort: 'name,-city' }))
          .filter((r) => r.name === 'Same' && r.city === 'Paris')
          .map(idOf);
        assert.deepEqual(mixed2, sortedIds(mixed2).reverse());
      });
    });

    // ------------------------------------------------------------ page paging

    describe('page paging', () => {
      test('default page is 1 of 25 with total and last_page', async () => {
        const reply = await list('contacts', {});
        assert.equal(reply.status, 200);
        const total = seeded.contacts.length;
        assert.deepEqual(reply.body.meta, { page: 1, per_page: 25, total, last_page: Math.ceil(total / 25) });
        assert.deepEqual(ids(reply.body.data), ids(expected('contacts', seeded.contacts, {})).slice(0, 25));
      });

      for (const [resource, params] of [
        ['contacts', { sort: 'name' }],
        ['contacts', { sort: 'city,-service_id', 'filter[service_id][ne]': '5' }],
        ['inquiries', { sort: '-status,ticket_date' }],
        ['inquiries', { search: 'same', 'filter[status][ne]': 'false' }],
      ] as [ResourceName, Params][]) {
        test(`pages concatenate to the whole list: ${resource}?${decodeURIComponent(qs(params))}`, async () => {
          const want = ids(expected(resource, seeded[resource], params));
          const perPage = 7;
          const lastPage = Math.max(1, Math.ceil(want.length / perPage));
          const got: string[] = [];
          for (let page = 1; page <= lastPage; page++) {
            const reply = await list(resource, { ...params, page: String(page), per_page: String(perPage) });
            assert.equal(reply.status, 200, reply.text);
            assert.deepEqual(reply.body.meta, { page, per_page: perPage, total: want.length, last_page: lastPage });
            assert.equal(reply.body.data.length, page < lastPage ? perPage : want.length - perPage * (lastPage - 1));
            got.push(...ids(reply.body.data));
          }
          assert.deepEqual(got, want);
          const beyond = await list(resource, { ...params, page: String(lastPage + 1), per_page: String(perPage) });
          assert.equal(beyond.status, 200);
          assert.deepEqual(beyond.body.data, []);
          assert.equal(beyond.body.meta.total, want.length);
          assert.equal(beyond.body.meta.page, lastPage + 1);
        });
      }

      test('per_page 1 and 100 are allowed', async () => {
        const one = await list('contacts', { per_page: '1', page: '2' });
        assert.equal(one.status, 200);
        assert.deepEqual(ids(one.body.data), ids(expected('contacts', seeded.contacts, {})).slice(1, 2));
        assert.equal(one.body.meta.last_page, seeded.contacts.length);
        const hundred = await list('contacts', { per_page: '100' });
        assert.equal(hundred.status, 200);
        assert.equal(hundred.body.data.length, Math.min(100, seeded.contacts.length));
      });

      for (const [params, key] of [
        [{ per_page: '0' }, 'per_page'],
        [{ per_page: '101' }, 'per_page'],
        [{ per_page: '-1' }, 'per_page'],
        [{ per_page: 'ten' }, 'per_page'],
        [{ per_page: '2.5' }, 'per_page'],
        [{ page: '0' }, 'page'],
        [{ page: '-1' }, 'page'],
        [{ page: 'x' }, 'page'],
        [{ per_page: '0', cursor: '' }, 'per_page'],
        [{ per_page: '101', cursor: '' }, 'per_page'],
      ] as [Params, string][]) {
        test(`422 naming ${key}: ${decodeURIComponent(qs(params))}`, async () => {
          assert422(await list('contacts', params), key);
        });
      }

      test('page together with cursor is refused', async () => {
        const reply = await list('contacts', { page: '1', cursor: '' });
        assert.equal(reply.status, 422, reply.text);
        assert.ok(Object.hasOwn(reply.body.errors, 'page') || Object.hasOwn(reply.body.errors, 'cursor'), reply.text);
      });
    });

    // ------------------------------------------------------------ cursor paging

    describe('cursor paging', () => {
      const walks: [ResourceName, Params][] = [
        ['contacts', {}],
        ['contacts', { sort: 'name' }],
        ['contacts', { sort: '-name' }],
        ['contacts', { sort: 'city,-service_id' }],
        ['contacts', { sort: '-city,service_id' }],
        ['contacts', { sort: '-service_id' }],
        ['contacts', { sort: 'created_at' }],
        ['contacts', { sort: 'id' }],
        ['inquiries', {}],
        ['inquiries', { sort: 'status' }],
        ['inquiries', { sort: '-status,inquiry_type' }],
        ['inquiries', { sort: 'ticket_date' }],
        ['inquiries', { sort: '-ticket_date,name' }],
        ['inquiries', { sort: '-ticket_id' }],
        ['inquiries', { sort: 'assigned_date,-status' }],
        ['contacts', { sort: 'city', 'filter[service_id][ne]': '2' }],
        ['contacts', { sort: '-name', search: 'example', 'filter[city][null]': 'false' }],
        ['inquiries', { sort: 'status,ticket_id', search: 'same', 'filter[ticket_date][gte]': '2026-02-28T23:00:00Z' }],
      ];
      for (const [resource, params] of walks) {
        test(`visits every row once, in order: ${resource}?${decodeURIComponent(qs(params))}`, async () => {
          const want = ids(expected(resource, seeded[resource], params));
          assert.ok(want.length > 6, 'enough rows to need several pages');
          const walked = ids(await walkCursor(resource, params, 3));
          assert.equal(new Set(walked).size, walked.length, 'no row twice');
          assert.deepEqual(walked, want);
          assert.deepEqual(walked, ids(await listAll(resource, params)), 'the same order as page paging');
        });
      }

      test('the last page has next_cursor null, also when it is full', async () => {
        const six = sortedIds(ids(seeded.contacts)).slice(0, 6);
        const params = { 'filter[id][in]': six.join(','), sort: 'id' };
        const first = await list('contacts', { ...params, per_page: '3', cursor: '' });
        assert.equal(first.status, 200);
        assert.deepEqual(ids(first.body.data), six.slice(0, 3));
        assert.equal(typeof first.body.meta.next_cursor, 'string');
        const second = await list('contacts', { ...params, per_page: '3', cursor: first.body.meta.next_cursor });
        assert.equal(second.status, 200);
        assert.deepEqual(ids(second.body.data), six.slice(3));
        assert.equal(second.body.meta.next_cursor, null);
        const whole = await list('contacts', { ...params, per_page: '6', cursor: '' });
        assert.equal(whole.body.data.length, 6);
        assert.equal(whole.body.meta.next_cursor, null);
        const empty = await list('contacts', { 'filter[name]': 'nobody at all', cursor: '' });
        assert.equal(empty.status, 200);
        assert.deepEqual(empty.body, { data: [], meta: { per_page: 25, next_cursor: null } });
      });

      test('a tampered cursor is refused, naming cursor', async () => {
        const first = await list('contacts', { sort: 'name', per_page: '3', cursor: '' });
        const cursor = first.body.meta.next_cursor as string;
        assert.equal((await list('contacts', { sort: 'name', per_page: '3', cursor })).status, 200);
        const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const decoded = (() => {
          try {
            return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
          } catch {
            return undefined;
          }
        })();
        const tampered = [
          'not-a-cursor',
          'x',
          cursor.slice(0, Math.floor(cursor.length / 2)),
          (cursor[0] === 'A' ? 'B' : 'A') + cursor.slice(1),
          `${cursor}!!`,
          b64({}),
          b64([]),
          b64(null),
          b64('text'),
        ];
        if (decoded && typeof decoded === 'object' && !Array.isArray(decoded)) {
          // Same shape as a real cursor, but values the sort cannot hold.
          const entries = Object.entries(decoded as Record<string, unknown>);
          const withArrays = entries.map(([k, v]) => [k, Array.isArray(v) ? v.map(() => 'not a value') : v]);
          tampered.push(b64(Object.fromEntries(withArrays)));
          const shortened = entries.map(([k, v]) => [k, Array.isArray(v) ? v.slice(1) : v]);
          tampered.push(b64(Object.fromEntries(shortened)));
        }
        for (const bad of tampered) {
          assert422(await list('contacts', { sort: 'name', per_page: '3', cursor: bad }), 'cursor');
        }
      });

      test('a cursor reused with a different sort is refused', async () => {
        const first = await list('contacts', { sort: 'name', per_page: '3', cursor: '' });
        const cursor = first.body.meta.next_cursor as string;
        for (const sort of ['-name', 'city', 'name,city', 'id']) {
          assert422(await list('contacts', { sort, per_page: '3', cursor }), 'cursor');
        }
        assert422(await list('contacts', { per_page: '3', cursor }), 'cursor');
        const byDefault = await list('contacts', { per_page: '3', cursor: '' });
        assert422(
          await list('contacts', { sort: 'id', per_page: '3', cursor: byDefault.body.meta.next_cursor }),
          'cursor',
        );
      });

      test('a cursor of another resource is refused', async () => {
        for (const sort of ['name', '-id']) {
          const fromContacts = await list('contacts', { sort, per_page: '3', cursor: '' });
          assert422(
            await list('inquiries', { sort, per_page: '3', cursor: fromContacts.body.meta.next_cursor }),
            'cursor',
          );
        }
      });
    });
  });
}
