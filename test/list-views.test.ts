// Lists a team reads at a glance (issue 13, item 5), over HTTP on every
// dialect: the columns each user chooses (saved, used, reset; a stale stored
// choice read leniently), references shown by title, saved views (kept with
// their query and columns, listed to their owner, shared ones to everyone,
// someone else's personal ones to nobody — on the page and in GET
// /api/v1/views), the filter form derived from the declarations, and empty
// parameters dropped from a list's address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { csrfOf, pageSignIn } from './reliability/helpers/security.ts';

/** The text of an HTML fragment, tags removed and entities of the tests' values decoded. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

/** The list table's column headings, in order. */
function headings(html: string): string[] {
  const head = /<table class="list-table">[\s\S]*?<thead>([\s\S]*?)<\/thead>/.exec(html);
  assert.ok(head, `the page has a list table:\n${html.slice(0, 400)}`);
  return [...head[1]!.matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) =>
    textOf(m[1]!.replace(/<span class="visually-hidden">[\s\S]*?<\/span>/g, '')).replace(/ [▲▼]$/, ''),
  );
}

/** The list table's rows, each as the text of its cells. */
function rows(html: string): string[][] {
  const body = /<table class="list-table">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html);
  if (!body) return [];
  return [...body[1]!.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
    [...r[1]!.matchAll(/<td\b[^>]*>([\s\S]*?)<\/td>/g)].map((c) => textOf(c[1]!)),
  );
}

/** The saved views the list page offers: name → address. */
function savedViews(html: string): Map<string, string> {
  const nav = /<nav class="saved-views"[^>]*>([\s\S]*?)<\/nav>/.exec(html);
  if (!nav) return new Map();
  return new Map(
    [...nav[1]!.matchAll(/<a href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g)].map((m) => [
      textOf(m[2]!),
      m[1]!.replace(/&amp;/g, '&'),
    ]),
  );
}

/** Posts a form (repeated names allowed) with the CSRF token of `page`. */
async function post(client: Client, page: string, action: string, values: [string, string][]): Promise<Reply> {
  const shown = await client.get(page);
  assert.equal(shown.status, 200, `${page}: ${shown.text.slice(0, 300)}`);
  const body = new URLSearchParams([...values, ['_csrf', csrfOf(shown.text)]]).toString();
  return client.request('POST', action, {
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

const location = (reply: Reply) => reply.headers.get('location') ?? '';

for (const dialect of DIALECTS) {
  describe(`lists: columns, saved views, filters (${dialect})`, () => {
    let app: TestApp;
    let agent: Teammate;
    let other: Teammate;
    let agentPage: Client;
    let otherPage: Client;
    const sources: Record<string, number> = {};
    const as = (who: Teammate | null, method: string, path: string, json?: unknown) =>
      app.request(method, path, { token: who ? who.token : undefined, json });

    before(async () => {
      app = await startApp(dialect);
      agent = await teammate(app, 'agent', 'Agnes Agent');
      other = await teammate(app, 'agent', 'Otto Other');
      agentPage = await pageSignIn(app, agent);
      otherPage = await pageSignIn(app, other);
      for (const name of ['Website', 'Trade fair']) {
        const made = await app.post('/api/v1/sources', { name });
        assert.equal(made.status, 201, made.text);
        sources[name] = Number(made.body.data.id);
      }
      const people = [
        ['Ana Lisboa', 'Lisbon', 'Portugal', 'Website'],
        ['Bruno Porto', 'Porto', 'Portugal', 'Trade fair'],
        ['Chiara Roma', 'Rome', 'Italy', 'Website'],
        ['Dora Lisnave', 'Lisbon', 'Portugal', null],
      ] as const;
      for (const [name, city, country, source] of people) {
        const made = await app.post('/api/v1/contacts', {
          name,
          city,
          country,
          email: `${name.split(' ')[0]!.toLowerCase()}@example.com`,
          source_id: source ? sources[source] : null,
          detail: 'A long note about what they asked for. '.repeat(8),
        });
        assert.equal(made.status, 201, made.text);
      }
    });
    after(() => app?.close());

    test('the default columns are the declaration’s; references show their record’s title, never an id', async () => {
      const contacts = await agentPage.get('/contacts');
      assert.equal(contacts.status, 200);
      assert.deepEqual(headings(contacts.text), ['Name', 'Email', 'Phone', 'City', 'Country', 'Created at']);
      assert.equal(rows(contacts.text).length, 4);

      const made = await app.post('/api/v1/inquiries', { name: 'Printer order', assigned_to: agent.id, ticket_id: 77 });
      assert.equal(made.status, 201, made.text);
      const inquiries = await agentPage.get('/inquiries');
      assert.deepEqual(headings(inquiries.text), ['Name', 'Stage', 'Assigned to', 'Ticket', 'Created at']);
      const [row] = rows(inquiries.text);
      assert.equal(row![0], 'Printer order');
      assert.equal(row![1], 'New', 'the stage by its name');
      assert.equal(row![2], 'Agnes Agent', 'the assignee by name');
      assert.equal(row![3], '77');
    });

    test('a column choice is saved per user and resource, used, and reset to the default', async () => {
      const saved = await post(agentPage, '/contacts', '/contacts/columns', [
        ['columns', 'name'],
        ['columns', 'source_id'],
        ['columns', 'city'],
        ['back', 'sort=name'],
      ]);
      assert.equal(saved.status, 303, saved.text);
      assert.equal(location(saved), '/contacts?sort=name');
      const mine = await agentPage.get('/contacts?sort=name');
      assert.deepEqual(headings(mine.text), ['Name', 'Source', 'City']);
      assert.deepEqual(rows(mine.text)[0], ['Ana Lisboa', 'Website', 'Lisbon'], 'the source by its name');
      assert.deepEqual(rows(mine.text)[3], ['Dora Lisnave', '—', 'Lisbon']);
      assert.match(mine.text, /Your columns were saved: Name, Source, City\./);

      // Someone else's list, and the agent's other lists, keep their columns.
      assert.deepEqual(headings((await otherPage.get('/contacts')).text).length, 6);
      assert.deepEqual(headings((await agentPage.get('/inquiries')).text).length, 5);

      // A name that is no column (a hidden key, a typo) is refused, and the choice stays.
      const refused = await post(agentPage, '/contacts', '/contacts/columns', [
        ['columns', 'name'],
        ['columns', 'email_key'],
      ]);
      assert.equal(refused.status, 303);
      const after = await agentPage.get('/contacts');
      assert.match(after.text, /The columns were not saved: names no column of contacts: email_key/);
      assert.deepEqual(headings(after.text), ['Name', 'Source', 'City']);
      const none = await post(agentPage, '/contacts', '/contacts/columns', []);
      assert.equal(none.status, 303);
      assert.match((await agentPage.get('/contacts')).text, /needs at least one column/);

      // A stored choice naming fields since removed or hidden is read without them.
      await app.database.db
        .updateTable('list_columns')
        .set({ columns: 'email_key,nope,city,name' })
        .where('user_id', '=', BigInt(agent.id))
        .where('resource', '=', 'contacts')
        .execute();
      assert.deepEqual(headings((await agentPage.get('/contacts')).text), ['City', 'Name']);

      const reset = await post(agentPage, '/contacts', '/contacts/columns', [
        ['reset', '1'],
        ['back', ''],
      ]);
      assert.equal(reset.status, 303);
      assert.equal(location(reset), '/contacts');
      assert.deepEqual(headings((await agentPage.get('/contacts')).text), [
        'Name',
        'Email',
        'Phone',
        'City',
        'Country',
        'Created at',
      ]);

      // Each choice and the reset are in the audit log, with the columns before and after; the refusals are not.
      const audit = await app.get(`/api/v1/activity?filter[action]=columns_chosen&filter[actor]=${agent.id}`);
      assert.equal(audit.status, 200, audit.text);
      assert.deepEqual(
        audit.body.data.map((e: { resource: string; via: string; changes: unknown }) => [e.resource, e.via, e.changes]),
        [
          ['list_columns', 'web', { contacts: ['email_key,nope,city,name', null] }],
          ['list_columns', 'web', { contacts: [null, 'name,source_id,city'] }],
        ],
      );
    });

    test('a viewer chooses columns too; an agent may not choose the columns of users', async () => {
      const viewer = await pageSignIn(app, await teammate(app, 'viewer'));
      const saved = await post(viewer, '/contacts', '/contacts/columns', [['columns', 'email']]);
      assert.equal(saved.status, 303);
      assert.deepEqual(headings((await viewer.get('/contacts')).text), ['Email']);
      const users = await post(agentPage, '/contacts', '/users/columns', [['columns', 'email']]);
      assert.equal(users.status, 403);
    });

    test('a saved view keeps the query and columns; personal ones are their owner’s alone, shared ones everyone’s', async () => {
      // The page offers to save the list as it is: its query as the API reads it, and its columns.
      const page = await agentPage.get('/contacts?filter%5Bcity%5D%5Bcontains%5D=lis&sort=name&page=1');
      const query = /name="query" value="([^"]*)"/.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
      assert.equal(query, 'sort=name&filter%5Bcity%5D%5Bcontains%5D=lis', 'the page is not part of a view');
      const personal = await post(agentPage, '/contacts', '/contacts/views', [
        ['name', 'Lisbon people'],
        ['query', query!],
        ['columns', 'name,city'],
      ]);
      assert.equal(personal.status, 303, personal.text);
      const opened = location(personal);
      assert.equal(opened, '/contacts?sort=name&filter%5Bcity%5D%5Bcontains%5D=lis&columns=name%2Ccity');
      const shown = await agentPage.get(opened);
      assert.match(shown.text, /The view “Lisbon people” was saved\./);
      assert.deepEqual(headings(shown.text), ['Name', 'City']);
      assert.deepEqual(rows(shown.text), [
        ['Ana Lisboa', 'Lisbon'],
        ['Dora Lisnave', 'Lisbon'],
      ]);
      assert.equal(savedViews(shown.text).get('Lisbon people'), opened);
      assert.match(shown.text, /<a href="[^"]*" aria-current="page">Lisbon people<\/a>/, 'marked as the list shown');

      const shared = await post(agentPage, '/contacts', '/contacts/views', [
        ['name', 'Website leads'],
        ['query', `filter%5Bsource_id%5D=${sources.Website}`],
        ['columns', 'name,source_id'],
        ['shared', 'true'],
      ]);
      assert.equal(shared.status, 303, shared.text);
      const inquiryView = await post(agentPage, '/inquiries', '/inquiries/views', [['name', 'All mine']]);
      assert.equal(inquiryView.status, 303);

      // On the pages: the owner sees both; the other agent only the shared one; each list only its own.
      assert.deepEqual(
        [...savedViews((await agentPage.get('/contacts')).text).keys()],
        ['All contacts', 'Lisbon people', 'Website leads'],
      );
      const othersList = await otherPage.get('/contacts');
      assert.deepEqual([...savedViews(othersList.text).keys()], ['All contacts', 'Website leads']);
      assert.match(othersList.text, /shared by Agnes Agent/);
      assert.deepEqual([...savedViews((await otherPage.get('/inquiries')).text).keys()], ['All inquiries']);
      const websiteLeads = await otherPage.get(savedViews(othersList.text).get('Website leads')!);
      assert.deepEqual(headings(websiteLeads.text), ['Name', 'Source']);
      assert.deepEqual(
        rows(websiteLeads.text).map((r) => r[0]),
        ['Chiara Roma', 'Ana Lisboa'],
      );

      // In the API: the same rule for everyone but admins.
      const theirs = await as(other, 'GET', '/api/v1/views?sort=name');
      assert.equal(theirs.status, 200, theirs.text);
      assert.deepEqual(
        theirs.body.data.map((v: { name: string }) => v.name),
        ['Website leads'],
      );
      assert.equal(theirs.body.meta.total, 1);
      const personalId = (await as(agent, 'GET', '/api/v1/views?filter[name]=Lisbon%20people')).body.data[0].id;
      assert.equal((await as(other, 'GET', `/api/v1/views/${personalId}`)).status, 404);
      assert.equal((await as(other, 'PATCH', `/api/v1/views/${personalId}`, { shared: true })).status, 404);
      assert.equal((await as(other, 'DELETE', `/api/v1/views/${personalId}`)).status, 404);
      assert.equal((await as(other, 'GET', `/api/v1/views?filter[id]=${personalId}`)).body.data.length, 0);
      assert.equal((await as(agent, 'GET', `/api/v1/views/${personalId}`)).status, 200);
      const mine = await as(agent, 'GET', '/api/v1/views?sort=name');
      assert.deepEqual(
        mine.body.data.map((v: { name: string }) => v.name),
        ['All mine', 'Lisbon people', 'Website leads'],
      );
      const stored = mine.body.data.find((v: { name: string }) => v.name === 'Lisbon people');
      assert.equal(stored.query, 'sort=name&filter%5Bcity%5D%5Bcontains%5D=lis');
      assert.equal(stored.columns, 'name,city');
      assert.equal(stored.shared, false);
      assert.equal(stored.resource, 'contacts');
      assert.equal((await as(null, 'GET', '/api/v1/views')).body.meta.total, 3, 'an admin sees every view');

      // Only its owner (or an admin) deletes a view: from the list, which the page comes back to.
      const sharedId = (await as(other, 'GET', '/api/v1/views')).body.data[0].id;
      const refused = await post(otherPage, '/contacts', `/views/${sharedId}/delete`, [['next', '/contacts']]);
      assert.equal(refused.status, 403, 'a shared view is seen, not theirs to delete');
      assert.equal((await as(other, 'PATCH', `/api/v1/views/${sharedId}`, { name: 'Mine now' })).status, 403);
      const deleted = await post(agentPage, '/contacts', `/views/${personalId}/delete`, [
        ['next', '/contacts?sort=name'],
      ]);
      assert.equal(deleted.status, 303);
      assert.equal(location(deleted), '/contacts?sort=name');
      assert.deepEqual(
        [...savedViews((await agentPage.get('/contacts')).text).keys()],
        ['All contacts', 'Website leads'],
      );
      const away = await post(agentPage, '/contacts', `/views/${sharedId}/delete`, [['next', 'https://evil.example/']]);
      assert.equal(location(away), '/', 'only a path of this site is followed');
    });

    test('a view without a name is refused, with the reason, and nothing is saved', async () => {
      const before = (await as(agent, 'GET', '/api/v1/views')).body.meta.total;
      const refused = await post(agentPage, '/contacts', '/contacts/views', [
        ['name', '  '],
        ['query', 'sort=name'],
      ]);
      assert.equal(refused.status, 303);
      assert.equal(location(refused), '/contacts');
      assert.match((await agentPage.get('/contacts')).text, /The view was not saved: /);
      assert.equal((await as(agent, 'GET', '/api/v1/views')).body.meta.total, before);
    });

    test('the filter form has a control for every filterable field, derived from the declaration', async () => {
      const contacts = (await agentPage.get('/contacts')).text;
      for (const name of [
        'filter[name][contains]',
        'filter[email][contains]',
        'filter[city][contains]',
        'filter[country][contains]',
        'filter[detail][contains]',
        'filter[source_id]',
        'filter[service_id]',
        'filter[created_by]',
        'from[created_at]',
        'to[created_at]',
        'from[updated_at]',
      ])
        assert.ok(contacts.includes(`name="${name}"`), `the contacts filters have ${name}`);
      const sourceSelect = /<select id="filter-source_id"[\s\S]*?<\/select>/.exec(contacts)?.[0] ?? '';
      assert.match(sourceSelect, />Website<\/option>/, 'sources by name');
      const inquiries = (await agentPage.get('/inquiries')).text;
      for (const name of [
        'filter[stage_id]',
        'filter[assigned_to]',
        'filter[inquiry_status]',
        'filter[status]',
        'filter[inquiry_type]',
        'filter[ticket_id]',
        'from[ticket_date]',
      ])
        assert.ok(inquiries.includes(`name="${name}"`), `the inquiries filters have ${name}`);
      const stage = /<select id="filter-stage_id"[\s\S]*?<\/select>/.exec(inquiries)?.[0] ?? '';
      for (const name of ['New', 'Contacted', 'Won']) assert.match(stage, new RegExp(`>${name}</option>`));
      const state = /<select id="filter-inquiry_status"[\s\S]*?<\/select>/.exec(inquiries)?.[0] ?? '';
      assert.deepEqual(
        // `<option value>` is an empty value.
        [...state.matchAll(/<option value(?:="([^"]*)")?/g)].map((m) => m[1] ?? ''),
        ['', 'true', 'false', 'null'],
      );

      // Filtering by text contains, a reference and a date range, through the page.
      const filtered = await agentPage.get(
        `/contacts?filter%5Bcountry%5D%5Bcontains%5D=portu&filter%5Bsource_id%5D=${sources.Website}&sort=name`,
      );
      assert.deepEqual(
        rows(filtered.text).map((r) => r[0]),
        ['Ana Lisboa'],
      );
      const today = new Date().toISOString().slice(0, 10);
      // Every contact was made today (one of them for the inquiry of the first test).
      const all = (await as(agent, 'GET', '/api/v1/contacts')).body.meta.total;
      const ranged = await agentPage.get(`/contacts?from%5Bcreated_at%5D=${today}&to%5Bcreated_at%5D=${today}`);
      assert.equal(rows(ranged.text).length, all);
      const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
      assert.equal(rows((await agentPage.get(`/contacts?to%5Bcreated_at%5D=${yesterday}`)).text).length, 0);
      const viewQuery = /name="query" value="([^"]*)"/.exec(ranged.text)?.[1]?.replace(/&amp;/g, '&') ?? '';
      const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      assert.equal(
        decodeURIComponent(viewQuery),
        `filter[created_at][gte]=${today}&filter[created_at][lt]=${tomorrow}`,
        'a view keeps a date range as the API reads it',
      );
      // Opened from such a view, the date boxes show the range again.
      const reopened = await agentPage.get(`/contacts?${viewQuery}`);
      assert.match(reopened.text, new RegExp(`id="from-created_at"[^>]*value="${today}"`));
      assert.match(reopened.text, new RegExp(`id="to-created_at"[^>]*value="${today}"`));
      assert.equal(rows(reopened.text).length, all);
    });

    test('empty parameters are dropped from a list’s address; the API keeps its contract', async () => {
      const sent = await agentPage.get(
        '/contacts?search=&filter%5Bcity%5D=&filter%5Bname%5D%5Bcontains%5D=&from%5Bcreated_at%5D=&sort=name&per_page=25',
      );
      assert.equal(sent.status, 303);
      assert.equal(location(sent), '/contacts?sort=name&per_page=25');
      const bare = await agentPage.get('/contacts?search=&filter%5Bcity%5D=');
      assert.equal(bare.status, 303);
      assert.equal(location(bare), '/contacts');
      const kept = await agentPage.get('/contacts?filter%5Bcity%5D%5Bcontains%5D=Lis&search=');
      assert.equal(location(kept), '/contacts?filter%5Bcity%5D%5Bcontains%5D=Lis');
      assert.equal((await agentPage.get('/contacts?sort=name')).status, 200, 'a clean address is served');
      // The API reads what it is sent: an empty equality filter is a filter, an unknown parameter a 422.
      const api = await as(agent, 'GET', '/api/v1/contacts?filter[city]=');
      assert.equal(api.status, 200);
      assert.equal(api.body.meta.total, 0);
      assert.equal((await as(agent, 'GET', '/api/v1/contacts?columns=name')).status, 422);
    });
  });
}
