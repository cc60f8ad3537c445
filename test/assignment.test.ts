// Assignment rules and the response clock over HTTP, on each database: the first active rule whose every condition
// holds (case-insensitive) gives a new inquiry to its users in turn, to the least loaded, or to the first who can,
// skipping deactivated users and those at capacity, and sets its due time; concurrent arrivals never take the same
// turn twice; a dry run says what would happen without taking a turn; bad rules are refused by field. The clock: a
// note, a stage change or a task done is the first response; `overdue` and filter[overdue] show what is late; only an
// admin moves the due time; an overdue inquiry tells its assignee once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { type Teammate, teammate } from './helpers/team.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const MINUTE = 60_000;

for (const dialect of DIALECTS) {
  describe(`assignment rules and the response clock (${dialect})`, () => {
    let app: TestApp;
    const team: Teammate[] = [];
    let position = 0;

    const rule = async (body: Record<string, unknown>) => {
      const made = await app.post('/api/v1/assignment-rules', { position: ++position, ...body });
      assert.equal(made.status, 201, made.text);
      return made.body.data;
    };
    const arrive = async (body: Record<string, unknown>) => {
      const made = await app.post('/api/v1/inquiries', body);
      assert.equal(made.status, 201, made.text);
      return made.body.data;
    };
    const idsOf = (...people: Teammate[]) => people.map((p) => Number(p.id));
    const deactivateRules = async () => {
      for (const r of (await app.get('/api/v1/assignment-rules?per_page=100')).body.data)
        await app.request('PATCH', `/api/v1/assignment-rules/${r.id}`, { json: { active: false } });
    };

    before(async () => {
      app = await startApp(dialect, { env: { SCHEDULER_TICK_MS: '100', LOG_LEVEL: 'warn' } });
      for (const name of ['Ana Turn', 'Ben Turn', 'Cai Turn', 'Dee Turn'])
        team.push(await teammate(app, 'agent', name));
    });
    after(() => app?.close());

    test('round robin in turn, on the first matching rule, case-insensitive; the due time from the rule', async () => {
      const [ana, ben, cai] = team as [Teammate, Teammate, Teammate];
      await rule({
        name: 'Portugal',
        match: { country: 'Portugal' },
        strategy: 'round_robin',
        users: idsOf(ana, ben, cai),
        respond_within_minutes: 30,
      });
      await rule({ name: 'Everyone else', strategy: 'user', users: idsOf(ben) });
      const got = [];
      for (const country of ['portugal', 'PORTUGAL ', 'Portugal', 'Portugal']) {
        const inquiry = await arrive({ name: `From ${country}`, country });
        got.push(String(inquiry.assigned_to));
        const due = Date.parse(inquiry.due_at) - Date.parse(inquiry.created_at);
        assert.ok(Math.abs(due - 30 * MINUTE) < 5000, `due 30 minutes after it came (${due} ms)`);
        assert.equal(inquiry.overdue, false);
        assert.equal(inquiry.first_response_at, null);
      }
      assert.deepEqual(got, idsOf(ana, ben, cai, ana).map(String));
      const other = await arrive({ name: 'From Spain', country: 'Spain' });
      assert.equal(String(other.assigned_to), String(ben.id), 'the next rule');
      assert.equal(other.due_at, null, 'that rule sets no due time');
      const named = await arrive({ name: 'Named', country: 'Portugal', assigned_to: cai.id });
      assert.equal(String(named.assigned_to), String(cai.id), 'an assignee given is kept');
      // The assignee is told, like any assignment by someone else.
      const told = await app.request('GET', '/api/v1/me/notifications', { token: ana.token });
      assert.ok(told.body.data.some((n: { kind: string }) => n.kind === 'assigned'));
      await deactivateRules();
    });

    test('deactivated users and users at capacity are skipped; when all are, the inquiry stays unassigned', async () => {
      const [, ben] = team as [Teammate, Teammate];
      const eve = await teammate(app, 'agent', 'Eve Turn');
      const capacity = await rule({
        name: 'Capacity',
        match: { inquiry_country: 'Capacity land' },
        strategy: 'round_robin',
        users: idsOf(eve, ben),
        capacity: 1,
      });
      // Ben holds an open inquiry already (the test before); Eve none.
      const first = await arrive({ name: 'Eve has room', inquiry_country: 'capacity land' });
      assert.equal(String(first.assigned_to), String(eve.id));
      const full = await arrive({ name: 'Nobody free', inquiry_country: 'capacity land' });
      assert.equal(full.assigned_to, null, 'everyone at capacity: unassigned');
      await app.request('PATCH', `/api/v1/assignment-rules/${capacity.id}`, { json: { capacity: 100 } });
      const off = await app.request('PATCH', `/api/v1/users/${eve.id}`, { json: { active: false } });
      assert.equal(off.status, 200, off.text);
      for (let i = 0; i < 2; i++) {
        const inquiry = await arrive({ name: `Skip Eve ${i}`, inquiry_country: 'Capacity land' });
        assert.equal(String(inquiry.assigned_to), String(ben.id), 'Eve is deactivated');
      }
      await deactivateRules();
    });

    test('least open gives it to whoever holds the fewest open inquiries', async () => {
      const [, , cai, dee] = team as [Teammate, Teammate, Teammate, Teammate];
      const source = (await app.post('/api/v1/sources', { name: 'Trade fair' })).body.data.id;
      await rule({ name: 'Least', match: { source_id: source }, strategy: 'least_open', users: idsOf(cai, dee) });
      const first = await arrive({ name: 'Least 1', source_id: source });
      assert.equal(String(first.assigned_to), String(dee.id), 'Dee holds none, Cai holds one');
      const second = await arrive({ name: 'Least 2', source_id: source });
      const third = await arrive({ name: 'Least 3', source_id: source });
      assert.deepEqual([second, third].map((i) => String(i.assigned_to)).sort(), idsOf(cai, dee).map(String).sort());
      await deactivateRules();
    });

    test('concurrent arrivals take turns one after another: never the same turn twice', async () => {
      await rule({
        name: 'Rush',
        match: { inquiry_country: 'Rushland' },
        strategy: 'round_robin',
        users: idsOf(...team),
      });
      const made = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          app.post('/api/v1/inquiries', { name: `Rush ${i}`, inquiry_country: 'Rushland' }),
        ),
      );
      assert.deepEqual(
        made.map((m) => m.status),
        made.map(() => 201),
      );
      const per = new Map<string, number>();
      for (const m of made)
        per.set(String(m.body.data.assigned_to), (per.get(String(m.body.data.assigned_to)) ?? 0) + 1);
      assert.deepEqual([...per.values()], [6, 6, 6, 6], JSON.stringify([...per]));
      await deactivateRules();
    });

    test('a dry run names the rule and the user without taking the turn', async () => {
      const [ana, ben] = team as [Teammate, Teammate];
      await rule({
        name: 'Dry',
        match: { country: 'Dryland' },
        strategy: 'round_robin',
        users: idsOf(ana, ben),
        respond_within_minutes: 5,
      });
      const tried = await app.post('/api/v1/assignment-rules/dry-run', { country: 'dryland' });
      assert.equal(tried.status, 200, tried.text);
      assert.deepEqual([tried.body.data.rule.name, String(tried.body.data.user.id)], ['Dry', String(ana.id)]);
      const again = await app.post('/api/v1/assignment-rules/dry-run', { country: 'Dryland' });
      assert.equal(String(again.body.data.user.id), String(ana.id), 'no turn taken');
      assert.equal(String((await arrive({ name: 'Dry 1', country: 'Dryland' })).assigned_to), String(ana.id));
      const none = await app.post('/api/v1/assignment-rules/dry-run', { country: 'Nowhere' });
      assert.deepEqual(none.body.data, { rule: null, user: null, due_at: null });
      const agent = await app.request('POST', '/api/v1/assignment-rules/dry-run', { json: {}, token: ana.token });
      assert.equal(agent.status, 403);
      // The settings page tries the rules the same way, without JavaScript.
      const page = await pageSignIn(app, app.admin);
      const settings = await page.get('/settings?try=1&country=Dryland');
      assert.equal(settings.status, 200);
      assert.match(settings.text, /“Dry” would take it and give it to Ben Turn, to be answered by/);
      assert.match((await page.get('/settings?try=1&country=Mars')).text, /No active rule matches/);
      await deactivateRules();
    });

    test('a rule that cannot work is refused, naming the field, and nothing is written', async () => {
      const count = async () => (await app.get('/api/v1/assignment-rules')).body.meta.total;
      const before = await count();
      const cases: [Record<string, unknown>, string][] = [
        [{ users: [] }, 'users'],
        [{ users: [2147483647] }, 'users'],
        [{ match: { planet: 'Mars' } }, 'match'],
        [{ match: { service_id: 999999 } }, 'match'],
        [{ capacity: 0 }, 'capacity'],
        [{ respond_within_minutes: -5 }, 'respond_within_minutes'],
        [{ strategy: 'lottery' }, 'strategy'],
      ];
      for (const [bad, field] of cases) {
        const res = await app.post('/api/v1/assignment-rules', {
          name: `Bad ${field} ${Math.random()}`,
          position: 50,
          users: [Number(team[0]!.id)],
          ...bad,
        });
        assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${res.text}`);
        assert.ok(res.body.errors[field], `${JSON.stringify(bad)} names ${field}: ${res.text}`);
      }
      assert.equal(await count(), before);
      const agent = await app.request('POST', '/api/v1/assignment-rules', {
        json: { name: 'Agent rule', position: 1, users: [1] },
        token: team[0]!.token,
      });
      assert.equal(agent.status, 403, 'admins keep the rules');
    });

    test('the clock: only an admin moves the due time; a note, a stage change or a task done is the first response', async () => {
      const [ana] = team as [Teammate];
      const inquiry = await arrive({ name: 'Clocked', assigned_to: ana.id });
      const id = inquiry.id;
      const agentSets = await app.request('PATCH', `/api/v1/inquiries/${id}`, {
        json: { due_at: new Date(Date.now() + MINUTE).toISOString() },
        token: ana.token,
      });
      assert.equal(agentSets.status, 403, agentSets.text);
      assert.ok(agentSets.body.errors?.due_at, agentSets.text);
      const past = new Date(Date.now() - MINUTE).toISOString();
      const late = await app.request('PATCH', `/api/v1/inquiries/${id}`, { json: { due_at: past } });
      assert.equal(late.status, 200, late.text);
      assert.equal(late.body.data.overdue, true);
      const overdue = await app.get('/api/v1/inquiries?filter[overdue]=true&per_page=100');
      assert.equal(overdue.status, 200, overdue.text);
      assert.ok(overdue.body.data.some((i: { id: unknown }) => String(i.id) === String(id)));
      const notOverdue = await app.get('/api/v1/inquiries?filter[overdue]=false&per_page=100');
      assert.ok(!notOverdue.body.data.some((i: { id: unknown }) => String(i.id) === String(id)));
      assert.ok(notOverdue.body.meta.total > 0, 'inquiries without a due time are not overdue');
      assert.equal((await app.get('/api/v1/inquiries?filter[overdue]=maybe')).status, 422);

      // Its assignee is told once that it is overdue (the scheduler runs every 100 ms here).
      const overdueNotices = async () =>
        (await app.request('GET', '/api/v1/me/notifications', { token: ana.token })).body.data.filter(
          (n: { kind: string; record: { id: unknown } }) => n.kind === 'overdue' && String(n.record.id) === String(id),
        );
      const end = Date.now() + 10_000;
      while ((await overdueNotices()).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await overdueNotices()).length, 1);

      // A note by the assignee is the first response: no longer overdue, and the change is in its activity.
      const note = await app.request('POST', `/api/v1/inquiries/${id}/notes`, {
        json: { body: 'Called her back.' },
        token: ana.token,
      });
      assert.equal(note.status, 201, note.text);
      const answered = (await app.get(`/api/v1/inquiries/${id}`)).body.data;
      assert.notEqual(answered.first_response_at, null);
      assert.equal(answered.overdue, false);
      const activity = (await app.get(`/api/v1/inquiries/${id}/activity`)).body.data;
      assert.ok(activity.some((e: { changes?: Record<string, unknown> }) => e.changes?.first_response_at));
      // A later note does not move it.
      await app.request('POST', `/api/v1/inquiries/${id}/notes`, { json: { body: 'Again.' }, token: ana.token });
      assert.equal((await app.get(`/api/v1/inquiries/${id}`)).body.data.first_response_at, answered.first_response_at);
      // The dashboard's median first response per assignee: Ana answered this one, within a minute, and no other.
      const dashboard = (await (await pageSignIn(app, app.admin)).get('/')).text;
      assert.match(dashboard, /<th scope="row">Ana Turn<\/th><td>0 min<\/td><td>0 min<\/td><td>1<\/td>/);

      // A stage change, and a task done, are responses too.
      const stages = (await app.get('/api/v1/stages?sort=position')).body.data;
      const moved = await arrive({ name: 'Moved on' });
      const next = await app.request('PATCH', `/api/v1/inquiries/${moved.id}`, { json: { stage_id: stages[1].id } });
      assert.notEqual(next.body.data.first_response_at, null);
      const tasked = await arrive({ name: 'Tasked' });
      const task = await app.post('/api/v1/tasks', { title: 'Call', inquiry_id: tasked.id });
      assert.equal((await app.get(`/api/v1/inquiries/${tasked.id}`)).body.data.first_response_at, null);
      await app.request('PATCH', `/api/v1/tasks/${task.body.data.id}`, { json: { done_at: new Date().toISOString() } });
      assert.notEqual((await app.get(`/api/v1/inquiries/${tasked.id}`)).body.data.first_response_at, null);
    });
  });
}
