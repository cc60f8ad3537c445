// Create, read, update and delete over HTTP, with ETags, and every error the
// contract names for the records routes, on each database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { contact, inquiry, resources, user } from '../src/resources/index.ts';
import { startApp, type Reply, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

function assertProblem(reply: Reply, status: number, code: string) {
  assert.equal(reply.status, status, reply.text);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(reply.body.status, status);
  assert.equal(reply.body.code, code);
  for (const key of ['type', 'title', 'detail']) assert.equal(typeof reply.body[key], 'string', key);
}

for (const dialect of DIALECTS) {
  describe(`records CRUD (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    const total = async (resource = 'contacts') =>
      (await app.get(`/api/v1/${resource}?per_page=1`)).body.meta.total as number;

    test('create answers 201 with Location and ETag, and the record reads back the same', async () => {
      const service = await app.post('/api/v1/services', { name: 'Heat pumps' });
      assert.equal(service.status, 201, service.text);
      const created = await app.post('/api/v1/contacts', {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        city: 'London',
        service_id: service.body.data.id,
      });
      assert.equal(created.status, 201, created.text);
      const { data } = created.body;
      assert.equal(data.name, 'Ada Lovelace');
      assert.equal(String(data.service_id), String(service.body.data.id));
      assert.equal(data.phone, null, 'unsent fields are null');
      assert.match(data.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(data.created_at, data.updated_at);
      assert.equal(created.headers.get('location'), `/api/v1/contacts/${data.id}`);
      const etag = created.headers.get('etag');
      assert.match(etag ?? '', /^"[\w-]+"$/);

      const read = await app.get(created.headers.get('location')!);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body.data, data);
      assert.equal(read.headers.get('etag'), etag);
      // A record read on its own also counts the records that name it (a contact's inquiries_count).
      const counts = contact.referencedBy.flatMap(({ field }) => (field.countAs ? [field.countAs] : []));
      assert.deepEqual(
        Object.keys(read.body.data),
        [...contact.visible.map((f) => f.name), ...counts],
        'every visible field, in declaration order, then the counts',
      );

      const cached = await app.get(`/api/v1/contacts/${data.id}`, { 'if-none-match': etag! });
      assert.equal(cached.status, 304);
      assert.equal(cached.text, '');
    });

    test('PATCH changes only the fields sent and moves updated_at', async () => {
      const { body } = await app.post('/api/v1/contacts', { name: 'Grace', city: 'Arlington', country: 'US' });
      await new Promise((r) => setTimeout(r, 5));
      const patched = await app.patch(`/api/v1/contacts/${body.data.id}`, { city: 'New York', phone: '+1 555' });
      assert.equal(patched.status, 200);
      const data = patched.body.data;
      assert.deepEqual(
        { ...data, city: body.data.city, phone: null, updated_at: body.data.updated_at },
        body.data,
        'nothing else changed',
      );
      assert.equal(data.city, 'New York');
      assert.equal(data.phone, '+1 555');
      assert.ok(data.updated_at > body.data.updated_at, 'updated_at moved forward');
      assert.equal(data.created_at, body.data.created_at);
      assert.notEqual(patched.headers.get('etag'), null);
    });

    test('If-Match: the current ETag wins, a stale one gets 412 and changes nothing', async () => {
      const created = await app.post('/api/v1/contacts', { name: 'Katherine' });
      const path = `/api/v1/contacts/${created.body.data.id}`;
      const first = created.headers.get('etag')!;
      const ok = await app.patch(path, { city: 'Hampton' }, { 'if-match': first });
      assert.equal(ok.status, 200);
      const second = ok.headers.get('etag')!;
      assert.notEqual(second, first);

      const stale = await app.patch(path, { city: 'Lost update' }, { 'if-match': first });
      assertProblem(stale, 412, 'precondition_failed');
      const after = await app.get(path);
      assert.equal(after.body.data.city, 'Hampton');
      assert.equal(after.headers.get('etag'), second);

      assert.equal(
        (await app.patch(path, { city: 'Weak' }, { 'if-match': `W/${second}` })).status,
        412,
        'weak tags never match',
      );
      assert.equal(
        (await app.patch(path, { city: 'Listed' }, { 'if-match': `"other", ${second}` })).status,
        200,
        'a list may hold the current tag',
      );
      assert.equal((await app.patch(path, { city: 'Any' }, { 'if-match': '*' })).status, 200);
      assertProblem(await app.delete(path, { 'if-match': first }), 412, 'precondition_failed');
      assert.equal((await app.get(path)).status, 200, 'a stale delete deletes nothing');
    });

    test('delete answers 204, then 404; ids are never reused', async () => {
      const created = await app.post('/api/v1/contacts', { name: 'Temp' });
      const id = BigInt(created.body.data.id);
      const path = `/api/v1/contacts/${id}`;
      assert.equal((await app.delete(path)).status, 204);
      assertProblem(await app.get(path), 404, 'not_found');
      assertProblem(await app.delete(path), 404, 'not_found');
      assertProblem(await app.patch(path, { name: 'x' }), 404, 'not_found');
      const next = await app.post('/api/v1/contacts', { name: 'Next' });
      assert.ok(BigInt(next.body.data.id) > id, 'a new id is larger than the deleted one');
    });

    test('assigned_date fills in when an inquiry is assigned and no date is given', async () => {
      // Team members #4 and #5 to assign to (a reference names a record that exists).
      for (const n of [2, 3, 4, 5])
        await app.post('/api/v1/users', {
          name: `M${n}`,
          email: `m${n}@example.com`,
          password: 'a long enough passphrase 42',
        });
      const before = Date.now();
      const created = (await app.post('/api/v1/inquiries', { name: 'Lead', assigned_to: Number(app.admin.id) })).body
        .data;
      const stamped = Date.parse(created.assigned_date);
      assert.ok(stamped >= before - 1000 && stamped <= Date.now() + 1000, 'assigned_date is now');

      const given = (
        await app.post('/api/v1/inquiries', { name: 'Dated', assigned_to: 4, assigned_date: '2026-01-02' })
      ).body.data;
      assert.equal(given.assigned_date, '2026-01-02T00:00:00.000Z', 'a given date is kept');
      const unassigned = (await app.post('/api/v1/inquiries', { name: 'Open' })).body.data;
      assert.equal(unassigned.assigned_date, null);

      const path = `/api/v1/inquiries/${given.id}`;
      assert.equal(
        (await app.patch(path, { name: 'Renamed' })).body.data.assigned_date,
        given.assigned_date,
        'other edits keep it',
      );
      assert.equal(
        (await app.patch(path, { assigned_to: 4 })).body.data.assigned_date,
        given.assigned_date,
        'the same assignee keeps it',
      );
      const reassigned = (await app.patch(path, { assigned_to: 5 })).body.data;
      assert.ok(Date.parse(reassigned.assigned_date) >= before - 1000, 'a new assignee stamps it again');
    });

    test('errors are problem+json with the right status, and write nothing', async () => {
      const contacts = await total();
      const cases: [string, () => Promise<Reply>, number, string][] = [
        [
          'malformed JSON',
          () =>
            app.request('POST', '/api/v1/contacts', {
              body: '{"name": ',
              headers: { 'content-type': 'application/json' },
            }),
          400,
          'malformed_json',
        ],
        [
          'duplicate keys',
          () =>
            app.request('POST', '/api/v1/contacts', {
              body: '{"name":"a","name":"b"}',
              headers: { 'content-type': 'application/json' },
            }),
          400,
          'malformed_json',
        ],
        [
          'deeply nested JSON',
          () =>
            app.request('POST', '/api/v1/contacts', {
              body: '['.repeat(100_000),
              headers: { 'content-type': 'application/json' },
            }),
          400,
          'malformed_json',
        ],
        [
          'text/plain body',
          () => app.request('POST', '/api/v1/contacts', { body: 'name=x', headers: { 'content-type': 'text/plain' } }),
          415,
          'unsupported_media_type',
        ],
        [
          'form body',
          () =>
            app.request('POST', '/api/v1/contacts', {
              body: 'name=x',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
            }),
          415,
          'unsupported_media_type',
        ],
        [
          'body over 1 MiB',
          () => app.post('/api/v1/contacts', { detail: 'x'.repeat(1024 * 1024) }),
          413,
          'payload_too_large',
        ],
        ['array body', () => app.post('/api/v1/contacts', [{ name: 'x' }]), 422, 'validation_failed'],
        ['unknown id', () => app.get('/api/v1/contacts/999999'), 404, 'not_found'],
        ['non-numeric id', () => app.get('/api/v1/contacts/abc'), 404, 'not_found'],
        ['id beyond 64 bits', () => app.get('/api/v1/contacts/99999999999999999999'), 404, 'not_found'],
        ['unknown route', () => app.get('/api/v1/nothing'), 404, 'not_found'],
        [
          'no token and no session',
          () => app.request('GET', '/api/v1/contacts', { token: null }),
          401,
          'unauthenticated',
        ],
        [
          'a revoked or made-up token',
          () => app.request('POST', '/api/v1/contacts', { json: { name: 'x' }, token: 'lb_not-a-real-token' }),
          401,
          'unauthenticated',
        ],
      ];
      for (const [name, send, status, code] of cases) {
        const reply = await send();
        assert.ok(reply.status < 500, `${name}: no 5xx`);
        assertProblem(reply, status, code);
      }
      assert.equal(await total(), contacts, 'no rejected request wrote a record');
    });

    test('an empty POST body is refused: a contact needs a name, an email or a phone (errors on all three)', async () => {
      const before = await total();
      for (const body of [undefined, '{}', '{"name":"  ","email":null,"phone":""}']) {
        const reply = await app.request(
          'POST',
          '/api/v1/contacts',
          body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } },
        );
        assertProblem(reply, 422, 'validation_failed');
        assert.deepEqual(Object.keys(reply.body.errors).sort(), ['email', 'name', 'phone'], reply.text);
      }
      assert.equal(await total(), before, 'nothing was written');
    });

    test('GET /api/v1/schema describes the resources as declared: no hidden field but the password a client writes', async () => {
      const reply = await app.get('/api/v1/schema');
      assert.equal(reply.status, 200);
      const byName = Object.fromEntries(reply.body.data.map((r: { name: string }) => [r.name, r]));
      assert.deepEqual(
        Object.keys(byName),
        resources.map((r) => r.name),
      );
      const names = (r: { fields: { name: string }[] }) => r.fields.map((f) => f.name);
      // The derived match and sort keys are hidden: neither listed nor counted.
      for (const key of ['email_key', 'phone_key', 'name_sort'])
        for (const r of ['contacts', 'inquiries']) assert.ok(!names(byName[r]).includes(key), `${r}.${key}`);
      assert.deepEqual(
        names(byName.inquiries).slice(0, contact.visible.length),
        names(byName.contacts),
        'an inquiry starts with every contact field',
      );
      assert.deepEqual(names(byName.inquiries).slice(contact.visible.length), [
        'contact_id',
        'stage_id',
        'inquiry_country',
        'inquiry_status',
        'status',
        'inquiry_type',
        'assigned_to',
        'assigned_date',
        'ticket_id',
        'ticket_date',
        'first_response_at',
        'due_at',
      ]);
      assert.ok(names(byName.users).includes('frist_name'), 'frist_name keeps its spelling');
      for (const secret of ['remember_token', 'two_factor_secret', 'two_factor_recovery_codes'])
        assert.ok(!reply.text.includes(secret), secret);
      // Creating a user may take a password (else the account is invited): listed, write-only, never read back.
      const password = byName.users.fields.find((f: { name: string }) => f.name === 'password');
      assert.deepEqual(
        [password.write_only, password.required, password.nullable, password.input],
        [true, false, false, 'password'],
      );
      assert.ok(
        byName.users.fields
          .filter((f: { name: string }) => f.name !== 'password')
          .every((f: { write_only: boolean }) => !f.write_only),
      );
      assert.deepEqual(byName.contacts.needs_one_of, ['name', 'email', 'phone']);
      assert.deepEqual(byName.inquiries.needs_one_of, ['name', 'email', 'phone']);
      const ticket = byName.inquiries.fields.find((f: { name: string }) => f.name === 'ticket_id');
      assert.deepEqual(
        [ticket.type, ticket.input, ticket.rules, ticket.in_index],
        ['big integer', 'number', ['nullable'], true],
      );
      const name = byName.contacts.fields.find((f: { name: string }) => f.name === 'name');
      assert.deepEqual(name.rules, ['nullable', 'string', 'max:255']);
      const id = byName.contacts.fields.find((f: { name: string }) => f.name === 'id');
      assert.deepEqual(
        [id.primary, id.searchable, id.fillable, id.in_form, id.in_index, id.in_view],
        [true, false, false, false, false, false],
      );
      assert.equal(byName.users.fields.length, user.visible.length + 1, 'the visible fields and the password');
      assert.equal(byName.inquiries.fields.length, inquiry.visible.length);
    });
  });
}
