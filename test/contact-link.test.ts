// The contact link and the first stage (CONTRACT.md, "Inquiries, contacts and the pipeline"), on each database:
// an inquiry created through the API, the page's form or a CSV import is linked to the contact with the same
// normalised email (trimmed, lower-cased) or phone (E.164, read in DEFAULT_COUNTRY when it has no country code), or
// to a contact made from it; it starts in the first open stage that is not archived. The migration that brought the
// link links the inquiries a database already holds, and prints what it did.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, type Kysely, Migrator } from 'kysely';
import { type AnyRecordTables, asRecordTables } from '../src/db/tables.ts';
import { type Database, openDatabase } from '../src/db/connection.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import * as frozen from '../src/db/migrations/lib/keys-v1.ts';
import * as keys from '../src/schema/keys.ts';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { csrfOf, form, submit } from './reliability/helpers/security.ts';

const entities: Record<string, string> = { amp: '&', quot: '"', '#39': "'", lt: '<', gt: '>' };
const decode = (html: string) => html.replace(/&(amp|quot|#39|lt|gt);/g, (_m, e: string) => entities[e]!);
const attribute = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s/>])`).exec(tag);
  return m ? decode(m[1] ?? '') : undefined;
};

/** What a browser sends for the form posting to `action`, as the page shows it filled in (nothing changed). */
function formValues(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]* action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html)?.[1];
  assert.ok(form, `the page has a form posting to ${action}`);
  const values: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attribute(tag, 'name');
    const type = attribute(tag, 'type') ?? 'text';
    if (
      !name ||
      type === 'submit' ||
      ((type === 'radio' || type === 'checkbox') && attribute(tag, 'checked') === undefined)
    )
      continue;
    values[name] = attribute(tag, 'value') ?? '';
  }
  for (const [, name, options] of form.matchAll(/<select\b[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const all = [...options!.matchAll(/<option\b[^>]*>/g)].map(([tag]) => tag);
    const chosen = all.find((tag) => attribute(tag, 'selected') !== undefined) ?? all[0];
    values[name!] = chosen ? (attribute(chosen, 'value') ?? '') : '';
  }
  for (const [, name, text] of form.matchAll(/<textarea\b[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g))
    values[name!] = decode(text!);
  return values;
}

const upload = (csv: string): FormData => {
  const body = new FormData();
  body.append('file', new Blob([csv], { type: 'text/csv' }), 'inquiries.csv');
  return body;
};

test('the app’s match and sort keys are the ones the migration stored (src/schema/keys.ts = lib/keys-v1.ts)', () => {
  const inputs: unknown[] = [
    'Anna.Berg@Example.ORG',
    '  anna.berg@example.org ',
    'ÄRLA@EXAMPLE.DE',
    '+49 30 1234-567',
    '030 1234567',
    '(030) 123 45 67',
    '+1 (415) 555-0100',
    '415 555 0100',
    '0049 30 1234567',
    '12',
    'not a number',
    'Åsa Öberg',
    'Ärla',
    'Łukasz Wiśniewski',
    'łódź',
    'Straße',
    'STRASSE',
    'Søren Ærø',
    'Þóra',
    'Zoë’s café',
    'José Núñez',
    '',
    '   ',
    null,
    undefined,
    42,
    'x'.repeat(300),
  ];
  for (const value of inputs) {
    assert.equal(keys.emailKey(value), frozen.emailKey(value), `emailKey(${String(value)})`);
    assert.equal(keys.sortKey(value), frozen.sortKey(value), `sortKey(${String(value)})`);
    for (const defaultCountry of [undefined, 'DE', 'US', 'GB'])
      assert.equal(
        keys.phoneKey(value, { defaultCountry }),
        frozen.phoneKey(value, { defaultCountry }),
        `phoneKey(${String(value)}, ${defaultCountry})`,
      );
  }
  // And they are what the contract says, so that the two agreeing means something.
  assert.equal(keys.emailKey('  Anna.Berg@Example.ORG '), 'anna.berg@example.org');
  assert.equal(keys.phoneKey('030 1234567', { defaultCountry: 'DE' }), '+49301234567');
  assert.equal(keys.phoneKey('+49 30 1234-567'), '+49301234567');
  assert.equal(keys.phoneKey('030 1234567'), null, 'no country code and no default country: no key');
  for (const value of ['', '   ', null, undefined])
    assert.deepEqual([keys.emailKey(value), keys.phoneKey(value), keys.sortKey(value)], [null, null, null]);
  assert.ok(keys.sortKey('Łukasz')! > keys.sortKey('Lothar')! && keys.sortKey('Łukasz')! < keys.sortKey('Maria')!);
  assert.ok(keys.sortKey('Åsa')! < keys.sortKey('Bernd')!);
});

for (const dialect of DIALECTS) {
  describe(`inquiries link to their contact and start in the first open stage (${dialect})`, () => {
    let app: TestApp;
    let browser: Client;
    before(async () => {
      app = await startApp(dialect, { env: { DEFAULT_COUNTRY: 'DE' } });
      browser = app.client();
      const signedIn = await submit(browser, '/login', '/login', {
        email: app.admin.email,
        password: app.admin.password,
      });
      assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
    });
    after(() => app?.close());

    const total = async (resource: string) => Number((await app.get(`/api/v1/${resource}?per_page=1`)).body.meta.total);
    const contactOf = async (id: unknown) => {
      const reply = await app.get(`/api/v1/contacts/${String(id)}`);
      assert.equal(reply.status, 200, reply.text);
      return reply.body.data as Json;
    };
    const newInquiry = async (body: Record<string, unknown>) => {
      const reply = await app.post('/api/v1/inquiries', body);
      assert.equal(reply.status, 201, reply.text);
      return reply.body.data as Json;
    };
    const stages = async () =>
      new Map(((await app.get('/api/v1/stages?per_page=100')).body.data as Json[]).map((s) => [s.name as string, s]));
    const same = (a: unknown, b: unknown, message?: string) => assert.equal(String(a), String(b), message);

    test('API: the same email in another case or the same phone in another format finds the contact', async () => {
      const anna = (
        await app.post('/api/v1/contacts', {
          name: 'Anna Berg',
          email: 'Anna.Berg@Example.org',
          phone: '+49 30 1234-567',
          city: 'Berlin',
        })
      ).body.data;
      const contacts = await total('contacts');

      const byEmail = await newInquiry({ name: 'A. Berg', email: 'ANNA.BERG@example.ORG' });
      same(byEmail.contact_id, anna.id, 'an email in another case is the same address');
      const byPhone = await newInquiry({ name: 'Anruf', phone: '030 1234567' });
      same(byPhone.contact_id, anna.id, 'a national number, read in DEFAULT_COUNTRY=DE, is the same number');
      const byIntl = await newInquiry({ name: 'Anruf 2', phone: '0049 (30) 123 4567' });
      same(byIntl.contact_id, anna.id, 'so is the international format with 00');
      const emailWins = await newInquiry({
        name: 'Other phone',
        email: 'anna.berg@example.org',
        phone: '+33 1 23 45 67 89',
      });
      same(emailWins.contact_id, anna.id, 'a matching email is enough when the phone is new');
      assert.equal(await total('contacts'), contacts, 'no contact was made for any of them');
      const read = await contactOf(anna.id);
      assert.equal(read.name, 'Anna Berg', 'the contact is left as it was');
      assert.equal(read.inquiries_count, 4, 'and counts the four inquiries');

      const notANumber = await newInquiry({ name: 'Ms Twelve', phone: '12' });
      assert.notEqual(String(notANumber.contact_id), String(anna.id), 'an impossible number matches nothing');
    });

    test('API: an inquiry that matches no contact makes exactly one, from its contact fields; the next one finds it', async () => {
      const contacts = await total('contacts');
      const first = await newInquiry({
        name: 'Carla Neu',
        email: 'Carla.Neu@example.net',
        phone: '089 7654321',
        city: 'München',
        country: 'Germany',
        occupation: 'Architect',
        inquiry_country: 'Austria',
        ticket_id: 4711,
      });
      assert.equal(await total('contacts'), contacts + 1, 'one contact was made');
      assert.notEqual(first.contact_id, null);
      const made = await contactOf(first.contact_id);
      assert.deepEqual(
        [made.name, made.email, made.phone, made.city, made.country, made.occupation],
        ['Carla Neu', 'Carla.Neu@example.net', '089 7654321', 'München', 'Germany', 'Architect'],
        'the contact holds the inquiry’s contact fields, as written',
      );
      same(made.created_by, app.admin.id, 'made by whoever created the inquiry');
      const activity = (await app.get(`/api/v1/contacts/${String(made.id)}/activity`)).body.data as Json[];
      assert.deepEqual(
        activity.map((e) => [e.action, e.via]),
        [['created', 'api']],
        'the contact’s creation is in its timeline',
      );

      const again = await newInquiry({ name: 'Carla again', email: 'carla.neu@EXAMPLE.net' });
      same(again.contact_id, made.id, 'the second inquiry finds the contact the first one made');
      const byPhone = await newInquiry({ name: 'Carla by phone', phone: '+49 89 765 4321' });
      same(byPhone.contact_id, made.id, 'and so does its phone number, written another way');
      assert.equal(await total('contacts'), contacts + 1, 'still one');

      const nameOnly = await newInquiry({ name: 'Only a name' });
      assert.notEqual(nameOnly.contact_id, null, 'a name alone makes a contact of that name');
      assert.equal((await contactOf(nameOnly.contact_id)).name, 'Only a name');
      assert.equal(await total('contacts'), contacts + 2);
    });

    test('API: an explicit contact_id is kept, even when the email names another contact; a missing one is 422', async () => {
      const kept = (await app.post('/api/v1/contacts', { name: 'Chosen Contact', email: 'chosen@example.com' })).body
        .data;
      const other = (await app.post('/api/v1/contacts', { name: 'Other Contact', email: 'other@example.com' })).body
        .data;
      const contacts = await total('contacts');
      const inquiry = await newInquiry({ name: 'Chosen', email: 'other@example.com', contact_id: kept.id });
      same(inquiry.contact_id, kept.id, 'the contact the client named, not the one the email matches');
      const unmatched = await newInquiry({ name: 'Chosen 2', email: 'nobody-else@example.com', contact_id: kept.id });
      same(unmatched.contact_id, kept.id, 'and no contact is made for an email nobody has');
      assert.equal(await total('contacts'), contacts);
      assert.notEqual(String(kept.id), String(other.id));

      const before = await total('inquiries');
      const missing = await app.post('/api/v1/inquiries', { name: 'Nowhere', contact_id: 999_999 });
      assert.equal(missing.status, 422, missing.text);
      assert.ok(missing.body.errors?.contact_id, 'the error names contact_id');
      assert.equal(await total('inquiries'), before);
      assert.equal(await total('contacts'), contacts, 'a refused inquiry makes no contact');
    });

    test('the page’s form links the same way', async () => {
      const bernd = (await app.post('/api/v1/contacts', { name: 'Bernd Kurz', phone: '+49 40 5550123' })).body.data;
      const contacts = await total('contacts');
      const newPage = await browser.get('/inquiries/new');
      assert.equal(newPage.status, 200, newPage.text.slice(0, 300));

      const sent = await browser.request(
        'POST',
        '/inquiries',
        form({ _csrf: csrfOf(newPage.text), name: 'Per Formular', phone: '040 555 01 23', contact_id: '' }),
      );
      assert.equal(sent.status, 303, sent.text.slice(0, 500));
      const id = /^\/inquiries\/(\d+)$/.exec(sent.headers.get('location') ?? '')?.[1];
      assert.ok(id, `redirected to the new inquiry: ${sent.headers.get('location')}`);
      const inquiry = (await app.get(`/api/v1/inquiries/${id}`)).body.data;
      same(inquiry.contact_id, bernd.id, 'linked by the phone number in another format');
      const entry = ((await app.get(`/api/v1/inquiries/${id}/activity`)).body.data as Json[])[0];
      assert.equal(entry.via, 'web');

      const fresh = await browser.request(
        'POST',
        '/inquiries',
        form({ _csrf: csrfOf(newPage.text), name: 'Neu im Formular', email: 'Neu.Form@Example.de' }),
      );
      assert.equal(fresh.status, 303, fresh.text.slice(0, 500));
      const freshId = /^\/inquiries\/(\d+)$/.exec(fresh.headers.get('location') ?? '')?.[1];
      const made = (await app.get(`/api/v1/inquiries/${freshId}`)).body.data;
      assert.equal(await total('contacts'), contacts + 1, 'one contact made for the new address');
      assert.equal((await contactOf(made.contact_id)).email, 'Neu.Form@Example.de');
    });

    test('“Create inquiry” on a contact’s page makes an inquiry of that contact, even one with no email or phone', async () => {
      const visitor = (await app.post('/api/v1/contacts', { name: 'Walk-in Visitor', city: 'Hamburg' })).body.data;
      const contacts = await total('contacts');
      const page = await browser.get(`/inquiries/new?from=${String(visitor.id)}`);
      assert.equal(page.status, 200, page.text.slice(0, 300));
      const values = formValues(page.text, '/inquiries');
      assert.equal(values.name, 'Walk-in Visitor', 'the contact’s fields are copied in');
      const sent = await browser.request('POST', '/inquiries', form(values));
      assert.equal(sent.status, 303, sent.text.slice(0, 500));
      const id = /^\/inquiries\/(\d+)$/.exec(sent.headers.get('location') ?? '')?.[1];
      const inquiry = (await app.get(`/api/v1/inquiries/${id}`)).body.data;
      assert.equal(await total('contacts'), contacts, 'no second “Walk-in Visitor” was made');
      same(inquiry.contact_id, visitor.id, 'the inquiry belongs to the contact it was started from');
    });

    test('a CSV import links each row, and rows sharing a new address share one new contact', async () => {
      const dora = (await app.post('/api/v1/contacts', { name: 'Dora Alt', email: 'dora@example.com' })).body.data;
      const emil = (await app.post('/api/v1/contacts', { name: 'Emil Ruf', phone: '+49 221 9876543' })).body.data;
      const chosen = (await app.post('/api/v1/contacts', { name: 'Import Chosen' })).body.data;
      const contacts = await total('contacts');
      const before = await total('inquiries');
      const csv = [
        'name,email,phone,contact_id,city',
        'Dora Import,DORA@Example.COM,,,',
        'Emil Import,,0221 987 65 43,,',
        'Fritz One,fritz@new.example,,,Köln',
        'Fritz Two,Fritz@NEW.example,,,',
        'Gina One,gina@new.example,+49 40 7654321,,',
        'Gina Two,,040 7654321,,',
        `Explicit,dora@example.com,,${String(chosen.id)},`,
        ',,,,Nowhere',
      ].join('\n');
      const reply = await app.request('POST', '/api/v1/inquiries/import', { body: upload(csv) });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.created, 7, reply.text);
      assert.deepEqual(
        (reply.body.failed as Json[]).map((f) => f.row),
        [8],
        'the row with no name, email or phone is refused',
      );
      assert.equal(await total('inquiries'), before + 7);
      assert.equal(await total('contacts'), contacts + 2, 'one contact for the Fritz rows, one for the Gina rows');

      const imported = (await app.get(`/api/v1/inquiries?per_page=7&sort=-id`)).body.data as Json[];
      const by = Object.fromEntries(imported.map((i) => [i.name as string, i]));
      same(by['Dora Import'].contact_id, dora.id, 'email in another case');
      same(by['Emil Import'].contact_id, emil.id, 'phone in another format');
      assert.notEqual(by['Fritz One'].contact_id, null);
      same(by['Fritz Two'].contact_id, by['Fritz One'].contact_id, 'the same new address in one file: one contact');
      assert.equal((await contactOf(by['Fritz One'].contact_id)).name, 'Fritz One', 'made from the first row');
      assert.notEqual(by['Gina One'].contact_id, by['Fritz One'].contact_id);
      same(by['Gina Two'].contact_id, by['Gina One'].contact_id, 'the number of a contact made earlier in the file');
      same(by.Explicit.contact_id, chosen.id, 'an explicit contact_id is kept');
      const fritz = await app.get(`/api/v1/contacts/${String(by['Fritz One'].contact_id)}/activity`);
      assert.equal((fritz.body.data as Json[])[0].via, 'import', 'the made contact is logged as by the import');
    });

    test('a new inquiry gets the first open stage by position, skipping archived ones; a given stage is kept', async () => {
      const byName = await stages();
      assert.deepEqual(
        [...byName.values()].sort((a, b) => a.position - b.position).map((s) => [s.name, s.kind, s.active]),
        [
          ['New', 'open', true],
          ['Contacted', 'open', true],
          ['Qualified', 'open', true],
          ['Won', 'won', true],
          ['Lost', 'lost', true],
        ],
        'a new install’s pipeline',
      );
      const stageOf = async (body: Record<string, unknown>) => String((await newInquiry(body)).stage_id);
      const id = (name: string) => String(byName.get(name)!.id);

      assert.equal(await stageOf({ name: 'Staged 1' }), id('New'));
      assert.equal(await stageOf({ name: 'Staged 2', stage_id: byName.get('Won')!.id }), id('Won'), 'given: kept');

      const archived = await app.patch(`/api/v1/stages/${id('New')}`, { active: false });
      assert.equal(archived.status, 200, archived.text);
      assert.equal(await stageOf({ name: 'Staged 3' }), id('Contacted'), 'an archived stage is skipped');

      const moved = await app.patch(`/api/v1/stages/${id('Qualified')}`, { position: 0 });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(await stageOf({ name: 'Staged 4' }), id('Qualified'), 'the lowest position among the open ones');
      const lostFirst = await app.patch(`/api/v1/stages/${id('Lost')}`, { position: -1 });
      assert.equal(lostFirst.status, 200, lostFirst.text);
      assert.equal(await stageOf({ name: 'Staged 5' }), id('Qualified'), 'a closed stage is never the first');

      const csv = 'name,email\nStaged by import,staged-import@example.com\n';
      const imported = await app.request('POST', '/api/v1/inquiries/import', { body: upload(csv) });
      assert.equal(imported.body.created, 1, imported.text);
      const [row] = (await app.get('/api/v1/inquiries?per_page=1&sort=-id')).body.data as Json[];
      assert.equal(String(row.stage_id), id('Qualified'), 'an import places its rows the same way');

      for (const [name, body] of [
        ['New', { active: true, position: 1 }],
        ['Qualified', { position: 3 }],
        ['Lost', { position: 5 }],
      ] as const)
        assert.equal((await app.patch(`/api/v1/stages/${id(name)}`, body)).status, 200);
      assert.equal(await stageOf({ name: 'Staged 6' }), id('New'), 'back as it was');
    });
  });

  // MariaDB starts from a baseline made after this migration (src/db/migrations/mysql/): no database of its holds
  // inquiries from before it.
  const history = dialect === 'mysql' ? { skip: 'MariaDB has no migration history before its baseline' } : {};
  describe(`the migration links the inquiries a database already holds (${dialect})`, history, () => {
    let fresh: FreshDatabase;
    let database: Database;
    const printed: string[] = [];
    let db: Kysely<AnyRecordTables>;

    before(async () => {
      fresh = await freshDatabase(dialect);
      database = openDatabase(fresh.options);
      db = asRecordTables(database.db);
      const migrator = new Migrator({
        db,
        provider: new FileMigrationProvider({
          fs,
          path,
          migrationFolder: fileURLToPath(new URL('../src/db/migrations/', import.meta.url)),
        }),
        migrationTableName: 'leadbook_migrations',
        migrationLockTableName: 'leadbook_migrations_lock',
      });
      const before = await migrator.migrateTo('2026-11-23T0005-notes-contact-link-roles');
      if (before.error) throw before.error;

      // The database as the previous release left it: plain integers in source_id and service_id, no keys, no stages.
      await db.insertInto('users').values({ name: 'Ada', email: 'ada@example.org', password: 'x' }).execute();
      const contact = (values: Record<string, unknown>) =>
        db.insertInto('contacts').values(values).returning('id').executeTakeFirstOrThrow();
      await contact({ name: 'Anna Berg', email: 'anna.berg@example.org', created_by: 1 });
      await contact({ name: 'Bernd Kurz', phone: '+49 30 1234567', service_id: 3 });
      await contact({ name: 'Anna (a later copy)', email: 'ANNA.BERG@example.org' });
      await contact({ name: 'Linked Before', email: 'linked@example.org' });
      const inquiries = [
        { name: 'By email', email: ' Anna.Berg@Example.ORG ' },
        { name: 'By phone', phone: '030 1234-567' },
        { name: 'Carla', email: 'carla@example.net', city: 'Köln', created_by: 1 },
        { name: 'Carla again', email: 'CARLA@example.net' },
        { name: 'Only a name' },
        { name: 'Dora', email: 'dora@example.com', source_id: 7, service_id: 3 },
        { name: null, email: null, phone: '  ' },
        { name: 'Already linked', email: 'anna.berg@example.org', contact_id: 4 },
      ];
      for (const values of inquiries) await db.insertInto('inquiries').values(values).execute();

      const log = console.log;
      const country = process.env.DEFAULT_COUNTRY;
      console.log = (...args: unknown[]) => printed.push(args.map(String).join(' '));
      process.env.DEFAULT_COUNTRY = 'DE';
      try {
        await migrateToLatest(database.db);
      } finally {
        console.log = log;
        if (country === undefined) delete process.env.DEFAULT_COUNTRY;
        else process.env.DEFAULT_COUNTRY = country;
      }
    });
    after(async () => {
      await database?.close();
      await fresh?.drop();
    });

    const inquiriesByName = async () =>
      new Map((await db.selectFrom('inquiries').selectAll().orderBy('id').execute()).map((r) => [String(r.name), r]));

    test('each inquiry is linked to the oldest contact with its email or phone, or to one made for it', async () => {
      const by = await inquiriesByName();
      const contactOf = (name: string) => (by.get(name)!.contact_id === null ? null : Number(by.get(name)!.contact_id));
      assert.equal(contactOf('By email'), 1, 'email in another case, with spaces: Anna Berg, not her later copy');
      assert.equal(contactOf('By phone'), 2, 'a national number in DEFAULT_COUNTRY=DE');
      assert.equal(contactOf('Already linked'), 4, 'a link already made is kept');
      assert.equal(contactOf('null'), null, 'an inquiry with no name, email or phone stays unlinked');
      for (const name of ['Carla', 'Carla again', 'Only a name', 'Dora']) assert.ok(contactOf(name)! > 4, name);
      assert.equal(contactOf('Carla again'), contactOf('Carla'), 'one contact for one new address');
      assert.equal(new Set(['Carla', 'Only a name', 'Dora'].map(contactOf)).size, 3);
    });

    test('the counts are printed', () => {
      assert.deepEqual(printed, [
        'Linked 6 existing inquiries to contacts; made 3 contacts for inquiries that matched none.',
      ]);
    });

    test('the contacts made hold their inquiry’s fields, and their creation is logged', async () => {
      const made = await db.selectFrom('contacts').selectAll().where('id', '>', 4).orderBy('id').execute();
      assert.deepEqual(
        made.map((c) => [c.name, c.email, c.city, c.created_by === null ? null : Number(c.created_by)]),
        [
          ['Carla', 'carla@example.net', 'Köln', 1],
          ['Only a name', null, null, null],
          ['Dora', 'dora@example.com', null, null],
        ],
      );
      assert.deepEqual(
        made.map((c) => [c.email_key, c.name_sort === null ? null : String(c.name_sort).split('\u0001')[0]]),
        [
          ['carla@example.net', 'carla'],
          [null, 'only a name'],
          ['dora@example.com', 'dora'],
        ],
        'with their keys',
      );
      const dora = made.find((c) => c.name === 'Dora')!;
      assert.deepEqual([Number(dora.source_id), Number(dora.service_id)], [7, 3]);
      const entries = await db
        .selectFrom('change_log')
        .select(['record_id', 'action', 'via'])
        .where('resource', '=', 'contacts')
        .orderBy('record_id')
        .execute();
      assert.deepEqual(
        entries.map((e) => [Number(e.record_id), e.action, e.via]),
        made.map((c) => [Number(c.id), 'created', 'system']),
      );
      const counted = await db
        .selectFrom('record_counts')
        .select((eb) => eb.fn.sum('n').as('n'))
        .where('table_name', '=', 'contacts')
        .executeTakeFirstOrThrow();
      assert.equal(Number(counted.n), 7, 'the contacts made are counted (a list’s total is exact)');
      const old = await db
        .selectFrom('contacts')
        .select(['id', 'phone_key', 'email_key'])
        .where('id', '<=', 4)
        .execute();
      assert.deepEqual(
        old.sort((a, b) => Number(a.id) - Number(b.id)).map((c) => [c.email_key, c.phone_key]),
        [
          ['anna.berg@example.org', null],
          [null, '+49301234567'],
          ['anna.berg@example.org', null],
          ['linked@example.org', null],
        ],
        'the keys of the contacts already there are filled in',
      );
    });

    test('"Source 7" and "Service 3" exist, the references are kept and are now foreign keys', async () => {
      assert.deepEqual(
        (await db.selectFrom('sources').select(['id', 'name', 'active']).execute()).map((r) => [
          Number(r.id),
          r.name,
          Boolean(r.active),
        ]),
        [[7, 'Source 7', true]],
      );
      assert.deepEqual(
        (await db.selectFrom('services').select(['id', 'name']).execute()).map((r) => [Number(r.id), r.name]),
        [[3, 'Service 3']],
        'one row for the id a contact and an inquiry both name',
      );
      const dora = (await inquiriesByName()).get('Dora')!;
      assert.deepEqual([Number(dora.source_id), Number(dora.service_id)], [7, 3]);
      await assert.rejects(
        db.insertInto('inquiries').values({ name: 'Bad source', source_id: 8 }).execute(),
        /foreign key/i,
      );
      const next = await db
        .insertInto('sources')
        .values({ name: 'Trade fair', active: true })
        .returning('id')
        .executeTakeFirstOrThrow();
      assert.ok(Number(next.id) > 7, `a new source gets an id after the ones kept (${String(next.id)})`);
    });

    test('every inquiry is in stage New, the first of the default pipeline', async () => {
      const stages = await db
        .selectFrom('stages')
        .select(['id', 'name', 'kind', 'position'])
        .orderBy('position')
        .execute();
      assert.deepEqual(
        stages.map((s) => [s.name, s.kind, Number(s.position)]),
        [
          ['New', 'open', 1],
          ['Contacted', 'open', 2],
          ['Qualified', 'open', 3],
          ['Won', 'won', 4],
          ['Lost', 'lost', 5],
        ],
      );
      const stageIds = [...(await inquiriesByName()).values()].map((i) => String(i.stage_id));
      assert.equal(stageIds.length, 8);
      assert.deepEqual(new Set(stageIds), new Set([String(stages[0]!.id)]));
    });
  });
}
