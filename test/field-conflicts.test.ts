// Field-level conflicts on the edit pages, over HTTP on each database: a form
// sends only what its user changed (read against what it showed), so two
// people editing different fields of one record both keep their change; only
// a field both changed, differently, shows the conflict page, which names it;
// "save my version over theirs" then writes only that user's fields.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { form, pageSignIn } from './reliability/helpers/security.ts';

const unescapeHtml = (s: string) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
const hidden = (html: string, name: string) =>
  unescapeHtml(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '');

/** Opens the edit page as a browser would, and answers a function that saves it with some fields changed. */
async function openEdit(client: Client, path: string) {
  const page = await client.get(`${path}/edit`);
  assert.equal(page.status, 200, page.text);
  const shown = JSON.parse(hidden(page.text, '_was')) as Record<string, string>;
  const base = {
    _csrf: hidden(page.text, '_csrf'),
    _etag: hidden(page.text, '_etag'),
    _was: hidden(page.text, '_was'),
  };
  // A browser sends every control: what it showed, with the user's edits.
  return (changes: Record<string, string>) => client.request('POST', path, form({ ...shown, ...changes, ...base }));
}

for (const dialect of DIALECTS) {
  describe(`field-level conflicts on the edit pages (${dialect})`, () => {
    let app: TestApp;
    let ann: Client;
    let bob: Client;
    before(async () => {
      app = await startApp(dialect);
      const who = { email: 'bob@example.org', password: 'bob has a passphrase 1' };
      assert.equal((await app.post('/api/v1/users', { name: 'Bob', role: 'admin', ...who })).status, 201);
      ann = await pageSignIn(app, app.admin);
      bob = await pageSignIn(app, who);
    });
    after(() => app.close());

    const contact = async () => {
      const made = await app.post('/api/v1/contacts', {
        name: 'Shared',
        city: 'Lisbon',
        phone: '+351 1',
        detail: 'a\nb',
      });
      return `/contacts/${made.body.data.id}`;
    };

    test('two people change different fields: both changes are kept, each logged as only its own field', async () => {
      const path = await contact();
      const [annSaves, bobSaves] = [await openEdit(ann, path), await openEdit(bob, path)];
      assert.equal((await annSaves({ city: 'Porto' })).status, 303);
      const second = await bobSaves({ phone: '+351 2' });
      assert.equal(second.status, 303, second.text.slice(0, 300));
      const record = (await app.get(`/api/v1${path}`)).body.data;
      assert.deepEqual([record.city, record.phone, record.detail], ['Porto', '+351 2', 'a\nb']);
      const [bobs, anns] = (await app.get(`/api/v1${path}/activity`)).body.data;
      assert.deepEqual([anns.actor.name, anns.changes], ['Admin', { city: ['Lisbon', 'Porto'] }]);
      assert.deepEqual([bobs.actor.name, bobs.changes], ['Bob', { phone: ['+351 1', '+351 2'] }]);
    });

    test('the same field changed by both: the conflict page names it and writes nothing; "mine over theirs" writes only mine', async () => {
      const path = await contact();
      const [annSaves, bobSaves] = [await openEdit(ann, path), await openEdit(bob, path)];
      assert.equal((await annSaves({ city: 'Porto', phone: '+351 9' })).status, 303);
      const clash = await bobSaves({ city: 'Faro', detail: 'bob\nnotes' });
      assert.equal(clash.status, 409, clash.text.slice(0, 300));
      assert.match(clash.text, /You both changed City\./);
      const untouched = (await app.get(`/api/v1${path}`)).body.data;
      assert.deepEqual([untouched.city, untouched.detail], ['Porto', 'a\nb'], 'nothing of Bob was written');
      // The conflict page's own form: Bob's fields only, against Ann's version.
      const own = /<form method="post" action="\/contacts\/\d+">([\s\S]*?)<\/form>/.exec(clash.text)![1]!;
      const fields = Object.fromEntries(
        [...own.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
          m[1]!,
          unescapeHtml(m[2]!),
        ]),
      );
      assert.deepEqual(
        Object.keys(fields)
          .filter((k) => !k.startsWith('_'))
          .sort(),
        ['city', 'detail'],
      );
      assert.equal((await bob.request('POST', path, form(fields))).status, 303);
      const saved = (await app.get(`/api/v1${path}`)).body.data;
      assert.deepEqual([saved.city, saved.detail, saved.phone], ['Faro', 'bob\nnotes', '+351 9'], "Ann's phone stays");
    });

    test('the same change by both is no conflict', async () => {
      const path = await contact();
      const [annSaves, bobSaves] = [await openEdit(ann, path), await openEdit(bob, path)];
      assert.equal((await annSaves({ city: 'Braga' })).status, 303);
      assert.equal((await bobSaves({ city: 'Braga' })).status, 303);
      assert.equal((await app.get(`/api/v1${path}`)).body.data.city, 'Braga');
    });
  });
}
