// Declared references, over HTTP on each database: a reference to a missing
// record is a 422 naming the field (never a 500), ON DELETE rules hold, and the
// pages show a reference by its title and a record's has-many panels.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { authorizePick } from '../src/records/operations.ts';
import { resources, user } from '../src/resources/index.ts';
import { defineResource } from '../src/schema/resource.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { sampler } from './helpers/samples.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

/** Every reference field of every resource, from the declarations. */
const references = resources.flatMap((r) =>
  r.fields.filter((f) => f.target && f.fillable).map((f) => ({ resource: r, field: f })),
);

test('the declarations hold references', () => {
  assert.ok(references.length >= 2, references.map((r) => r.field.name).join());
});

test('an admin-only resource that no agent resource references is not picked by agents', () => {
  const ledger = defineResource({
    name: 'ledgers',
    singular: 'ledger',
    label: 'Ledger',
    access: 'admin',
    fields: { id: { kind: 'bigInteger', primary: true }, name: { kind: 'string', max: 50 } },
  });
  const ctx = { database: undefined as never, actor: { id: 2n, role: 'agent' as const } };
  assert.throws(
    () => authorizePick(ctx, ledger),
    (e: { status?: number }) => e.status === 403,
  );
  assert.equal(authorizePick(ctx, user).id, 2n, 'users are referenced by contacts, which agents use');
});

for (const dialect of DIALECTS) {
  describe(`references (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    for (const { resource, field } of references) {
      test(`${resource.name}.${field.name} naming no ${field.target!.singular} is a 422 on the field, on create and update`, async () => {
        // A valid record of the resource (what it references exists), then the one reference made wrong.
        const valid = await sampler((path, body) => app.post(path, body), new Map([[user, app.admin.id]])).input(
          resource,
          1,
          // Per field: a resource with two references (an intake form's source and service) makes two records.
          `refcheck${field.name.replaceAll('_', '')}`,
        );
        const body = { ...valid, [field.name]: 987_654 };
        const created = await app.post(`/api/v1/${resource.name}`, body);
        assert.equal(created.status, 422, created.text);
        assert.match(created.body.errors[field.name][0], new RegExp(`no ${field.target!.singular}`));
        const ok = await app.post(
          `/api/v1/${resource.name}`,
          field.required ? valid : { ...valid, [field.name]: null },
        );
        assert.equal(ok.status, 201, ok.text);
        const patched = await app.patch(`/api/v1/${resource.name}/${ok.body.data.id}`, { [field.name]: 987_654 });
        assert.equal(patched.status, 422, patched.text);
        assert.deepEqual(Object.keys(patched.body.errors), [field.name]);
      });
    }

    test('a picker lists titles to whoever may pick them: an agent picks users (contacts reference them), a stranger nobody', async () => {
      const agent = await app.post('/api/v1/users', {
        name: 'Ann Agent',
        email: 'ann@example.org',
        password: 'a long enough passphrase 42',
        role: 'agent',
      });
      assert.equal(agent.status, 201, agent.text);
      const browser = await pageSignIn(app, { email: 'ann@example.org', password: 'a long enough passphrase 42' });
      const users = await browser.request('GET', '/users/choices?q=ann', { headers: { 'hx-request': 'true' } });
      assert.equal(users.status, 200, users.text);
      assert.match(users.text, /<option value="\d+">Ann Agent<\/option>/);
      assert.doesNotMatch(users.text, /Admin/, 'narrowed by the search');
      assert.equal((await browser.get('/users')).status, 403, 'yet the agent does not manage users');
      const stranger = await app.client().request('GET', '/users/choices', { headers: { 'hx-request': 'true' } });
      assert.ok(
        stranger.status === 401 || stranger.status === 303 || stranger.status === 302,
        `stranger: ${stranger.status}`,
      );
    });

    test('deleting a referenced user clears the references (ON DELETE SET NULL), and the pages show titles and has-many panels', async () => {
      const member = await app.post('/api/v1/users', {
        name: 'Rita Ref',
        email: 'rita@example.org',
        password: 'a long enough passphrase 42',
      });
      assert.equal(member.status, 201, member.text);
      const id = member.body.data.id;
      const inquiry = await app.post('/api/v1/inquiries', { name: 'Panel inquiry', assigned_to: id });
      assert.equal(inquiry.status, 201, inquiry.text);

      const browser = await pageSignIn(app, app.admin);
      const listed = await browser.get('/inquiries');
      assert.match(listed.text, /Rita Ref/, 'the list shows the assignee by name');
      const page = await browser.get(`/users/${id}`);
      assert.equal(page.status, 200);
      const panel =
        /<section class="card has-many"[^>]*aria-label="Inquiries · Assigned to">([\s\S]*?)<\/section>/.exec(page.text);
      assert.match(panel?.[1] ?? '', /\(1\)[\s\S]*Panel inquiry/, 'the user page lists the inquiries assigned to them');

      const theirs = await app.post('/api/v1/contacts', { name: 'Made by Rita', created_by: id });
      assert.equal(theirs.status, 201, theirs.text);
      // Work still assigned moves to someone in the same step, or the delete is refused, saying what is held.
      const refused = await app.delete(`/api/v1/users/${id}`);
      assert.equal(refused.status, 409, refused.text);
      assert.deepEqual([refused.body.code, /1 inquiry/.test(refused.body.detail)], ['has_assignments', true]);
      assert.equal((await app.delete(`/api/v1/users/${id}?reassign_to=${id}`)).status, 422, 'not to themselves');
      assert.equal((await app.delete(`/api/v1/users/${id}?reassign_to=${app.admin.id}`)).status, 204);
      const after = await app.get(`/api/v1/inquiries/${inquiry.body.data.id}`);
      assert.equal(String(after.body.data.assigned_to), String(app.admin.id), 'reassigned');
      const made = await app.get(`/api/v1/contacts/${theirs.body.data.id}`);
      assert.equal(made.body.data.created_by, null, 'ON DELETE SET NULL');
      const [moved] = (await app.get(`/api/v1/inquiries/${inquiry.body.data.id}/activity`)).body.data;
      assert.deepEqual(moved.changes.assigned_to.map(String), [String(id), String(app.admin.id)], 'logged');
    });
  });
}
