// Notes, the trash and undo, over HTTP on each database (CONTRACT.md, "Activity,
// notes, trash and undo"): all read from the one change log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';

for (const dialect of DIALECTS) {
  describe(`notes, trash and undo (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('a note is added at its record’s address, keeps its mentions, shows on the timeline; author or admin change it', async () => {
      const ada = await teammate(app, 'agent', 'Ada Lovelace');
      const bob = await teammate(app, 'agent', 'Bob Stone');
      const contact = (await app.post('/api/v1/contacts', { name: 'Noted' })).body.data;
      const added = await app.request('POST', `/api/v1/contacts/${contact.id}/notes`, {
        json: { body: `Called back; @AdaLovelace and @${app.admin.email}, please follow up.` },
        token: bob.token,
      });
      assert.equal(added.status, 201, added.text);
      const note = added.body.data;
      assert.equal(String(note.contact_id), String(contact.id));
      assert.equal(String(note.created_by), String(bob.id), 'the author is who wrote it');
      assert.deepEqual(JSON.parse(note.mentions).map(String).sort(), [String(app.admin.id), String(ada.id)].sort());

      const timeline = await app.get(`/api/v1/contacts/${contact.id}/activity`);
      const [entry] = timeline.body.data as Json[];
      assert.deepEqual([entry.action, entry.actor.name, String(entry.note.id)], ['note', 'Bob Stone', String(note.id)]);
      assert.match(entry.note.body, /Called back/);

      for (const body of ['', 'x'.repeat(10_001)]) {
        const refused = await app.post(`/api/v1/contacts/${contact.id}/notes`, { body });
        assert.equal(refused.status, 422, refused.text);
        assert.ok(refused.body.errors.body, 'the body is named');
      }
      assert.equal((await app.post(`/api/v1/contacts/${contact.id}/notes`, { body: 'x'.repeat(10_000) })).status, 201);
      assert.equal((await app.post('/api/v1/contacts/999999/notes', { body: 'nowhere' })).status, 404);
      const nowhere = await app.post('/api/v1/notes', { body: 'on nothing' });
      assert.equal(nowhere.status, 422, nowhere.text);
      assert.deepEqual(Object.keys(nowhere.body.errors).sort(), ['contact_id', 'inquiry_id']);

      const byAda = await app.request('PATCH', `/api/v1/notes/${note.id}`, {
        json: { body: 'mine now' },
        token: ada.token,
      });
      assert.equal(byAda.status, 403, 'another agent may not edit it');
      const byBob = await app.request('PATCH', `/api/v1/notes/${note.id}`, {
        json: { body: 'Edited by its author' },
        token: bob.token,
      });
      assert.equal(byBob.status, 200, byBob.text);
      assert.equal(byBob.body.data.mentions, null, 'mentions follow the text');
      const manager = await teammate(app, 'manager');
      assert.equal((await app.request('DELETE', `/api/v1/notes/${note.id}`, { token: manager.token })).status, 403);
      assert.equal((await app.delete(`/api/v1/notes/${note.id}`)).status, 204, 'an admin may');
    });

    test('a deleted contact with two inquiries and three notes comes back whole: same ids, links intact', async () => {
      const contact = (await app.post('/api/v1/contacts', { name: 'Whole Again', city: 'Ghent' })).body.data;
      const inquiries = [];
      for (const name of ['First ask', 'Second ask'])
        inquiries.push((await app.post('/api/v1/inquiries', { name, contact_id: contact.id })).body.data);
      const notes = [];
      for (const body of ['one', 'two', 'three'])
        notes.push((await app.post(`/api/v1/contacts/${contact.id}/notes`, { body })).body.data);

      assert.equal((await app.delete(`/api/v1/contacts/${contact.id}`)).status, 204);
      assert.equal((await app.get(`/api/v1/contacts/${contact.id}`)).status, 404);
      for (const n of notes) assert.equal((await app.get(`/api/v1/notes/${n.id}`)).status, 404);
      for (const i of inquiries)
        assert.equal((await app.get(`/api/v1/inquiries/${i.id}`)).body.data.contact_id, null, 'the inquiry stays');

      const trash = await app.get('/api/v1/trash');
      assert.equal(trash.status, 200, trash.text);
      const item = (trash.body.data as Json[]).find(
        (t) => String(t.id) === String(contact.id) && t.resource === 'contacts',
      );
      assert.ok(item, trash.text);
      assert.deepEqual([item.title, item.with], ['Whole Again', { notes: 3 }]);

      const restored = await app.post(`/api/v1/trash/${item.change_id}/restore`);
      assert.equal(restored.status, 200, restored.text);
      assert.equal(restored.body.data.url, `/api/v1/contacts/${contact.id}`);
      const back = await app.get(`/api/v1/contacts/${contact.id}`);
      assert.deepEqual([back.status, back.body.data.city], [200, 'Ghent']);
      for (const n of notes) {
        const back = await app.get(`/api/v1/notes/${n.id}`);
        assert.equal(back.status, 200, back.text);
        assert.deepEqual([back.body.data.body, String(back.body.data.contact_id)], [n.body, String(contact.id)]);
      }
      for (const i of inquiries)
        assert.equal(String((await app.get(`/api/v1/inquiries/${i.id}`)).body.data.contact_id), String(contact.id));
      const again = await app.post(`/api/v1/trash/${item.change_id}/restore`);
      assert.equal(again.status, 409, again.text);
      assert.ok(!((await app.get('/api/v1/trash')).body.data as Json[]).some((t) => t.change_id === item.change_id));
      const timeline = (await app.get(`/api/v1/contacts/${contact.id}/activity`)).body.data as Json[];
      assert.equal(timeline[0].action, 'restored');
      assert.equal(timeline.filter((e) => e.action === 'note').length, 3, 'its notes are on its timeline again');
    });

    test('what an agent sees in the trash and may restore: only what they deleted', async () => {
      const agent = await teammate(app, 'agent');
      const other = await teammate(app, 'agent');
      const mine = await app.request('POST', '/api/v1/contacts', { json: { name: 'Agent’s own' }, token: agent.token });
      const theirs = await app.request('POST', '/api/v1/contacts', {
        json: { name: 'Not the agent’s' },
        token: other.token,
      });
      assert.equal(
        (await app.request('DELETE', `/api/v1/contacts/${theirs.body.data.id}`, { token: agent.token })).status,
        403,
      );
      assert.equal(
        (await app.request('DELETE', `/api/v1/contacts/${theirs.body.data.id}`, { token: other.token })).status,
        204,
      );
      assert.equal(
        (await app.request('DELETE', `/api/v1/contacts/${mine.body.data.id}`, { token: agent.token })).status,
        204,
      );
      const seen = (await app.request('GET', '/api/v1/trash', { token: agent.token })).body.data as Json[];
      assert.deepEqual(
        seen.map((t) => t.title),
        ['Agent’s own'],
      );
      const all = (await app.get('/api/v1/trash')).body.data as Json[];
      const theirsItem = all.find((t) => t.title === 'Not the agent’s')!;
      const refused = await app.request('POST', `/api/v1/trash/${theirsItem.change_id}/restore`, {
        token: agent.token,
      });
      assert.equal(refused.status, 403, refused.text);
      const viewer = await teammate(app, 'viewer');
      assert.deepEqual((await app.request('GET', '/api/v1/trash', { token: viewer.token })).body.data, []);
      assert.equal((await app.post('/api/v1/trash/99999999/restore')).status, 404);
    });

    test('undo puts back the values before a change, honours If-Match, and is itself on the timeline', async () => {
      const made = (await app.post('/api/v1/contacts', { name: 'Undo Me', city: 'Lyon', phone: null })).body.data;
      const changed = await app.patch(`/api/v1/contacts/${made.id}`, { city: 'Paris', occupation: 'Baker' });
      assert.equal(changed.status, 200, changed.text);
      const [change] = (await app.get(`/api/v1/contacts/${made.id}/activity`)).body.data as Json[];
      assert.equal(change.action, 'updated');
      const stale = await app.request('POST', `/api/v1/contacts/${made.id}/restore`, {
        json: { change_id: change.id },
        headers: { 'If-Match': '"stale"' },
      });
      assert.equal(stale.status, 412, stale.text);
      const undone = await app.request('POST', `/api/v1/contacts/${made.id}/restore`, {
        json: { change_id: change.id },
        headers: { 'If-Match': changed.headers.get('etag')! },
      });
      assert.equal(undone.status, 200, undone.text);
      assert.deepEqual([undone.body.data.city, undone.body.data.occupation], ['Lyon', null]);
      const [entry] = (await app.get(`/api/v1/contacts/${made.id}/activity`)).body.data as Json[];
      assert.deepEqual([entry.action, entry.changes.city], ['restored', ['Paris', 'Lyon']]);
      for (const change_id of [undefined, 'x', 1]) {
        const bad = await app.post(`/api/v1/contacts/${made.id}/restore`, { change_id });
        assert.equal(bad.status, 422, bad.text);
        assert.ok(bad.body.errors.change_id);
      }
    });
  });
}
