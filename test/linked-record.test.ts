// An inquiry's page beside its contact (issue 13: "the inquiry page links to its contact and offers to copy changed
// contact fields either way"): the differing fields, copied by a plain form, each copy a logged update.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

const fieldsOffered = (html: string) => [...html.matchAll(/name="fields" value="(\w+)"/g)].map((m) => m[1]);

for (const dialect of DIALECTS) {
  describe(`an inquiry beside its contact (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    test('the page links the contact, lists what differs, and copies the chosen fields either way', async () => {
      const contact = (await app.post('/api/v1/contacts', { name: 'Ada', email: 'ada@example.com', city: 'Oslo' })).body
        .data;
      const inquiry = (await app.post('/api/v1/inquiries', { name: 'Ada L', email: 'ADA@example.com', city: 'Bergen' }))
        .body.data;
      assert.equal(String(inquiry.contact_id), String(contact.id));
      const browser = await pageSignIn(app, app.admin);
      const page = await browser.get(`/inquiries/${inquiry.id}`);
      assert.match(page.text, new RegExp(`href="/contacts/${contact.id}"`), 'the contact is linked');
      assert.deepEqual(fieldsOffered(page.text), ['name', 'email', 'city']);

      const toContact = await browser.request(
        'POST',
        `/inquiries/${inquiry.id}/copy`,
        form({ _csrf: csrfOf(page.text), fields: 'city', direction: 'to_base' }),
      );
      assert.equal(toContact.status, 303);
      assert.equal((await app.get(`/api/v1/contacts/${contact.id}`)).body.data.city, 'Bergen');
      const [entry] = (await app.get(`/api/v1/contacts/${contact.id}/activity`)).body.data;
      assert.deepEqual([entry.action, entry.via, entry.changes.city], ['updated', 'web', ['Oslo', 'Bergen']]);

      const fromContact = await browser.request(
        'POST',
        `/inquiries/${inquiry.id}/copy`,
        form({ _csrf: csrfOf(page.text), fields: 'name', direction: 'from_base' }),
      );
      assert.equal(fromContact.status, 303);
      const after = (await app.get(`/api/v1/inquiries/${inquiry.id}`)).body.data;
      assert.deepEqual([after.name, after.email], ['Ada', 'ADA@example.com'], 'only the chosen field came back');
      assert.deepEqual(fieldsOffered((await browser.get(`/inquiries/${inquiry.id}`)).text), ['email']);

      const nothing = await browser.request(
        'POST',
        `/inquiries/${inquiry.id}/copy`,
        form({ _csrf: csrfOf(page.text), direction: 'to_base' }),
      );
      assert.equal(nothing.status, 303, 'nothing chosen: back with a message, nothing written');
      assert.equal((await app.get(`/api/v1/contacts/${contact.id}`)).body.data.email, 'ada@example.com');
    });

    test('an agent may copy into an inquiry of theirs but not into a contact that is not theirs', async () => {
      const agent = await teammate(app, 'agent');
      const contact = (await app.post('/api/v1/contacts', { name: 'Bo', phone: '+47 22 12 34 56' })).body.data;
      const inquiry = (
        await app.request('POST', '/api/v1/inquiries', {
          json: { name: 'Bo B', phone: '+4722123456' },
          token: agent.token,
        })
      ).body.data;
      assert.equal(String(inquiry.contact_id), String(contact.id), 'matched by the number in another format');
      const browser = await pageSignIn(app, agent);
      const page = await browser.get(`/inquiries/${inquiry.id}`);
      assert.doesNotMatch(page.text, /Copy to the contact/, 'not offered');
      assert.match(page.text, /Copy from the contact/);
      const refused = await browser.request(
        'POST',
        `/inquiries/${inquiry.id}/copy`,
        form({ _csrf: csrfOf(page.text), fields: 'name', direction: 'to_base' }),
      );
      assert.equal(refused.status, 403);
      assert.equal((await app.get(`/api/v1/contacts/${contact.id}`)).body.data.name, 'Bo');
    });
  });
}
