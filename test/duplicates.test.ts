// Duplicates of contacts, over HTTP on each database (CONTRACT.md, "Import preview, rollback, duplicates"): found by
// a normalised email, a phone in E.164 or the folded name and city among hundreds of unrelated contacts; merged into
// one (its records moved, the others to the trash); and the merge undone, every row back byte for byte.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

const UNRELATED = 300;

/** A contact unlike any other: its own name, city, email and phone. */
const unrelated = (i: number) => ({
  name: `Person ${i} ${String.fromCharCode(65 + (i % 26))}`,
  city: `Town ${i}`,
  email: `person.${i}@unrelated.example`,
  // London numbers 020 7946 0000–0999, written in one format or another.
  phone: i % 3 === 0 ? `+44 20 7946 ${String(i).padStart(4, '0')}` : `+442079461${String(i).padStart(3, '0')}`,
  ...(i % 7 === 0 ? { city: null } : {}),
});

/** The groups planted among them: their members, and the keys that make them one. */
const PLANTED: { reasons: string[]; members: (Record<string, unknown> & { stored?: { email: string } })[] }[] = [
  {
    reasons: ['email'],
    members: [
      { name: 'Ana Lima', email: 'Ana@X.org', city: 'Porto' },
      // Stored so by the original service (written now, an address must be valid: it is stored below as it was).
      { name: 'A. Lima', email: 'ana@x.org', city: 'Lisbon', stored: { email: '  ana@x.org ' } },
    ],
  },
  {
    reasons: ['phone'],
    // DEFAULT_COUNTRY is DE: a number without a country code is a German one.
    members: [
      { name: 'Bea Kurz', phone: '+49 30 1234567' },
      { name: 'B. Kurz', phone: '030 1234567' },
      { name: 'Beatrix K.', phone: '+49301234567' },
    ],
  },
  {
    reasons: ['name_city'],
    members: [
      { name: 'José Núñez', city: 'Málaga', email: 'jose@one.example' },
      { name: 'jose nunez', city: 'MALAGA', phone: '+34 600 000 001' },
      { name: ' JOSÉ  NÚÑEZ ', city: ' málaga' },
    ],
  },
  {
    reasons: ['email', 'phone'],
    members: [
      { name: 'Bo Berg', email: 'bo@berg.example', phone: '+46 8 123 456 78' },
      { name: 'Bo B.', email: 'BO@BERG.EXAMPLE', phone: '+46812345678' },
    ],
  },
];

const membersKey = (ids: unknown[]) =>
  ids
    .map(String)
    .sort((a, b) => Number(a) - Number(b))
    .join(',');

/** Every column of some rows of a table, straight from the database, as one digest. */
async function digest(app: TestApp, table: string, ids: unknown[]): Promise<string> {
  if (ids.length === 0) return 'none';
  // biome-ignore lint/suspicious/noExplicitAny: any table, read whole
  const db = app.database.db as any;
  const rows = await db
    .selectFrom(table)
    .selectAll()
    .where(
      'id',
      'in',
      ids.map((id) => BigInt(id as number)),
    )
    .orderBy('id')
    .execute();
  const text = JSON.stringify(rows, (_k, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Date ? v.toISOString() : v,
  );
  return `${rows.length}:${createHash('sha256').update(text).digest('hex')}`;
}

for (const dialect of DIALECTS) {
  describe(`duplicates of contacts (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect, { env: { DEFAULT_COUNTRY: 'DE' } });
    });
    after(() => app.close());

    const create = async (resource: string, body: unknown) => {
      const made = await app.post(`/api/v1/${resource}`, body);
      assert.equal(made.status, 201, made.text);
      return made.body.data as Json;
    };

    /** Every group, page after page. */
    async function allGroups(perPage: number): Promise<Json[]> {
      const groups: Json[] = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const page = await app.get(
          `/api/v1/contacts/duplicates?per_page=${perPage}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200, page.text);
        groups.push(...page.body.data);
        cursor = page.body.meta.next_cursor;
      }
      return groups;
    }

    test('each planted group is found with its members and reasons, among 300 unrelated contacts, and nothing else', async () => {
      for (let start = 0; start < UNRELATED; start += 25)
        await Promise.all(
          Array.from({ length: Math.min(25, UNRELATED - start) }, (_, i) => create('contacts', unrelated(start + i))),
        );
      const planted = new Map<string, string[]>();
      for (const group of PLANTED) {
        const ids = [];
        for (const { stored, ...member } of group.members) {
          const made = await create('contacts', member);
          if (stored) await app.database.db.updateTable('contacts').set(stored).where('id', '=', made.id).execute();
          ids.push(made.id);
        }
        planted.set(membersKey(ids), group.reasons);
      }
      // One contact in two groups: the same email as one, the same phone as another.
      const [c1, c2, c3] = [
        await create('contacts', { name: 'Cy One', email: 'cy@c.example', phone: '+33 1 23 45 67 89' }),
        await create('contacts', { name: 'Cy Two', email: 'CY@c.example' }),
        await create('contacts', { name: 'Cy Three', phone: '+33123456789' }),
      ];
      planted.set(membersKey([c1.id, c2.id]), ['email']);
      planted.set(membersKey([c1.id, c3.id]), ['phone']);

      for (const perPage of [25, 2, 1]) {
        const groups = await allGroups(perPage);
        const found = new Map(
          groups.map((g) => [
            membersKey(g.contacts.map((c: Json) => c.id)),
            g.reasons.map((r: Json) => r.by as string).sort(),
          ]),
        );
        assert.deepEqual(found, planted, `per_page=${perPage}: exactly the planted groups`);
        const firsts = groups.map((g) => Number(g.contacts[0].id));
        assert.deepEqual(
          firsts,
          [...firsts].sort((a, b) => a - b),
          'ordered by the smallest contact id',
        );
      }
      const [first] = await allGroups(25);
      assert.deepEqual(first.reasons, [{ by: 'email', value: 'ana@x.org' }]);
      assert.equal(first.contacts[0].email, 'Ana@X.org', 'members as the API shows them');
      const byName = (await allGroups(25)).find((g) => g.reasons[0].by === 'name_city');
      assert.equal(byName.reasons[0].value, 'jose nunez, malaga');

      const viewer = await teammate(app, 'viewer');
      const read = await app.request('GET', '/api/v1/contacts/duplicates', { token: viewer.token });
      assert.equal(read.status, 200, 'whoever reads contacts sees them');
      for (const query of ['per_page=0', 'per_page=101', 'cursor=abc', 'page=2'])
        assert.equal((await app.get(`/api/v1/contacts/duplicates?${query}`)).status, 422, query);
    });

    test('a merge moves inquiries, notes and tasks to the kept contact, trashes the others; its undo puts every row back', async () => {
      const keep = await create('contacts', { name: 'Keeper', email: 'keeper@m.example', city: 'Gent' });
      const one = await create('contacts', { name: 'Merged One', email: 'one@m.example', phone: '+49 30 7654321' });
      const two = await create('contacts', { name: 'Merged Two', city: 'Brugge', budget: '10k' });
      const contacts = [keep, one, two].map((c) => c.id);
      const inquiries: unknown[] = [];
      const notes: unknown[] = [];
      const tasks: unknown[] = [];
      for (const c of [keep, one, two]) {
        inquiries.push((await create('inquiries', { name: `Ask of ${c.name}`, contact_id: c.id })).id);
        notes.push((await create(`contacts/${c.id}/notes`, { body: `About ${c.name}` })).id);
        tasks.push((await create('tasks', { title: `Call ${c.name}`, contact_id: c.id })).id);
      }
      const snapshot = async () => ({
        contacts: await digest(app, 'contacts', contacts),
        inquiries: await digest(app, 'inquiries', inquiries),
        notes: await digest(app, 'notes', notes),
        tasks: await digest(app, 'tasks', tasks),
      });
      const before = await snapshot();

      const merged = await app.post('/api/v1/contacts/merge', {
        keep: keep.id,
        merge: [one.id, two.id],
        fields: { phone: one.id, city: two.id, budget: two.id, name: keep.id },
      });
      assert.equal(merged.status, 200, merged.text);
      const kept = merged.body.data;
      assert.deepEqual(
        [kept.name, kept.email, kept.phone, kept.city, kept.budget, kept.inquiries_count],
        ['Keeper', 'keeper@m.example', '+49 30 7654321', 'Brugge', '10k', 3],
      );
      for (const [resource, ids] of [
        ['inquiries', inquiries],
        ['notes', notes],
        ['tasks', tasks],
      ] as const)
        for (const id of ids) {
          const row = await app.get(`/api/v1/${resource}/${id}`);
          assert.equal(String(row.body.data.contact_id), String(keep.id), `${resource} #${id} names the kept contact`);
        }
      for (const c of [one, two]) assert.equal((await app.get(`/api/v1/contacts/${c.id}`)).status, 404);
      const trash = (await app.get('/api/v1/trash')).body.data as Json[];
      for (const c of [one, two])
        assert.ok(
          trash.some((t) => t.resource === 'contacts' && String(t.id) === String(c.id)),
          `#${c.id} is in the trash`,
        );
      const timeline = (await app.get(`/api/v1/contacts/${keep.id}/activity`)).body.data as Json[];
      const entry = timeline.find((e) => e.action === 'merged');
      assert.ok(entry, 'one merged entry on the kept contact');
      assert.equal(String(entry.id), String(merged.body.merge_id));
      assert.deepEqual(entry.merged.map(String), [String(one.id), String(two.id)]);
      assert.deepEqual(entry.changes.city, ['Gent', 'Brugge']);
      assert.ok(!('updated_at' in entry.changes), 'the timeline leaves the exact timestamps out');
      const found = await app.get('/api/v1/contacts/duplicates');
      assert.ok(
        !(found.body.data as Json[]).some((g) => g.contacts.some((c: Json) => String(c.id) === String(keep.id))),
      );

      const undone = await app.post(`/api/v1/contacts/merge/${merged.body.merge_id}/undo`);
      assert.equal(undone.status, 200, undone.text);
      assert.deepEqual([undone.body.data.city, undone.body.data.inquiries_count], ['Gent', 1]);
      assert.deepEqual(await snapshot(), before, 'every row as it was, updated_at and keys included');
      const after = (await app.get('/api/v1/trash')).body.data as Json[];
      assert.ok(!after.some((t) => t.resource === 'contacts' && [one.id, two.id].map(String).includes(String(t.id))));

      const again = await app.post(`/api/v1/contacts/merge/${merged.body.merge_id}/undo`);
      assert.equal(again.status, 409, again.text);
      assert.equal(again.body.code, 'already_undone');
      assert.equal((await app.post('/api/v1/contacts/merge/999999/undo')).status, 404);
    });

    test('a merged contact restored from the trash meanwhile is left as it is by the undo', async () => {
      const keep = await create('contacts', { name: 'Stays', city: 'Oslo' });
      const gone = await create('contacts', { name: 'Comes back', city: 'Bergen' });
      const merged = await app.post('/api/v1/contacts/merge', { keep: keep.id, merge: [gone.id] });
      assert.equal(merged.status, 200, merged.text);
      const item = ((await app.get('/api/v1/trash')).body.data as Json[]).find(
        (t) => t.resource === 'contacts' && String(t.id) === String(gone.id),
      );
      assert.equal((await app.post(`/api/v1/trash/${item.change_id}/restore`)).status, 200);
      const undone = await app.post(`/api/v1/contacts/merge/${merged.body.merge_id}/undo`);
      assert.equal(undone.status, 200, undone.text);
      const back = await app.get(`/api/v1/contacts/${gone.id}`);
      assert.deepEqual([back.status, back.body.data.city], [200, 'Bergen']);
    });

    test('refusals: keep among the merged, an id twice, an unknown field or contact, too many, an agent', async () => {
      const [a, b, c] = [
        await create('contacts', { name: 'Ref A' }),
        await create('contacts', { name: 'Ref B' }),
        await create('contacts', { name: 'Ref C' }),
      ];
      const refused = async (body: unknown, field: string, status = 422) => {
        const reply = await app.post('/api/v1/contacts/merge', body);
        assert.equal(reply.status, status, reply.text);
        assert.match(reply.headers.get('content-type') ?? '', /problem\+json/);
        if (field) assert.ok(reply.body.errors?.[field], `${field} is named: ${reply.text}`);
      };
      await refused({ keep: a.id, merge: [a.id, b.id] }, 'merge');
      await refused({ keep: a.id, merge: [b.id, b.id] }, 'merge');
      await refused({ keep: a.id, merge: [b.id], fields: { nope: b.id } }, 'fields.nope');
      await refused({ keep: a.id, merge: [b.id], fields: { city: c.id } }, 'fields.city');
      await refused({ keep: a.id, merge: [999_999] }, 'merge');
      await refused({ keep: 999_999, merge: [b.id] }, 'keep');
      await refused({ merge: [b.id] }, 'keep');
      await refused({ keep: a.id, merge: Array.from({ length: 11 }, (_, i) => i + 1_000_000) }, 'merge');
      await refused({ keep: a.id, merge: [b.id], extra: 1 }, 'extra');
      const agent = await teammate(app, 'agent');
      const own = await app.request('POST', '/api/v1/contacts', { json: { name: 'Agent’s' }, token: agent.token });
      const byAgent = await app.request('POST', '/api/v1/contacts/merge', {
        json: { keep: own.body.data.id, merge: [b.id] },
        token: agent.token,
      });
      assert.equal(byAgent.status, 403, byAgent.text);
      const manager = await teammate(app, 'manager');
      const byManager = await app.request('POST', '/api/v1/contacts/merge', {
        json: { keep: a.id, merge: [b.id], fields: { created_by: b.id } },
        token: manager.token,
      });
      assert.equal(byManager.status, 422, 'only an admin may take over who created a record');
      for (const id of [a.id, b.id, c.id]) assert.equal((await app.get(`/api/v1/contacts/${id}`)).status, 200);
    });

    test('the page lists the groups, merges with the values chosen, and its flash undoes the merge', async () => {
      const keep = await create('contacts', { name: 'Paula Page', email: 'paula@page.example' });
      const other = await create('contacts', { name: 'P. Page', email: 'PAULA@page.example', city: 'Lyon' });
      const browser = await pageSignIn(app, app.admin);
      const page = await browser.get('/contacts/duplicates');
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /paula@page\.example/);
      const csrf = csrfOf(page.text);
      const sent = form({
        _csrf: csrf,
        ids: `${keep.id},${other.id}`,
        keep: String(keep.id),
        'fields[city]': String(other.id),
        'fields[name]': String(keep.id),
      });
      const merged = await browser.request('POST', '/contacts/merge', { body: sent.body, headers: sent.headers });
      assert.equal(merged.status, 303, merged.text);
      const shown = await browser.get(merged.headers.get('location')!);
      assert.match(shown.text, /Merged 1 contact into Paula Page/);
      const undo = shown.text.match(/action="(\/contacts\/merge\/\d+\/undo)"/);
      assert.ok(undo, 'the flash offers Undo');
      assert.equal((await app.get(`/api/v1/contacts/${keep.id}`)).body.data.city, 'Lyon');
      const timeline = await browser.get(`/contacts/${keep.id}`);
      assert.match(timeline.text, new RegExp(`merged 1 contact into this one \\(#${other.id}\\)`));
      const undoForm = form({ _csrf: csrfOf(shown.text) });
      const undone = await browser.request('POST', undo[1]!, { body: undoForm.body, headers: undoForm.headers });
      assert.equal(undone.status, 303, undone.text);
      assert.equal((await app.get(`/api/v1/contacts/${other.id}`)).status, 200, 'the merged contact is back');
      assert.equal((await app.get(`/api/v1/contacts/${keep.id}`)).body.data.city, null);
    });
  });
}
