// Notifications over HTTP, on each database, with a real SMTP peer: work assigned to someone by someone else (a
// create, an update, a bulk action) and a mention in a note tell that person, in the list and by mail (with a stable
// Message-ID); nobody is told of what they did themselves; a task coming due tells its assignee once; marking read
// (one, all, or by opening the record) empties the bell; a mail server that is away loses no mail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { freePort } from './helpers/process.ts';
import { type MailCatcher, type ReceivedMail, startMailCatcher } from './helpers/smtp.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const APP_URL = 'https://desk.example.test';

for (const dialect of DIALECTS) {
  describe(`notifications (${dialect})`, () => {
    let app: TestApp;
    let smtp: MailCatcher;
    let agent: Teammate;
    let quiet: Teammate;

    const listOf = async (who: Teammate) => {
      const res = await app.request('GET', '/api/v1/me/notifications', { token: who.token });
      assert.equal(res.status, 200, res.text);
      return res.body as {
        data: { id: number; kind: string; read: boolean; record: { resource: string; id: number; title: string } }[];
        meta: { unread: number; next_cursor: string | null };
      };
    };
    /** Notification mails to one person (not the mail that asks a new account to confirm its address). */
    const isNotice = (who: Teammate) => (m: ReceivedMail) =>
      m.to.includes(who.email.toLowerCase()) && !/Confirm your/.test(m.subject);
    const mailsTo = (who: Teammate, count = 1) => smtp.waitFor(isNotice(who), { count, timeoutMs: 10_000 });

    before(async () => {
      smtp = await startMailCatcher();
      app = await startApp(dialect, {
        env: { SMTP_URL: smtp.url, APP_URL, SCHEDULER_TICK_MS: '100', LOG_LEVEL: 'warn' },
      });
      agent = await teammate(app, 'agent', 'Nora Notified');
      quiet = await teammate(app, 'agent', 'Quinn Quiet');
      const off = await app.request('PATCH', '/api/v1/me', { json: { notify_email: false }, token: quiet.token });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.body.data.notify_email, false);
    });
    after(async () => {
      await app?.close();
      await smtp?.close();
    });

    test('an inquiry assigned by someone else tells its assignee, in the list and by mail; their own does not', async () => {
      const made = await app.post('/api/v1/inquiries', { name: 'Assigned Annie', assigned_to: agent.id });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id;
      const list = await listOf(agent);
      assert.equal(list.meta.unread, 1);
      assert.deepEqual(
        list.data.map((n) => [n.kind, n.read, n.record.resource, String(n.record.id), n.record.title]),
        [['assigned', false, 'inquiries', String(id), 'Assigned Annie']],
      );
      const [mail] = await mailsTo(agent);
      assert.ok(mail, 'the assignee got a mail');
      assert.match(mail.subject, /Assigned Annie/);
      assert.ok(mail.text.includes(`${APP_URL}/inquiries/${id}`), mail.text);
      assert.equal(mail.headers.get('message-id'), `<notification-${list.data[0]!.id}@desk.example.test>`);
      // Taking one's own inquiry, or assigning it to oneself, tells nobody.
      const own = await app.request('POST', '/api/v1/inquiries', {
        json: { name: 'Self-assigned Sam', assigned_to: agent.id },
        token: agent.token,
      });
      assert.equal(own.status, 201, own.text);
      assert.equal((await listOf(agent)).data.length, 1, 'nothing about what they did themselves');
      assert.equal(
        (await app.request('GET', '/api/v1/me/notifications')).body.data.length,
        0,
        'the admin was told nothing',
      );
    });

    test('an update and a bulk action that give work tell the new assignee; one who asked for no mail gets none', async () => {
      const a = await app.post('/api/v1/inquiries', { name: 'Moved Mo' });
      const b = await app.post('/api/v1/inquiries', { name: 'Bulk Bea' });
      const c = await app.post('/api/v1/inquiries', { name: 'Bulk Cy' });
      const moved = await app.request('PATCH', `/api/v1/inquiries/${a.body.data.id}`, {
        json: { assigned_to: quiet.id },
      });
      assert.equal(moved.status, 200, moved.text);
      const bulk = await app.post('/api/v1/inquiries/bulk', {
        ids: [b.body.data.id, c.body.data.id],
        action: 'update',
        changes: { assigned_to: agent.id },
      });
      assert.equal(bulk.status, 200, bulk.text);
      const quietList = await listOf(quiet);
      assert.deepEqual(
        quietList.data.map((n) => [n.kind, n.record.title]),
        [['assigned', 'Moved Mo']],
      );
      const titles = (await listOf(agent)).data.filter((n) => n.kind === 'assigned').map((n) => n.record.title);
      assert.deepEqual(titles.slice(0, 2).sort(), ['Bulk Bea', 'Bulk Cy']);
      // Mails go oldest first: once the bulk action's mails to the agent have come, Quinn's would have too.
      assert.equal((await mailsTo(agent, 3)).length, 3);
      assert.equal(smtp.mails.filter(isNotice(quiet)).length, 0, 'no mail for Quinn');
    });

    test('an import tells nobody: the work it brings is not news', async () => {
      const before = (await listOf(agent)).data.length;
      const form = new FormData();
      form.append('file', new Blob([`name,assigned_to\nImported Ida,${agent.email}\n`], { type: 'text/csv' }), 'a.csv');
      const imported = await app.request('POST', '/api/v1/inquiries/import', { body: form });
      assert.equal(imported.status, 200, imported.text);
      const found = await app.get(`/api/v1/inquiries?search=${encodeURIComponent('Imported Ida')}`);
      assert.equal(String(found.body.data[0]?.assigned_to), String(agent.id), 'imported, assigned');
      assert.equal((await listOf(agent)).data.length, before);
    });

    test('a note that mentions a teammate tells them, about the inquiry; the writer mentioning themselves is not told', async () => {
      const made = await app.post('/api/v1/inquiries', { name: 'Mentioned Mia' });
      const id = made.body.data.id;
      const note = await app.request('POST', `/api/v1/inquiries/${id}/notes`, {
        json: { body: `@${agent.email} could you call her? cc @NoraNotified` },
        token: quiet.token,
      });
      assert.equal(note.status, 201, note.text);
      const told = (await listOf(agent)).data.filter((n) => n.kind === 'mentioned');
      assert.deepEqual(
        told.map((n) => [n.record.resource, String(n.record.id), n.record.title]),
        [['inquiries', String(id), 'Mentioned Mia']],
        'one notification, though named twice',
      );
      const self = await app.request('POST', `/api/v1/inquiries/${id}/notes`, {
        json: { body: '@QuinnQuiet reminder to myself' },
        token: quiet.token,
      });
      assert.equal(self.status, 201, self.text);
      assert.equal((await listOf(quiet)).data.filter((n) => n.kind === 'mentioned').length, 0);
    });

    test('a task coming due tells its assignee once, whatever the number of scheduler runs', async () => {
      const task = await app.post('/api/v1/tasks', {
        title: 'Send the quote',
        assigned_to: agent.id,
        due_at: new Date(Date.now() - 60_000).toISOString(),
      });
      assert.equal(task.status, 201, task.text);
      const id = String(task.body.data.id);
      const dueOf = async () =>
        (await listOf(agent)).data.filter((n) => n.kind === 'task_due' && String(n.record.id) === id);
      const end = Date.now() + 10_000;
      while ((await dueOf()).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      // Several more runs of the scheduler (every 100 ms here) add nothing.
      await new Promise((r) => setTimeout(r, 600));
      const due = await dueOf();
      assert.deepEqual(
        due.map((n) => n.record.title),
        ['Send the quote'],
      );
      const mails = await smtp.waitFor((m) => /Send the quote/.test(m.subject) && /is due/.test(m.subject));
      assert.equal(mails.length, 1);
      // Done tasks and tasks not yet due tell nobody.
      const later = await app.post('/api/v1/tasks', {
        title: 'Next week',
        assigned_to: agent.id,
        due_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      });
      assert.equal(later.status, 201);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal((await listOf(agent)).data.filter((n) => n.kind === 'task_due').length, 1);
    });

    test('marking read: one, all, or by opening the record; bad input names the field', async () => {
      const first = await listOf(agent);
      assert.ok(first.meta.unread >= 2, JSON.stringify(first.meta));
      const one = first.data.find((n) => !n.read)!;
      const read = await app.request('POST', '/api/v1/me/notifications/read', {
        json: { ids: [one.id] },
        token: agent.token,
      });
      assert.equal(read.status, 204, read.text);
      const after1 = await listOf(agent);
      assert.equal(after1.meta.unread, first.meta.unread - 1);
      assert.equal(after1.data.find((n) => n.id === one.id)!.read, true);
      // Someone else's id marks nothing of theirs.
      await app.request('POST', '/api/v1/me/notifications/read', { json: { ids: [one.id] }, token: quiet.token });
      const bad = await app.request('POST', '/api/v1/me/notifications/read', {
        json: { ids: ['x'] },
        token: agent.token,
      });
      assert.equal(bad.status, 422, bad.text);
      assert.ok(bad.body.errors.ids, bad.text);
      assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);

      // The bell, and opening a record reads what told the viewer about it.
      const page: Client = await pageSignIn(app, agent);
      const bell = await page.get('/notifications/bell');
      assert.match(bell.text, new RegExp(`Notifications, ${after1.meta.unread} unread`));
      const unreadOne = after1.data.find((n) => !n.read)!;
      const opened = await page.get(`/${unreadOne.record.resource}/${unreadOne.record.id}`);
      assert.equal(opened.status, 200);
      const afterOpen = await listOf(agent);
      assert.equal(afterOpen.data.find((n) => n.id === unreadOne.id)!.read, true);
      const listPage = await page.get('/notifications');
      assert.equal(listPage.status, 200);
      assert.match(listPage.text, /Mark all \d+ read|Nothing yet/);

      const all = await app.request('POST', '/api/v1/me/notifications/read', {
        json: { all: true },
        token: agent.token,
      });
      assert.equal(all.status, 204);
      assert.equal((await listOf(agent)).meta.unread, 0);
      assert.match((await page.get('/notifications/bell')).text, /aria-label="Notifications"/);
    });
  });

  describe(`notification mail while the mail server is away (${dialect})`, () => {
    let app: TestApp;
    let smtp: MailCatcher | undefined;
    after(async () => {
      await app?.close();
      await smtp?.close();
    });

    test('a mail that cannot be sent stays in the outbox and goes once the server is back, once', async () => {
      const port = await freePort();
      app = await startApp(dialect, {
        env: { SMTP_URL: `smtp://127.0.0.1:${port}`, APP_URL, SCHEDULER_TICK_MS: '100', LOG_LEVEL: 'fatal' },
      });
      const agent = await teammate(app, 'agent', 'Olga Outbox');
      const made = await app.post('/api/v1/inquiries', { name: 'Kept Kim', assigned_to: agent.id });
      assert.equal(made.status, 201, made.text);
      // Several scheduler runs fail to send while nothing listens.
      await new Promise((r) => setTimeout(r, 500));
      smtp = await startMailCatcher(port);
      const kept = (m: ReceivedMail) => /Kept Kim/.test(m.subject);
      const mails = await smtp.waitFor(kept, { timeoutMs: 10_000 });
      assert.deepEqual(mails[0]?.to, [agent.email.toLowerCase()]);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(smtp.mails.filter(kept).length, 1, 'sent once');
    });
  });
}
