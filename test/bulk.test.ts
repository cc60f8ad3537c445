// Bulk actions over HTTP on each database (CONTRACT.md, "Bulk actions"): POST /api/v1/{contacts|inquiries}/bulk by
// ids or by a list query, updates and deletions, each record with its own activity entry; what an agent may not
// change is reported per record, a viewer is refused; a bad request writes nothing; 10,000 records in seconds. And
// the list page's bar without JavaScript: POST /{r}/bulk, back to the list with a message.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { csrfOf, pageSignIn } from './reliability/helpers/security.ts';

/** The flash message a redirect set, as the next page shows it. */
async function flashAfter(client: Client, location: string): Promise<string> {
  const page = await client.get(location);
  assert.equal(page.status, 200, page.text.slice(0, 300));
  const match = /<p class="flash flash-(\w+)" role="\w+">([^<]*)/.exec(page.text);
  assert.ok(match, `no message on ${location}`);
  return `${match[1]}: ${match[2]!.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'")}`;
}

for (const dialect of DIALECTS) {
  describe(`bulk actions (${dialect})`, () => {
    let app: TestApp;
    let agent: Teammate;
    let viewer: Teammate;
    let manager: Teammate;
    before(async () => {
      app = await startApp(dialect);
      agent = await teammate(app, 'agent', 'Agnes Agent');
      viewer = await teammate(app, 'viewer', 'Vic Viewer');
      manager = await teammate(app, 'manager', 'Mona Manager');
    });
    after(() => app.close());

    const as = (who: Teammate | null, path: string, json: unknown) =>
      app.request('POST', path, { json, ...(who ? { token: who.token } : {}) });
    async function inquiries(names: string[], extra: Json = {}, who: Teammate | null = null): Promise<Json[]> {
      const made = [];
      for (const name of names) {
        const created = await as(who, '/api/v1/inquiries', { name, ...extra });
        assert.equal(created.status, 201, created.text);
        made.push(created.body.data);
      }
      return made;
    }
    const activity = async (resource: string, id: unknown) =>
      (await app.get(`/api/v1/${resource}/${id}/activity`)).body.data as Json[];
    const read = async (id: unknown) => (await app.get(`/api/v1/inquiries/${id}`)).body.data;

    test('by ids: each record is changed, with its own entry in its activity', async () => {
      const made = await inquiries(['Bulk one', 'Bulk two', 'Bulk three']);
      const ids = made.map((i) => i.id);
      const answer = await app.post('/api/v1/inquiries/bulk', {
        ids,
        action: 'update',
        changes: { assigned_to: manager.id, status: true },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { updated: 3, failed: [] });
      for (const id of ids) {
        const now = await read(id);
        assert.deepEqual([String(now.assigned_to), now.status], [String(manager.id), true]);
        assert.ok(now.assigned_date, 'the assignment date is set, as by a PATCH');
        const [entry] = await activity('inquiries', id);
        assert.deepEqual([entry.action, entry.via, entry.actor.name], ['updated', 'api', 'Admin']);
        assert.deepEqual(entry.changes.status, [null, true]);
        assert.deepEqual(entry.changes.assigned_to.map(String), ['null', String(manager.id)]);
      }
      // Sent again, nothing changes: counted, no second entry.
      const again = await app.post('/api/v1/inquiries/bulk', { ids, action: 'update', changes: { status: true } });
      assert.deepEqual(again.body, { updated: 3, failed: [] });
      assert.equal((await activity('inquiries', ids[0])).filter((e) => e.action === 'updated').length, 1);
      // Ids named twice count once; an id of no record is reported, the rest written.
      const mixed = await app.post('/api/v1/inquiries/bulk', {
        ids: [ids[0], String(ids[0]), 99_999_999],
        action: 'update',
        changes: { status: false },
      });
      assert.equal(mixed.status, 200, mixed.text);
      assert.equal(mixed.body.updated, 1);
      assert.deepEqual(
        mixed.body.failed.map((f: Json) => [String(f.id), Object.keys(f.errors)]),
        [['99999999', ['id']]],
      );
    });

    test('by query: every record the list query matches, and only those; paging is refused', async () => {
      const inside = await inquiries(['Query A', 'Query B'], { city: 'Bulkton' });
      const outside = (await inquiries(['Query C'], { city: 'Elsewhere' }))[0]!;
      const answer = await app.post('/api/v1/inquiries/bulk', {
        query: 'filter[city]=Bulkton&sort=name',
        action: 'update',
        changes: { inquiry_type: false },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { updated: 2, failed: [] });
      for (const i of inside) assert.equal((await read(i.id)).inquiry_type, false);
      assert.equal((await read(outside.id)).inquiry_type, null, 'a record outside the query is left alone');
      const searched = await app.post('/api/v1/inquiries/bulk', {
        query: '?search=Query C',
        action: 'update',
        changes: { inquiry_type: true },
      });
      assert.deepEqual(searched.body, { updated: 1, failed: [] });
      assert.equal((await read(outside.id)).inquiry_type, true);
      // A searchable field changed in bulk is found by search at once, and its old value no more.
      const moved = await app.post('/api/v1/inquiries/bulk', {
        query: 'filter[city]=Bulkton',
        action: 'update',
        changes: { city: 'Movedtown' },
      });
      assert.deepEqual(moved.body, { updated: 2, failed: [] });
      const found = async (words: string) =>
        ((await app.get(`/api/v1/inquiries?search=${words}&sort=name`)).body.data as Json[]).map((i) => i.name);
      assert.deepEqual(await found('movedtown'), ['Query A', 'Query B']);
      assert.deepEqual(await found('bulkton'), []);

      for (const query of ['filter[city]=Bulkton&page=2', 'per_page=10', 'cursor=', 'filter[nope]=1', 'sort=nope']) {
        const refused = await app.post('/api/v1/inquiries/bulk', {
          query,
          action: 'update',
          changes: { status: true },
        });
        assert.equal(refused.status, 422, `${query}: ${refused.text}`);
        assert.ok(refused.body.errors.query, `${query}: the query is named`);
      }
      for (const body of [
        { ids: [inside[0]!.id], query: 'search=x', action: 'update', changes: { status: true } },
        { action: 'update', changes: { status: true } },
        { query: 42, action: 'update', changes: { status: true } },
      ]) {
        const refused = await app.post('/api/v1/inquiries/bulk', body);
        assert.equal(refused.status, 422, refused.text);
        assert.ok(refused.body.errors.ids || refused.body.errors.query, refused.text);
      }
    });

    test('at most 10,000 records a call: 10,001 ids is a 422 naming ids', async () => {
      const ids = Array.from({ length: 10_001 }, (_, i) => i + 1);
      const refused = await app.post('/api/v1/inquiries/bulk', { ids, action: 'update', changes: { status: true } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'validation_failed');
      assert.match(refused.body.errors.ids.join(' '), /at most 10,000/);
      for (const ids of [[], ['x'], [0], [-1], '1,2', [1.5]]) {
        const bad = await app.post('/api/v1/inquiries/bulk', { ids, action: 'update', changes: { status: true } });
        assert.equal(bad.status, 422, `${JSON.stringify(ids)}: ${bad.text}`);
        assert.ok(bad.body.errors.ids, bad.text);
      }
    });

    test('an agent changes their own and gets the others back in failed; a viewer is refused', async () => {
      const mine = await inquiries(['Agent own 1', 'Agent own 2'], {}, agent);
      const assigned = await inquiries(['Assigned to agent'], { assigned_to: agent.id });
      const theirs = await inquiries(['Not the agent’s']);
      const ids = [...mine, ...assigned, ...theirs].map((i) => i.id);
      const answer = await as(agent, '/api/v1/inquiries/bulk', { ids, action: 'update', changes: { status: false } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.updated, 3, 'created by them or assigned to them');
      assert.deepEqual(
        answer.body.failed.map((f: Json) => String(f.id)),
        [String(theirs[0]!.id)],
      );
      assert.match(answer.body.failed[0].errors.id[0], /not yours/);
      assert.equal((await read(theirs[0]!.id)).status, null, 'left as it was');
      assert.equal((await read(mine[0]!.id)).status, false);
      const deleting = await as(agent, '/api/v1/inquiries/bulk', { ids: [theirs[0]!.id], action: 'delete' });
      assert.deepEqual([deleting.status, deleting.body.deleted, deleting.body.failed.length], [200, 0, 1]);

      for (const body of [
        { ids, action: 'update', changes: { status: true } },
        { ids, action: 'delete' },
        { query: '', action: 'update', changes: { status: true } },
      ]) {
        const refused = await as(viewer, '/api/v1/inquiries/bulk', body);
        assert.equal(refused.status, 403, refused.text);
        assert.equal(refused.body.code, 'forbidden');
      }
      const stranger = await app.request('POST', '/api/v1/inquiries/bulk', {
        json: { ids, action: 'delete' },
        token: null,
      });
      assert.equal(stranger.status, 401);
      // Only an admin names another creator, as with a PATCH.
      const creator = await as(manager, '/api/v1/inquiries/bulk', {
        ids,
        action: 'update',
        changes: { created_by: manager.id },
      });
      assert.equal(creator.status, 403, creator.text);
      assert.ok(creator.body.errors['changes.created_by'], creator.text);
    });

    test('a bad change is a 422 naming the field, and nothing is written', async () => {
      const made = await inquiries(['Untouched 1', 'Untouched 2']);
      const ids = made.map((i) => i.id);
      const entries = async () => (await Promise.all(ids.map((id) => activity('inquiries', id)))).flat().length;
      const before = await entries();
      const cases: [Json, string][] = [
        [{ status: true, nope: 1 }, 'changes.nope'],
        [{ email: 'not an address' }, 'changes.email'],
        [{ status: 'maybe' }, 'changes.status'],
        [{ assigned_to: 99_999_999 }, 'changes.assigned_to'],
        [{ stage_id: 99_999_999 }, 'changes.stage_id'],
        [{}, 'changes'],
      ];
      for (const [changes, field] of cases) {
        const refused = await app.post('/api/v1/inquiries/bulk', { ids, action: 'update', changes });
        assert.equal(refused.status, 422, `${JSON.stringify(changes)}: ${refused.text}`);
        assert.deepEqual(Object.keys(refused.body.errors), [field], refused.text);
      }
      for (const body of [
        { ids, action: 'update' },
        { ids, action: 'delete', changes: { status: true } },
        { ids, action: 'archive' },
        { ids, changes: { status: true } },
        { ids, action: 'update', changes: { status: true }, extra: 1 },
      ]) {
        const refused = await app.post('/api/v1/inquiries/bulk', body);
        assert.equal(refused.status, 422, `${JSON.stringify(body)}: ${refused.text}`);
      }
      const nobody = await app.post('/api/v1/inquiries/bulk', { ids, action: 'update', changes: { name: null } });
      // Leaving an inquiry with no name, email or phone is refused per record, as a PATCH refuses it.
      assert.equal(nobody.status, 200, nobody.text);
      assert.deepEqual([nobody.body.updated, nobody.body.failed.length], [0, 2]);
      assert.deepEqual(Object.keys(nobody.body.failed[0].errors).sort(), ['email', 'name', 'phone']);
      for (const i of made) assert.equal((await read(i.id)).name, i.name);
      assert.equal(await entries(), before, 'no entry was written');
    });

    test('delete moves each record to the trash, and each comes back', async () => {
      const made = await inquiries(['Trash me 1', 'Trash me 2', 'Trash me 3']);
      const note = await app.post(`/api/v1/inquiries/${made[0]!.id}/notes`, { body: 'goes along' });
      assert.equal(note.status, 201, note.text);
      const answer = await as(manager, '/api/v1/inquiries/bulk', { ids: made.map((i) => i.id), action: 'delete' });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { deleted: 3, failed: [] });
      for (const i of made) assert.equal((await app.get(`/api/v1/inquiries/${i.id}`)).status, 404);
      const trash = (await app.get('/api/v1/trash')).body.data as Json[];
      const items = made.map((i) => trash.find((t) => t.resource === 'inquiries' && String(t.id) === String(i.id)));
      assert.ok(
        items.every((t) => t),
        'each is in the trash',
      );
      assert.deepEqual(items[0]!.with, { notes: 1 }, 'with what its deletion took along');
      assert.equal(items[0]!.deleted_by.name, 'Mona Manager');
      for (const item of items) {
        const restored = await app.post(`/api/v1/trash/${item!.change_id}/restore`);
        assert.equal(restored.status, 200, restored.text);
      }
      for (const i of made) assert.equal((await read(i.id)).name, i.name);
      assert.equal((await app.get(`/api/v1/notes/${note.body.data.id}`)).status, 200, 'its note is back too');
      // Contacts too: their notes go along, their inquiries stay unlinked, and a restore links them again.
      const contact = await read(made[1]!.id).then((i) => i.contact_id);
      assert.ok(contact, 'the inquiry has its contact');
      const contactNote = await app.post(`/api/v1/contacts/${contact}/notes`, { body: 'on the contact' });
      const contacts = await app.post('/api/v1/contacts/bulk', { ids: [contact], action: 'delete' });
      assert.deepEqual(contacts.body, { deleted: 1, failed: [] });
      assert.equal((await read(made[1]!.id)).contact_id, null);
      assert.equal((await app.get(`/api/v1/notes/${contactNote.body.data.id}`)).status, 404);
      const [unlinked] = await activity('inquiries', made[1]!.id);
      assert.deepEqual(
        [unlinked.action, unlinked.changes.contact_id.map(String)],
        ['updated', [String(contact), 'null']],
      );
      const item = ((await app.get('/api/v1/trash')).body.data as Json[]).find(
        (t) => t.resource === 'contacts' && String(t.id) === String(contact),
      );
      assert.deepEqual(item?.with, { notes: 1 });
      assert.equal((await app.post(`/api/v1/trash/${item!.change_id}/restore`)).status, 200);
      assert.equal(String((await read(made[1]!.id)).contact_id), String(contact), 'linked again');
      assert.equal((await app.get(`/api/v1/notes/${contactNote.body.data.id}`)).status, 200);
      assert.equal((await app.post('/api/v1/users/bulk', { ids: [1], action: 'delete' })).status, 404);
    });

    test('10,000 inquiries are updated in one call within 10 s, each with its entry; 10,001 matching is a 422', async () => {
      const rows = ['name,email,city'];
      for (let i = 0; i < 10_000; i++) rows.push(`Many ${i},many@example.com,Manyville`);
      const upload = new FormData();
      upload.append('file', new Blob([rows.join('\n')], { type: 'text/csv' }), 'many.csv');
      const imported = await app.request('POST', '/api/v1/inquiries/import', { body: upload });
      assert.equal(imported.status, 200, imported.text.slice(0, 300));
      assert.equal(imported.body.created, 10_000);
      const startedAt = new Date().toISOString();
      const started = performance.now();
      const answer = await app.post('/api/v1/inquiries/bulk', {
        query: 'filter[city]=Manyville',
        action: 'update',
        changes: { assigned_to: agent.id, inquiry_status: true },
      });
      const ms = performance.now() - started;
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.deepEqual([answer.body.updated, answer.body.failed.length], [10_000, 0]);
      console.log(`# bulk update of 10,000 inquiries on ${dialect}: ${Math.round(ms)} ms`);
      assert.ok(ms <= 10_000, `took ${Math.round(ms)} ms`);
      const logged = await app.database.db
        .selectFrom('change_log')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('resource', '=', 'inquiries')
        .where('action', '=', 'updated')
        .where('at', '>=', startedAt)
        .executeTakeFirstOrThrow();
      assert.equal(Number(logged.n), 10_000, 'one entry per record');
      const assigned = await app.get(`/api/v1/inquiries?filter[city]=Manyville&filter[assigned_to]=${agent.id}`);
      assert.equal(assigned.body.meta.total, 10_000);

      assert.equal((await app.post('/api/v1/inquiries', { name: 'One too many', city: 'Manyville' })).status, 201);
      const over = await app.post('/api/v1/inquiries/bulk', {
        query: 'filter[city]=Manyville',
        action: 'delete',
      });
      assert.equal(over.status, 422, over.text);
      assert.match(over.body.errors.query.join(' '), /more than 10,000/);
      assert.equal((await app.get('/api/v1/inquiries?filter[city]=Manyville')).body.meta.total, 10_001);
    });

    test('the list page’s bar, without JavaScript: the form posts, comes back with a message', async () => {
      const made = await inquiries(['Form one', 'Form two'], { city: 'Formtown' }, agent);
      const theirs = await inquiries(['Form other'], { city: 'Formtown' });
      const client = await pageSignIn(app, agent);
      const list = await client.get('/inquiries?filter[city]=Formtown');
      assert.equal(list.status, 200);
      assert.match(list.text, /<form id="bulk-form" method="post" action="\/inquiries\/bulk"/);
      assert.match(list.text, /aria-label="Select Form one"/);
      const post = (values: [string, string][]) => {
        const body = new URLSearchParams([['_csrf', csrfOf(list.text)], ...values]);
        return client.request('POST', '/inquiries/bulk', {
          body: body.toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      };
      const back = '/inquiries?filter[city]=Formtown';
      const ids = [...made, ...theirs].map((i): [string, string] => ['ids', String(i.id)]);
      const assigned = await post([...ids, ['action', 'assign'], ['assigned_to', String(agent.id)], ['back', back]]);
      assert.equal(assigned.status, 303, assigned.text.slice(0, 300));
      assert.equal(assigned.headers.get('location'), back);
      assert.equal(
        await flashAfter(client, back),
        'success: Updated 2 inquiries; 1 could not be changed: Form other (not yours).',
      );
      for (const i of made) assert.equal(String((await read(i.id)).assigned_to), String(agent.id));
      assert.equal((await activity('inquiries', made[0]!.id))[0].via, 'web');

      const state = await post([
        ['scope', 'query'],
        ['query', 'filter[city]=Formtown'],
        ['action', 'state'],
      ]);
      assert.equal(state.status, 303);
      // No state_field: the message says what is missing; nothing written.
      assert.match(await flashAfter(client, '/inquiries'), /^error: Nothing was changed\. Choose which state/);

      const stage = (await app.get('/api/v1/stages?sort=position')).body.data.find((s: Json) => s.name === 'Contacted');
      const moved = await post([
        ['scope', 'query'],
        ['query', 'filter[city]=Formtown'],
        ['action', 'stage'],
        ['stage_id', String(stage.id)],
      ]);
      assert.equal(moved.status, 303);
      assert.match(await flashAfter(client, '/inquiries'), /^success: Updated 2 inquiries; 1 could not be changed/);
      assert.equal(String((await read(made[1]!.id)).stage_id), String(stage.id));

      const exported = await post([...ids.slice(0, 2), ['action', 'export']]);
      assert.equal(exported.status, 303);
      assert.match(exported.headers.get('location')!, /^\/inquiries\/export\.csv\?filter%5Bid%5D%5Bin%5D=\d+%2C\d+$/);

      // A deletion asks first, with the count; then moves them to the trash.
      const asked = await post([...ids, ['action', 'delete'], ['back', back]]);
      assert.equal(asked.status, 200, asked.text.slice(0, 300));
      assert.match(asked.text, /Delete 3 inquiries\?/);
      const confirm = await post([
        ['ids', ids.map(([, id]) => id).join(',')],
        ['action', 'delete'],
        ['confirmed', '1'],
        ['back', back],
      ]);
      assert.equal(confirm.status, 303);
      assert.match(await flashAfter(client, back), /^success: Moved 2 inquiries to the trash, where you can restore/);
      for (const i of made) assert.equal((await app.get(`/api/v1/inquiries/${i.id}`)).status, 404);
      assert.equal((await app.get(`/api/v1/inquiries/${theirs[0]!.id}`)).status, 200);

      // As JSON (the page's script): counts and the failures with their titles.
      const json = await client.request('POST', '/inquiries/bulk', {
        body: new URLSearchParams([
          ['_csrf', csrfOf(list.text)],
          ['ids', String(theirs[0]!.id)],
          ['action', 'state'],
          ['state_field', 'status'],
          ['state_value', 'true'],
        ]).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      });
      assert.equal(json.status, 200, json.text);
      assert.deepEqual(json.body.failed, [{ id: String(theirs[0]!.id), title: 'Form other', reason: 'not yours' }]);
      const listed = await client.get('/inquiries/bulk/ids?filter[city]=Formtown');
      assert.deepEqual(listed.body, { ids: [String(theirs[0]!.id)] });

      const watcher = await pageSignIn(app, viewer);
      const seen = await watcher.get('/inquiries');
      assert.doesNotMatch(seen.text, /bulk-form/, 'a viewer has no bar');
    });
  });
}
