// Generated migrations: the declarations and the last snapshot agree, and the
// steps the generator writes do what the declarations say on every dialect,
// on a database that already holds rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { readSnapshot } from '../src/cli/make-migration.ts';
import { type Database, openDatabase } from '../src/db/connection.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { apply } from '../src/db/migrations/lib/v3.ts';
import { diffSnapshots, snapshotOf } from '../src/db/schema-snapshot.ts';
import { contact, inquiry, resources } from '../src/resources/index.ts';
import { defineResource, extendResource } from '../src/schema/resource.ts';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';

test('the declarations match the last snapshot (after changing them, run `leadbook make:migration NAME`)', () => {
  // No step between them (a snapshot from before v3 spells no MariaDB types; that is no change).
  assert.deepEqual(diffSnapshots(readSnapshot(), snapshotOf(resources)), []);
});

/** The declarations of a later day: contacts gain a website and rename budget, and a new resource (memos, a name no
 * real resource takes) belongs to a contact; every other resource stays as declared. */
function laterDeclarations() {
  const fields = { ...contact.decl.fields } as Record<string, (typeof contact.decl.fields)[string]>;
  const { budget, ...rest } = fields;
  const contacts = defineResource({
    ...contact.decl,
    fields: { ...rest, budget_range: budget!, website: { kind: 'string', max: 2048, format: 'uri', sortable: true } },
  });
  const inquiries = extendResource(contact, {
    ...inquiry.decl,
    fields: Object.fromEntries(Object.entries(inquiry.decl.fields).filter(([n]) => !contact.field(n))),
  });
  const memos = defineResource({
    name: 'test_memos',
    singular: 'memo',
    label: 'Memo',
    fields: {
      id: { kind: 'bigInteger', primary: true },
      contact_id: { kind: 'bigInteger', required: true, references: 'contacts', onDelete: 'cascade' },
      body: { kind: 'text', max: 10_000, required: true },
    },
    indexes: { by_contact: ['contact_id', 'id'] },
  });
  return [...resources.map((r) => (r === contact ? contacts : r === inquiry ? inquiries : r)), memos];
}

for (const dialect of DIALECTS) {
  describe(`generated migrations (${dialect})`, () => {
    let fresh: FreshDatabase;
    let database: Database;
    const q = <T>(text: string) =>
      sql
        .raw<T>(text)
        .execute(database.db)
        .then((r) => r.rows);
    before(async () => {
      fresh = await freshDatabase(dialect);
      database = openDatabase(fresh.options);
      await migrateToLatest(database.db);
      await q(`insert into users (name, email, password) values ('Ada', 'ada@example.org', 'x')`);
      await q(`insert into contacts (name, budget, created_by) values ('Solar Co', '10k', 1), ('Gone Co', null, 1)`);
      await q(`delete from contacts where name = 'Gone Co'`);
    });
    after(async () => {
      await database.close();
      await fresh.drop();
    });

    test('a reference is a foreign key: a missing user is refused, a deleted one is cleared (ON DELETE SET NULL)', async () => {
      await assert.rejects(q(`insert into contacts (name, created_by) values ('x', 999)`), /foreign key/i);
      await q(`insert into users (name, email, password) values ('Bo', 'bo@example.org', 'x')`);
      await q(`insert into inquiries (name, assigned_to) values ('Ask', 2)`);
      await q(`delete from users where id = 2`);
      assert.deepEqual(
        (await q<{ assigned_to: unknown }>(`select assigned_to from inquiries`)).map((r) => r.assigned_to),
        [null],
      );
    });

    test('a drop is refused unless asked for; a rename is never guessed', () => {
      const later = snapshotOf(laterDeclarations());
      assert.throws(() => diffSnapshots(readSnapshot(), later), /would drop column contacts\.budget.*--allow-drop/);
      const steps = diffSnapshots(readSnapshot(), later, { renames: { 'contacts.budget': 'budget_range' } });
      assert.ok(steps.some((s) => s.op === 'renameColumn' && s.from === 'budget' && s.to === 'budget_range'));
      assert.ok(!steps.some((s) => s.op === 'dropColumn'));
    });

    test('a new field, a renamed one and a new resource with a reference: data kept, indexed, searchable, counted', async () => {
      const later = laterDeclarations();
      await apply(
        database.db,
        diffSnapshots(readSnapshot(), snapshotOf(later), { renames: { 'contacts.budget': 'budget_range' } }),
      );
      const [row] = await q<{ id: unknown; budget_range: string; website: null }>(
        `select id, budget_range, website from contacts`,
      );
      assert.deepEqual([Number(row!.id), row!.budget_range, row!.website], [1, '10k', null]);
      await q(`update contacts set website = 'https://solar.example' where id = 1`);
      // The search index covers the new field (the generic search of the repository reads it the same way).
      const found =
        dialect === 'sqlite'
          ? await q(`select rowid from contacts_search where contacts_search match '"solar.example"'`)
          : await q(`select id from contacts where search_text like '%solar.example%'`);
      assert.equal(found.length, 1);
      await q(`insert into test_memos (contact_id, body) values (1, 'called back')`);
      await assert.rejects(q(`insert into test_memos (contact_id, body) values (99, 'nobody')`), /foreign key/i);
      const counts = await q<{ n: unknown }>(`select sum(n) as n from record_counts where table_name = 'test_memos'`);
      assert.equal(Number(counts[0]!.n), 1);
      const index =
        dialect === 'sqlite'
          ? await q(
              `select name from sqlite_master where type = 'index' and name in ('contacts_website_id', 'test_memos_contact_id_ref', 'test_memos_by_contact')`,
            )
          : dialect === 'mysql'
            ? await q(
                `select distinct index_name from information_schema.statistics where table_schema = database() and index_name in ('contacts_website_id', 'test_memos_contact_id_ref', 'test_memos_by_contact')`,
              )
            : await q(
                `select indexname from pg_indexes where indexname in ('contacts_website_id', 'test_memos_contact_id_ref', 'test_memos_by_contact')`,
              );
      assert.equal(index.length, 3, 'a sort index, a reference index, and the declared index over two columns');
      await q(`delete from contacts where id = 1`);
      assert.equal((await q(`select id from test_memos`)).length, 0, 'ON DELETE CASCADE');
    });

    test('a column changed in place (SQLite rebuilds the table) keeps rows and never gives a deleted id again', async () => {
      await q(`insert into contacts (name) values ('Kept'), ('Last')`);
      const [{ id: last }] = (await q<{ id: unknown }>(`select max(id) as id from contacts`)) as [{ id: unknown }];
      await q(`delete from contacts where id = ${Number(last)}`);
      const declared = snapshotOf(laterDeclarations());
      // An index over several columns is declared first; the rebuild below must keep it.
      const from = structuredClone(declared);
      from.tables.contacts!.indexes = { ...declared.tables.contacts!.indexes, city_name: ['city', 'name'] };
      assert.deepEqual(diffSnapshots(declared, from), [
        { op: 'createIndexOn', table: 'contacts', name: 'city_name', columns: ['city', 'name'] },
      ]);
      await apply(database.db, diffSnapshots(declared, from));
      const to = structuredClone(from);
      to.tables.contacts!.columns.city = {
        ...to.tables.contacts!.columns.city!,
        type: { sqlite: 'varchar(200)', postgres: 'varchar(200)', mysql: 'varchar(200)' },
      };
      const steps = diffSnapshots(from, to);
      assert.deepEqual(
        steps.map((s) => s.op),
        ['search', 'alterColumns', 'search'],
      );
      await apply(database.db, steps);
      assert.deepEqual(
        (await q<{ name: string }>(`select name from contacts`)).map((r) => r.name),
        ['Kept'],
      );
      const [{ id }] = (await q<{ id: unknown }>(`insert into contacts (name) values ('New') returning id`)) as [
        { id: unknown },
      ];
      assert.ok(Number(id) > Number(last), `id ${String(id)} after ${String(last)} was deleted`);
      const found =
        dialect === 'sqlite'
          ? await q(`select rowid from contacts_search where contacts_search match '"kept"'`)
          : await q(`select id from contacts where search_text like '%kept%'`);
      assert.equal(found.length, 1, 'the search index is whole again');
      const kept =
        dialect === 'sqlite'
          ? await q(`select sql from sqlite_master where type = 'index' and name = 'contacts_city_name'`)
          : dialect === 'mysql'
            ? await q(`select concat('(', group_concat(column_name order by seq_in_index separator ', '), ')') as \`sql\`
                from information_schema.statistics where table_schema = database() and index_name = 'contacts_city_name'`)
            : await q(`select indexdef as sql from pg_indexes where indexname = 'contacts_city_name'`);
      assert.match(String((kept[0] as { sql?: string } | undefined)?.sql), /\(city, name\)/);
      // Gone from the declarations: dropped.
      const unindexed = structuredClone(to);
      unindexed.tables.contacts!.indexes = { ...declared.tables.contacts!.indexes };
      assert.deepEqual(diffSnapshots(to, unindexed), [{ op: 'dropIndexOn', table: 'contacts', name: 'city_name' }]);
    });
  });
}
