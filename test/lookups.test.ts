// Stages, sources and services (CONTRACT.md, "Every new resource is a record resource", "Inquiries, contacts and the
// pipeline"): lists admins keep and everyone picks from; references to them in CSV by name, both ways.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';

const upload = (csv: string) => {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
  return form;
};

for (const dialect of DIALECTS) {
  describe(`stages, sources and services (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('a new install has the default pipeline; admins keep the lists, everyone reads them', async () => {
      const stages = (await app.get('/api/v1/stages?sort=position')).body.data as Json[];
      assert.deepEqual(
        stages.map((s) => [s.name, s.kind]),
        [
          ['New', 'open'],
          ['Contacted', 'open'],
          ['Qualified', 'open'],
          ['Won', 'won'],
          ['Lost', 'lost'],
        ],
      );
      const agent = await teammate(app, 'agent');
      const viewer = await teammate(app, 'viewer');
      assert.equal((await app.request('GET', '/api/v1/sources', { token: viewer.token })).status, 200);
      const refused = await app.request('POST', '/api/v1/sources', { json: { name: 'Fair' }, token: agent.token });
      assert.equal(refused.status, 403, refused.text);
      assert.equal((await app.post('/api/v1/sources', { name: 'Fair' })).status, 201);
      const twice = await app.post('/api/v1/sources', { name: 'FAIR' });
      assert.equal(twice.status, 422, twice.text);
      assert.ok(twice.body.errors.name, 'the name is taken, in another case too');
      const badKind = await app.post('/api/v1/stages', { name: 'Paused', position: 9, kind: 'sleeping' });
      assert.equal(badKind.status, 422);
      assert.ok(badKind.body.errors.kind);
      // A stage that inquiries are in cannot be deleted; it is archived instead.
      const inquiry = (await app.post('/api/v1/inquiries', { name: 'Staged' })).body.data;
      assert.equal(String(inquiry.stage_id), String(stages[0]!.id), 'a new inquiry starts in the first open stage');
      const second = await app.post('/api/v1/inquiries', { name: 'Staged', contact_id: inquiry.contact_id });
      assert.equal(second.status, 201, second.text);
      const contact = await app.get(`/api/v1/contacts/${inquiry.contact_id}`);
      assert.equal(contact.body.data.name, 'Staged', 'a contact made from the inquiry');
      assert.equal(contact.body.data.inquiries_count, 2, 'the contact counts its inquiries');
      assert.equal((await app.get('/api/v1/contacts')).body.data[0].inquiries_count, undefined, 'not in lists');
      const deleted = await app.request('DELETE', `/api/v1/stages/${stages[0]!.id}`);
      assert.equal(deleted.status, 409, deleted.text);
      const unknown = await app.post('/api/v1/inquiries', { name: 'Nowhere', source_id: 999_999 });
      assert.equal(unknown.status, 422);
      assert.ok(unknown.body.errors.source_id, 'a reference to no source is refused, naming the field');
    });

    test('an import takes names (stage, source, service) and emails (users); an export writes them back', async () => {
      const web = (await app.post('/api/v1/sources', { name: '=Web form' })).body.data;
      const repair = (await app.post('/api/v1/services', { name: 'Repair' })).body.data;
      const ada = await teammate(app, 'agent', 'Ada Import');
      const csv = [
        'name,email,source_id,service_id,stage_id,assigned_to',
        `One,one@example.com,'=web FORM,repair,Qualified,${ada.email.toUpperCase()}`,
        `Two,two@example.com,${web.id},${repair.id},,`,
        'Three,three@example.com,Billboard,,,',
        'Four,four@example.com,,,Sleeping,nobody@example.com',
      ].join('\n');
      const reply = await app.request('POST', '/api/v1/inquiries/import', { body: upload(csv) });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.created, 2);
      const failed = reply.body.failed as Json[];
      assert.deepEqual(
        failed.map((f) => [f.row, Object.keys(f.errors).sort()]),
        [
          [3, ['source_id']],
          [4, ['assigned_to', 'stage_id']],
        ],
      );
      assert.match(failed[0]!.errors.source_id[0], /no source "Billboard"/);
      const one = (await app.get('/api/v1/inquiries?filter[email]=one@example.com')).body.data[0];
      const qualified = (await app.get('/api/v1/stages?filter[name]=Qualified')).body.data[0];
      assert.deepEqual(
        [one.source_id, one.service_id, one.stage_id, one.assigned_to].map(String),
        [web.id, repair.id, qualified.id, ada.id].map(String),
      );

      const exported = await app.get(
        '/api/v1/inquiries/export?format=csv&sort=email&filter[email][in]=one@example.com,two@example.com',
      );
      assert.equal(exported.status, 200, exported.text);
      const [header, first] = parse(exported.text, { bom: true }) as string[][];
      const cell = (name: string) => first![header!.indexOf(name)];
      assert.equal(cell('source_id'), "'=Web form", 'a name that looks like a formula is neutralised');
      assert.equal(cell('service_id'), 'Repair');
      assert.equal(cell('stage_id'), 'Qualified');
      assert.equal(cell('assigned_to'), ada.email);
      assert.equal(cell('contact_id'), String(one.contact_id), 'a contact, named by no unique field, by its id');
    });
  });
}
