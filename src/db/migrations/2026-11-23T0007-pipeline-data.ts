// Written by hand: the rows the pipeline and the lookups need in a database that already holds records.
// Frozen: never edit it.
//  1. The default pipeline (New, Contacted, Qualified, Won, Lost); every inquiry without a stage is New.
//  2. A source or service row for each id the records already name ("Source 7"), so that the next migration can
//     make the two fields references without clearing a value.
//  3. The match keys of every contact and inquiry (normalised email and phone, the name's sort key).
//  4. Each inquiry not yet linked to a contact is linked to the contact with the same email or phone; for the
//     others a contact is made from the inquiry's contact fields (one per address or number). The counts are
//     printed.
// The keys are worked out as the app's schema/keys.ts does (a frozen copy, lib/keys-v1.ts): stored keys must be
// the ones the app compares with. Phone numbers without a country code are read in DEFAULT_COUNTRY.
import { type Kysely, SqliteAdapter, sql } from 'kysely';
import { emailKey, phoneKey, sortKey } from './lib/keys-v1.ts';

const CONTACT_FIELDS = [
  'name',
  'email',
  'phone',
  'occupation',
  'address',
  'country',
  'city',
  'service_id',
  'source_id',
  'detail',
  'budget',
  'created_by',
] as const;
const PAGE = 1000;

async function fillKeys(db: Kysely<any>, table: string, defaultCountry: string | undefined) {
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom(table)
      .select(['id', 'name', 'email', 'phone'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) return;
    for (const r of rows)
      await db
        .updateTable(table)
        .set({
          email_key: emailKey(r.email),
          phone_key: phoneKey(r.phone, { defaultCountry }),
          name_sort: sortKey(r.name),
        })
        .where('id', '=', r.id)
        .execute();
    after = Number(rows.at(-1)!.id);
  }
}

async function addLookupRows(db: Kysely<any>, postgres: boolean, table: 'sources' | 'services', column: string) {
  const label = table === 'sources' ? 'Source' : 'Service';
  const ids = new Set<number>();
  for (const records of ['contacts', 'inquiries']) {
    const rows = await db.selectFrom(records).select(column).distinct().where(column, 'is not', null).execute();
    for (const r of rows) ids.add(Number(r[column]));
  }
  const now = new Date().toISOString();
  for (const id of ids) {
    const row = { id, name: `${label} ${id}`, active: true, created_at: now, updated_at: now };
    await db.insertInto(table).values(row).execute();
  }
  // Ids given by hand: the sequence continues after them.
  if (postgres && ids.size) {
    const last = sql`(select max(id) from ${sql.table(table)})`;
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${last})`.execute(db);
  }
}

async function linkInquiries(db: Kysely<any>) {
  // By address, then by number: each inquiry to the oldest contact that has it.
  let linked = 0;
  for (const key of ['email_key', 'phone_key']) {
    const same = sql`c.${sql.ref(key)} = inquiries.${sql.ref(key)}`;
    const result = await sql`update inquiries set contact_id = (select min(c.id) from contacts c where ${same})
      where contact_id is null and ${sql.ref(key)} is not null
        and exists (select 1 from contacts c where ${same})`.execute(db);
    linked += Number(result.numAffectedRows ?? 0);
  }
  // The rest: a contact each, shared by the inquiries with the same address or number.
  const made = new Map<string, number>();
  let created = 0;
  let after = 0;
  const now = new Date().toISOString();
  for (;;) {
    const rows = await db
      .selectFrom('inquiries')
      .select(['id', 'email_key', 'phone_key', 'name_sort', 'created_at', ...CONTACT_FIELDS])
      .where('contact_id', 'is', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    if (rows.length === 0) break;
    for (const r of rows) {
      after = Number(r.id);
      if (r.email_key === null && r.phone_key === null && (r.name === null || String(r.name).trim() === '')) continue;
      const keys = [r.email_key && `e:${r.email_key}`, r.phone_key && `p:${r.phone_key}`].filter(Boolean) as string[];
      let contactId = keys.map((k) => made.get(k)).find((id) => id !== undefined);
      if (contactId === undefined) {
        const values = Object.fromEntries(CONTACT_FIELDS.map((f) => [f, r[f]]));
        const inserted = await db
          .insertInto('contacts')
          .values({
            ...values,
            email_key: r.email_key,
            phone_key: r.phone_key,
            name_sort: r.name_sort,
            created_at: r.created_at ?? now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        contactId = Number(inserted.id);
        created++;
        await db
          .insertInto('change_log')
          .values({ at: now, via: 'system', action: 'created', resource: 'contacts', record_id: contactId })
          .execute();
      }
      for (const k of keys) made.set(k, contactId);
      await db.updateTable('inquiries').set({ contact_id: contactId }).where('id', '=', r.id).execute();
      linked++;
    }
  }
  return { linked, created };
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = !(db.getExecutor().adapter instanceof SqliteAdapter);
  const work = async (trx: Kysely<any>) => {
    if (!(await trx.selectFrom('stages').select('id').limit(1).executeTakeFirst())) {
      const now = new Date().toISOString();
      const stages = [
        ['New', 'open'],
        ['Contacted', 'open'],
        ['Qualified', 'open'],
        ['Won', 'won'],
        ['Lost', 'lost'],
      ].map(([name, kind], i) => ({ name, kind, position: i + 1, active: true, created_at: now, updated_at: now }));
      await trx.insertInto('stages').values(stages).execute();
    }
    const first = await trx
      .selectFrom('stages')
      .select('id')
      .where('kind', '=', 'open')
      .orderBy('position')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    await trx.updateTable('inquiries').set({ stage_id: first.id }).where('stage_id', 'is', null).execute();
    await addLookupRows(trx, postgres, 'sources', 'source_id');
    await addLookupRows(trx, postgres, 'services', 'service_id');
    const defaultCountry = process.env.DEFAULT_COUNTRY?.trim().toUpperCase() || undefined;
    await fillKeys(trx, 'contacts', defaultCountry);
    await fillKeys(trx, 'inquiries', defaultCountry);
    const { linked, created } = await linkInquiries(trx);
    if (linked || created)
      console.log(
        `Linked ${linked} existing inquiries to contacts; made ${created} contacts for inquiries that matched none.`,
      );
  };
  // PostgreSQL runs every migration in the migrator's transaction; SQLite's are run one by one.
  if (postgres) await work(db);
  else await db.transaction().execute(work);
}
