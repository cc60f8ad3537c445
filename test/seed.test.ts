// `leadbook seed`, run as a user runs it, on each dialect: the same seed gives
// the same rows, the counts are right, the team of agents exists once, values
// survive exactly, and the words the bench searches for are found at the
// rates the generator plants them. Expected counts are worked out here by
// running the generator in-process on the same seed and scanning its rows.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { isSafeNumber, parse } from 'lossless-json';
import {
  AGENTS,
  ContactFaker,
  type FakeLookups,
  type FakeRow,
  InquiryFaker,
  PLANTED,
  SERVICES,
  SOURCES,
} from '../src/cli/fake-data.ts';
import { openDatabase } from '../src/db/connection.ts';
import { contact, inquiry } from '../src/resources/index.ts';
import { emailKey, phoneKey, sortKey } from '../src/schema/keys.ts';
import type { Resource } from '../src/schema/resource.ts';
import { DIALECTS, type FreshDatabase, freshDatabase, indexesAndTriggers } from './helpers/database.ts';
import { runCli, type Served, serveCli } from './helpers/process.ts';
import type { Json } from './helpers/json.ts';
import { asRecordTables } from '../src/db/tables.ts';

const CONTACTS = 3000;
const INQUIRIES = 800;
const SEED = 42;

const envOf = (fresh: FreshDatabase) => ({
  DATA_DIR: fresh.options.dataDir,
  DATABASE_URL: fresh.options.databaseUrl ?? '',
  LOG_LEVEL: 'warn',
});

async function seed(fresh: FreshDatabase, seedValue: number, contacts = CONTACTS, inquiries = INQUIRIES) {
  const result = await runCli(
    ['seed', '--contacts', String(contacts), '--inquiries', String(inquiries), '--seed', String(seedValue)],
    envOf(fresh),
  );
  assert.equal(result.code, 0, `seed failed: ${result.stderr}`);
  return result;
}

/** A SHA-256 of every contact and inquiry row, in id order, as the database holds them. */
async function digest(fresh: FreshDatabase): Promise<string> {
  const database = openDatabase(fresh.options);
  try {
    const hash = createHash('sha256');
    for (const table of ['contacts', 'inquiries']) {
      const rows = await asRecordTables(database.db).selectFrom(table).selectAll().orderBy('id').execute();
      for (const row of rows)
        hash.update(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    }
    return hash.digest('hex');
  } finally {
    await database.close();
  }
}

const exactNumber = (text: string) =>
  isSafeNumber(text) ? Number(text) : /^-?\d+$/.test(text) ? BigInt(text) : Number(text);

/** The rows the generator gives for a seed, with the agents', sources' and services' ids as the database numbered them. */
function generated(agentIds: number[], lookups: FakeLookups): { contacts: FakeRow[]; inquiries: FakeRow[] } {
  const c = new ContactFaker(SEED, agentIds, lookups);
  const i = new InquiryFaker(SEED, agentIds, lookups);
  return {
    contacts: Array.from({ length: CONTACTS }, () => c.next()),
    inquiries: Array.from({ length: INQUIRIES }, () => i.next()),
  };
}

/** How many rows hold every word, case-insensitively, in some searchable text field (the contract's search). */
function matching(resource: Resource, rows: FakeRow[], words: string[]): number {
  const fields = resource.searchText.map((f) => f.name);
  return rows.filter((row) =>
    words.every((w) =>
      fields.some((f) => typeof row[f] === 'string' && (row[f] as string).toLowerCase().includes(w.toLowerCase())),
    ),
  ).length;
}

for (const dialect of DIALECTS) {
  describe(`leadbook seed on ${dialect}`, () => {
    let first: FreshDatabase;
    let second: FreshDatabase;
    let served: Served;
    let token: string;
    let agentIds: number[];
    let lookups: FakeLookups;
    let rows: ReturnType<typeof generated>;

    const api = async (path: string) => {
      const res = await fetch(served.url + path, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      assert.equal(res.status, 200, `${path}: ${text.slice(0, 300)}`);
      return parse(text, null, exactNumber) as Json;
    };
    const total = async (path: string) => Number((await api(path)).meta.total);

    before(async () => {
      first = await freshDatabase(dialect);
      second = await freshDatabase(dialect);
      await Promise.all([seed(first, SEED), seed(second, SEED)]);
      const password = 'seed test pass phrase';
      const made = await runCli(
        ['user:create', '--admin', '--email', 'owner@example.com'],
        envOf(first),
        `${password}\n`,
      );
      assert.equal(made.code, 0, made.stderr);
      served = await serveCli(envOf(first));
      const issued = await fetch(`${served.url}/api/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@example.com', password, device_name: 'seed test' }),
      });
      assert.equal(issued.status, 201);
      token = ((await issued.json()) as { token: string }).token;
      const agents = (await api('/api/v1/users?filter[role]=agent&per_page=100')).data as {
        id: number;
        email: string;
      }[];
      agentIds = AGENTS.map((a) => agents.find((u) => u.email === a.email)!.id);
      const idsOf = async (resource: string, names: readonly string[]) => {
        const listed = (await api(`/api/v1/${resource}?per_page=100`)).data as { id: number; name: string }[];
        return names.map((name) => listed.find((r) => r.name === name)!.id);
      };
      lookups = { sourceIds: await idsOf('sources', SOURCES), serviceIds: await idsOf('services', SERVICES) };
      rows = generated(agentIds, lookups);
    });

    after(async () => {
      await served?.stop();
      await first?.drop();
      await second?.drop();
    });

    test('the same seed gives the same rows, another seed other rows', async () => {
      const [a, b] = await Promise.all([digest(first), digest(second)]);
      assert.equal(a, b, 'two databases seeded with the same seed hold the same rows');
      const other = await freshDatabase(dialect);
      try {
        await seed(other, SEED + 1);
        assert.notEqual(await digest(other), a, 'another seed gives other rows');
      } finally {
        await other.drop();
      }
    });

    test("the rows are the generator's, every value exact (accents, 64-bit ticket ids, three-state booleans)", async () => {
      const big = rows.inquiries.findIndex((r) => typeof r.ticket_id === 'bigint' && r.ticket_id > 2n ** 53n);
      assert.ok(big >= 0, 'the generator gives ticket ids beyond 2^53');
      const stored = (await api(`/api/v1/inquiries/${big + 1}`)).data;
      const expected = rows.inquiries[big]!;
      for (const [field, value] of Object.entries(expected)) {
        const got = stored[field];
        const same = typeof value === 'bigint' ? BigInt(got) === value : got === value;
        assert.ok(same, `inquiry ${big + 1}.${field}: stored ${String(got)}, generated ${String(value)}`);
      }
      const accented = rows.contacts.findIndex((r) => /[^\p{ASCII}]/u.test(String(r.name)));
      assert.ok(accented >= 0, 'some names carry accents');
      assert.equal((await api(`/api/v1/contacts/${accented + 1}`)).data.name, rows.contacts[accented]!.name);
      for (const state of ['true', 'false'] as const) {
        const expectedCount = rows.inquiries.filter((r) => r.status === (state === 'true')).length;
        assert.equal(
          await total(`/api/v1/inquiries?filter[status]=${state}&per_page=1`),
          expectedCount,
          `status = ${state}`,
        );
      }
      const nulls = rows.inquiries.filter((r) => r.status === null).length;
      assert.ok(nulls > 0, 'some statuses are unset');
      assert.equal(await total('/api/v1/inquiries?filter[status][null]=true&per_page=1'), nulls, 'status unset');
    });

    test('the records name the 10 sources and 20 services it added; every inquiry is in the first open stage', async () => {
      assert.equal(await total('/api/v1/sources?per_page=1'), SOURCES.length);
      assert.equal(await total('/api/v1/services?per_page=1'), SERVICES.length);
      const named = (field: string, ids: readonly number[], of: FakeRow[]) =>
        ids.map((id) => of.filter((r) => r[field] === id).length);
      for (const [field, ids] of [
        ['source_id', lookups.sourceIds],
        ['service_id', lookups.serviceIds],
      ] as const) {
        const counts = named(field, ids, rows.contacts);
        assert.ok(
          counts.every((n) => n > 0),
          `every ${field} is used: ${counts.join(', ')}`,
        );
        assert.equal(
          await total(`/api/v1/contacts?filter[${field}]=${ids[0]}&per_page=1`),
          counts[0],
          `contacts with the first ${field}`,
        );
        assert.equal(
          await total(`/api/v1/inquiries?filter[${field}]=${ids[0]}&per_page=1`),
          named(field, ids, rows.inquiries)[0],
          `inquiries with the first ${field}`,
        );
      }
      const [opening] = (await api('/api/v1/stages?filter[kind]=open&sort=position&per_page=1')).data as {
        id: number;
        name: string;
      }[];
      assert.equal(opening!.name, 'New');
      assert.equal(await total(`/api/v1/inquiries?filter[stage_id]=${opening!.id}&per_page=1`), INQUIRIES);
    });

    test('the match and sort keys are stored, as the app works them out', async () => {
      const database = openDatabase(first.options);
      try {
        for (const table of ['contacts', 'inquiries']) {
          const stored = await asRecordTables(database.db)
            .selectFrom(table)
            .select(['id', 'name', 'email', 'phone', 'email_key', 'phone_key', 'name_sort'])
            .orderBy('id')
            .execute();
          assert.ok(stored.length >= 800);
          const wrong = stored.filter(
            (r) =>
              r.email_key !== emailKey(r.email) || r.phone_key !== phoneKey(r.phone) || r.name_sort !== sortKey(r.name),
          );
          assert.deepEqual(wrong.slice(0, 3), [], `${table}: ${wrong.length} rows with other keys`);
          assert.ok(
            stored.filter((r) => r.phone_key !== null).length > stored.length / 2,
            `${table}: most phone numbers have a key`,
          );
        }
      } finally {
        await database.close();
      }
    });

    test('counts: every row, created by the 20 agents', async () => {
      assert.equal(await total('/api/v1/contacts?per_page=1'), CONTACTS);
      assert.equal(await total('/api/v1/inquiries?per_page=1'), INQUIRIES);
      assert.equal(agentIds.length, 20);
      assert.equal(await total('/api/v1/users?per_page=1'), 21, 'the 20 agents and the admin');
      assert.equal(
        await total(`/api/v1/contacts?filter[created_by][in]=${agentIds.join(',')}&per_page=1`),
        CONTACTS,
        'every contact was created by an agent',
      );
      const assigned = rows.inquiries.filter((r) => r.assigned_to !== null).length;
      assert.equal(
        await total(`/api/v1/inquiries?filter[assigned_to][in]=${agentIds.join(',')}&per_page=1`),
        assigned,
        'assigned inquiries go to agents',
      );
      assert.equal(
        await total('/api/v1/inquiries?filter[assigned_date][null]=false&per_page=1'),
        assigned,
        'an assigned inquiry has an assigned date',
      );
    });

    test('the planted words are found by search at their rates, in any case', async () => {
      const one = matching(contact, rows.contacts, [PLANTED.one]);
      const two = matching(contact, rows.contacts, [PLANTED.two]);
      const both = matching(contact, rows.contacts, [PLANTED.one, PLANTED.two]);
      assert.ok(
        one >= CONTACTS * 0.006 && one <= CONTACTS * 0.015,
        `"${PLANTED.one}" is in about 1% of the contacts (${one} of ${CONTACTS})`,
      );
      assert.ok(
        two >= CONTACTS * 0.006 && two <= CONTACTS * 0.015,
        `"${PLANTED.two}" is in about 1% of the contacts (${two} of ${CONTACTS})`,
      );
      assert.ok(
        both >= 1 && both <= CONTACTS * 0.004,
        `both words are in about 0.1% of the contacts (${both} of ${CONTACTS})`,
      );
      assert.equal(await total(`/api/v1/contacts?search=${PLANTED.one}&per_page=1`), one);
      assert.equal(await total(`/api/v1/contacts?search=${PLANTED.one}%20${PLANTED.two}&per_page=1`), both);
      assert.equal(
        await total(`/api/v1/inquiries?search=${PLANTED.two}&per_page=1`),
        matching(inquiry, rows.inquiries, [PLANTED.two]),
      );

      const found = (await api(`/api/v1/contacts?search=${PLANTED.one}&per_page=100`)).data as { detail: string }[];
      for (const spelling of ['Solar', 'SOLAR', 'solar']) {
        assert.ok(
          found.some((r) => r.detail.includes(spelling)),
          `a detail spells it ${spelling}, and search finds it`,
        );
      }
    });

    test('tricky text (%, _, \\, emoji) is seeded, and search finds exactly the rows that hold it', async () => {
      for (const word of ['%', '_', '\\', '☀️', '🏭']) {
        const expected = matching(contact, rows.contacts, [word]);
        assert.ok(expected > 0, `some contacts hold ${word}`);
        assert.equal(
          await total(`/api/v1/contacts?search=${encodeURIComponent(word)}&per_page=1`),
          expected,
          `search for ${word}`,
        );
      }
    });

    test('the indexes a seed builds once are those the migrations made', async () => {
      const migrated = await freshDatabase(dialect);
      try {
        const made = await runCli(['migrate'], envOf(migrated));
        assert.equal(made.code, 0, made.stderr);
        const expected = await indexesAndTriggers(migrated);
        assert.ok(expected.some((d) => d.startsWith('contacts_name_id') || d.includes('contacts_name_id')));
        assert.deepEqual(await indexesAndTriggers(second), expected);
      } finally {
        await migrated.drop();
      }
    });

    test('seeding again adds rows, not a second team', async () => {
      await seed(first, SEED + 2, 10, 0);
      assert.equal(await total('/api/v1/users?per_page=1'), 21, 'still the 20 agents and the admin');
      assert.equal(await total('/api/v1/contacts?per_page=1'), CONTACTS + 10);
      assert.equal(await total('/api/v1/sources?per_page=1'), SOURCES.length, 'nor second sources');
      assert.equal(await total('/api/v1/services?per_page=1'), SERVICES.length, 'nor second services');
      const extra = new ContactFaker(SEED + 2, agentIds, lookups).next();
      assert.equal(
        (await api(`/api/v1/contacts/${CONTACTS + 1}`)).data.email,
        extra.email,
        "the new rows are the other seed's",
      );
      // Added to a table with rows, batch by batch: each batch's rows are in the search index too.
      const found = (await api(`/api/v1/contacts?search=${encodeURIComponent(extra.email as string)}`)).data as {
        id: number;
      }[];
      assert.deepEqual(
        found.map((r) => r.id),
        [CONTACTS + 1],
        `search finds ${extra.email}`,
      );
    });
  });
}
