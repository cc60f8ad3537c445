// Tasks (follow-ups) over HTTP, on each database: the API gives a new task to the one who adds it unless another is
// named; an inquiry's page lists its tasks and adds one with its title and due time (the link filled in); "Done" is
// one click, an update in the task's activity, and its message offers undo; the dashboard's "My tasks" groups my
// open tasks as overdue, today and upcoming, and leaves out what is done or someone else's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

const HOUR = 60 * 60 * 1000;
const fromHtml = (s: string) => s.replaceAll('&amp;', '&');
/** The text of the `<section id=…>` of a page. */
const section = (html: string, id: string) => {
  const m = new RegExp(`<section[^>]*id="${id}"[\\s\\S]*?</section>`).exec(html);
  assert.ok(m, `the page has the section #${id}`);
  return m[0];
};

for (const dialect of DIALECTS) {
  describe(`tasks (${dialect})`, () => {
    let app: TestApp;
    let agent: Teammate;
    let agentPage: Client;
    let inquiryId: string;

    const post = async (client: Client, path: string, fields: Record<string, string>, from: string) => {
      const csrf = csrfOf((await client.get(from)).text);
      const f = form({ _csrf: csrf, ...fields });
      return client.request('POST', path, { body: f.body, headers: f.headers });
    };

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn' } });
      agent = await teammate(app, 'agent', 'Tara Tasker');
      agentPage = await pageSignIn(app, agent);
      const made = await app.request('POST', '/api/v1/inquiries', {
        json: { name: 'Quentin Query', email: 'quentin@example.org', assigned_to: agent.id },
        token: agent.token,
      });
      assert.equal(made.status, 201, made.text);
      inquiryId = String(made.body.data.id);
    });
    after(() => app?.close());

    test('a task without an assignee is the one who adds it’s; an admin may give it to someone else', async () => {
      const own = await app.request('POST', '/api/v1/tasks', {
        json: { title: 'Call back', inquiry_id: Number(inquiryId) },
        token: agent.token,
      });
      assert.equal(own.status, 201, own.text);
      assert.equal(String(own.body.data.assigned_to), String(agent.id));
      assert.equal(own.body.data.done_at, null);
      const given = await app.post('/api/v1/tasks', { title: 'Send the offer', assigned_to: agent.id });
      assert.equal(given.status, 201, given.text);
      assert.equal(String(given.body.data.assigned_to), String(agent.id));
      const nameless = await app.post('/api/v1/tasks', { title: '' });
      assert.equal(nameless.status, 422);
      assert.ok(nameless.body.errors.title, nameless.text);
    });

    test('the inquiry’s page adds a task with its title and due time, linked to the inquiry', async () => {
      const page = await agentPage.get(`/inquiries/${inquiryId}`);
      assert.equal(page.status, 200);
      const panel = section(page.text, 'tasks-inquiry_id');
      assert.match(panel, /action="\/inquiries\/\d+\/tasks"/);
      assert.match(panel, /name="title"/);
      assert.match(panel, /name="due_at"/);

      // The date box sends a day.
      const due = new Date(Date.now() + 3 * 24 * HOUR).toISOString().slice(0, 10);
      const added = await post(
        agentPage,
        `/inquiries/${inquiryId}/tasks`,
        { title: 'Send the brochure', due_at: due },
        `/inquiries/${inquiryId}`,
      );
      assert.equal(added.status, 303, added.text);
      assert.equal(added.headers.get('location'), `/inquiries/${inquiryId}#tasks-inquiry_id`);
      const listed = await app.get(`/api/v1/tasks?filter[inquiry_id]=${inquiryId}&search=brochure`);
      assert.equal(listed.body.data.length, 1, listed.text);
      const task = listed.body.data[0];
      assert.equal(String(task.assigned_to), String(agent.id));
      assert.equal(task.due_at, `${due}T00:00:00.000Z`);
      const shown = await agentPage.get(`/inquiries/${inquiryId}`);
      assert.match(shown.text, /Send the brochure was added\./);
      assert.match(section(shown.text, 'tasks-inquiry_id'), /Send the brochure/);

      // Without a title nothing is added, and the message names the field.
      const refused = await post(agentPage, `/inquiries/${inquiryId}/tasks`, { title: '' }, `/inquiries/${inquiryId}`);
      assert.equal(refused.status, 303);
      assert.match((await agentPage.get(`/inquiries/${inquiryId}`)).text, /The task was not added: Title /);
      const after = await app.get(`/api/v1/tasks?filter[inquiry_id]=${inquiryId}`);
      assert.equal(after.body.data.filter((t: { title: string }) => t.title === '').length, 0);
    });

    test('Done is one click: logged in the task’s activity, and undone from its message', async () => {
      const made = await app.request('POST', '/api/v1/tasks', {
        json: { title: 'Confirm the date', inquiry_id: Number(inquiryId) },
        token: agent.token,
      });
      const id = String(made.body.data.id);
      const back = `/inquiries/${inquiryId}#tasks-inquiry_id`;
      const done = await post(agentPage, `/tasks/${id}/done`, { back }, `/inquiries/${inquiryId}`);
      assert.equal(done.status, 303, done.text);
      assert.equal(done.headers.get('location'), back);
      const read = await app.get(`/api/v1/tasks/${id}`);
      assert.ok(Date.parse(read.body.data.done_at) > Date.now() - HOUR, read.text);
      const activity = await app.get(`/api/v1/tasks/${id}/activity`);
      assert.equal(activity.body.data[0].action, 'updated');
      assert.deepEqual(Object.keys(activity.body.data[0].changes), ['done_at']);
      assert.equal(activity.body.data[0].changes.done_at[0], null);

      // The message offers to take it back; the page shows it done, without a Done button.
      const page = await agentPage.get(`/inquiries/${inquiryId}`);
      assert.match(page.text, /Confirm the date is done\./);
      const undo =
        /<form method="post" action="([^"]+)" class="inline undo">[\s\S]*?name="change_id" value="(\d+)"/.exec(
          page.text,
        );
      assert.ok(undo, 'an undo button');
      assert.doesNotMatch(section(page.text, 'tasks-inquiry_id'), new RegExp(`action="/tasks/${id}/done"`));
      const undone = await post(
        agentPage,
        fromHtml(undo[1]!),
        { change_id: undo[2]!, back },
        `/inquiries/${inquiryId}`,
      );
      assert.equal(undone.status, 303, undone.text);
      assert.equal(undone.headers.get('location'), back);
      assert.equal((await app.get(`/api/v1/tasks/${id}`)).body.data.done_at, null);

      // Someone else's task is not theirs to close.
      const other = await teammate(app, 'agent', 'Otto Other');
      const theirs = await app.post('/api/v1/tasks', {
        title: 'Not yours',
        assigned_to: other.id,
        created_by: other.id,
      });
      assert.equal(theirs.status, 201, theirs.text);
      const refused = await post(agentPage, `/tasks/${theirs.body.data.id}/done`, { back }, `/inquiries/${inquiryId}`);
      assert.equal(refused.status, 403);
      assert.equal((await app.get(`/api/v1/tasks/${theirs.body.data.id}`)).body.data.done_at, null);
    });

    test('the dashboard’s "My tasks": overdue, today and upcoming; not what is done or someone else’s', async () => {
      const me = await teammate(app, 'agent', 'Dana Dashboard');
      const mePage = await pageSignIn(app, me);
      const at = (ms: number) => new Date(Date.now() + ms).toISOString();
      const endOfToday = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR + 24 * HOUR;
      const todayLater = Math.min(Date.now() + 60_000, endOfToday - 1000);
      const make = async (title: string, values: Record<string, unknown> = {}) => {
        const made = await app.request('POST', '/api/v1/tasks', { json: { title, ...values }, token: me.token });
        assert.equal(made.status, 201, made.text);
        return String(made.body.data.id);
      };
      await make('Late one', { due_at: at(-2 * HOUR) });
      await make('Soon one', { due_at: new Date(todayLater).toISOString() });
      await make('Next week', { due_at: at(7 * 24 * HOUR) });
      await make('Whenever');
      // A day without a time is due by that day's end: today's is for today, yesterday's overdue.
      const day = (offset: number) => new Date(Date.now() + offset * 24 * HOUR).toISOString().slice(0, 10);
      await make('By tonight', { due_at: day(0) });
      await make('Yesterday’s', { due_at: day(-1) });
      await make('Finished', { due_at: at(-HOUR), done_at: at(-HOUR / 2) });
      await app.post('/api/v1/tasks', { title: 'Someone else’s', assigned_to: agent.id, due_at: at(-HOUR) });

      const page = await mePage.get('/');
      assert.equal(page.status, 200);
      const mine = section(page.text, 'my-tasks');
      const group = (name: string) => {
        const m = new RegExp(
          `<h3>${name} <span class="muted">\\((\\d+)\\)</span></h3><ul class="task-list">([\\s\\S]*?)</ul>`,
        ).exec(mine);
        return m ? [...m[2]!.matchAll(/<a href="\/tasks\/\d+">([^<]+)<\/a>/g)].map((x) => x[1]) : [];
      };
      assert.match(mine, /My tasks <span class="muted">\(6 open\)<\/span>/);
      assert.deepEqual(group('Overdue').sort(), ['Late one', 'Yesterday’s']);
      assert.deepEqual(group('Today').sort(), todayLater > Date.now() ? ['By tonight', 'Soon one'] : ['By tonight']);
      assert.deepEqual(group('Upcoming').sort(), ['Next week', 'Whenever']);
      assert.doesNotMatch(mine, /Finished|Someone else/);
      assert.equal([...mine.matchAll(/action="\/tasks\/\d+\/done"/g)].length, 6, 'each open one has its Done button');
    });
  });
}
