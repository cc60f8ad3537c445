// The words of the state fields (CONTRACT.md: "their labels … are settings, shown by GET /schema and every page"),
// and the undo a list offers after a state changes without asking.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

const WORDS = { 'inquiries.status': { label: 'Stage of work', true: 'Closed', false: 'Open', null: 'New' } };

for (const dialect of DIALECTS) {
  describe(`state words and undo from a list (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('an admin sets the words; GET /schema, the pages and the audit log show them; others may not', async () => {
      const agent = await teammate(app, 'agent');
      const refused = await app.request('PUT', '/api/v1/settings/labels', { json: WORDS, token: agent.token });
      assert.equal(refused.status, 403, refused.text);
      for (const [bad, field] of [
        [{ 'inquiries.status': { true: 'x'.repeat(51) } }, 'inquiries.status.true'],
        [{ 'inquiries.nothing': { true: 'Done' } }, 'inquiries.nothing'],
        [{ 'inquiries.status': { colour: 'red' } }, 'inquiries.status.colour'],
        [{ 'inquiries.status': { true: 5 } }, 'inquiries.status.true'],
      ] as const) {
        const reply = await app.request('PUT', '/api/v1/settings/labels', { json: bad });
        assert.equal(reply.status, 422, reply.text);
        assert.ok(reply.body.errors[field], `${field} is named: ${reply.text}`);
      }
      const saved = await app.request('PUT', '/api/v1/settings/labels', { json: WORDS });
      assert.equal(saved.status, 200, saved.text);
      assert.equal(saved.body.data['inquiries.status'].true, 'Closed');

      const schema = (await app.get('/api/v1/schema')).body.data as Json[];
      const status = schema.find((r) => r.name === 'inquiries').fields.find((f: Json) => f.name === 'status');
      assert.equal(status.label, 'Stage of work');
      assert.deepEqual(status.labels, { true: 'Closed', false: 'Open', null: 'New' });
      const other = schema.find((r) => r.name === 'inquiries').fields.find((f: Json) => f.name === 'inquiry_type');
      assert.deepEqual(other.labels, { true: 'Yes', false: 'No', null: 'Not set' }, 'the other fields keep theirs');

      const created = await app.post('/api/v1/inquiries', { name: 'Worded', status: true });
      const browser = await pageSignIn(app, app.admin);
      const page = await browser.get(`/inquiries/${created.body.data.id}`);
      assert.match(page.text, /Stage of work/);
      assert.match(page.text, />Closed</);
      const edit = await browser.get(`/inquiries/${created.body.data.id}/edit`);
      assert.match(edit.text, /> New</, 'the form offers the words');

      const audit = await app.get('/api/v1/activity?filter[action]=settings_changed');
      assert.equal(audit.status, 200, audit.text);
      const [entry] = audit.body.data as Json[];
      assert.equal(entry.action, 'settings_changed');
      assert.deepEqual(entry.changes.labels[1], WORDS);

      // Cleared again: the declaration's words.
      assert.equal((await app.request('PUT', '/api/v1/settings/labels', { json: {} })).status, 200);
      const back = (await app.get('/api/v1/schema')).body.data as Json[];
      const plain = back.find((r) => r.name === 'inquiries').fields.find((f: Json) => f.name === 'status');
      assert.deepEqual([plain.label, plain.labels.true], ['Status', 'Yes']);
    });

    test('the settings page saves words through a plain form', async () => {
      const browser = await pageSignIn(app, app.admin);
      const shown = await browser.get('/settings');
      assert.equal(shown.status, 200);
      const posted = await browser.request(
        'POST',
        '/settings',
        form({
          _csrf: csrfOf(shown.text),
          'inquiries.inquiry_type.label': 'Kind',
          'inquiries.inquiry_type.true': 'Sale',
        }),
      );
      assert.equal(posted.status, 303, posted.text);
      const schema = (await app.get('/api/v1/schema')).body.data as Json[];
      const kind = schema.find((r) => r.name === 'inquiries').fields.find((f: Json) => f.name === 'inquiry_type');
      assert.deepEqual([kind.label, kind.labels.true, kind.labels.false], ['Kind', 'Sale', 'No']);
      const agent = await teammate(app, 'agent');
      const theirs = await pageSignIn(app, agent);
      assert.equal((await theirs.get('/settings')).status, 403);
      await app.request('PUT', '/api/v1/settings/labels', { json: {} });
    });

    test('a state changed from the list asks nothing and offers an undo that puts it back', async () => {
      const created = (await app.post('/api/v1/inquiries', { name: 'Toggled', status: null })).body.data;
      const browser = await pageSignIn(app, app.admin);
      const list = await browser.get('/inquiries');
      const csrf = csrfOf(list.text);
      const toggled = await browser.request('POST', `/inquiries/${created.id}/cycle/status`, {
        ...form({ _csrf: csrf }),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'hx-request': 'true',
          referer: `${app.url}/inquiries?sort=name`,
        },
      });
      assert.equal(toggled.status, 200, toggled.text);
      assert.equal((await app.get(`/api/v1/inquiries/${created.id}`)).body.data.status, true, 'changed at once');
      const undo =
        /<form method="post" action="([^"]+)" class="inline undo">.*?name="change_id" value="(\d+)".*?name="back" value="([^"]+)"/s.exec(
          toggled.text,
        );
      assert.ok(undo, `the message offers an undo: ${toggled.text}`);
      assert.equal(undo[1], `/inquiries/${created.id}/restore`);
      assert.equal(undo[3], '/inquiries?sort=name', 'back to the list as it was');
      const undone = await browser.request(
        'POST',
        undo[1]!,
        form({ _csrf: csrf, change_id: undo[2]!, back: undo[3]! }),
      );
      assert.equal(undone.status, 303, undone.text);
      assert.equal(undone.headers.get('location'), '/inquiries?sort=name');
      assert.equal((await app.get(`/api/v1/inquiries/${created.id}`)).body.data.status, null, 'put back');
      const [latest] = (await app.get(`/api/v1/inquiries/${created.id}/activity`)).body.data as Json[];
      assert.equal(latest.action, 'restored');
    });
  });
}
