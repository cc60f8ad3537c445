// The desk's loop across real `leadbook serve` processes on one database, on each database: round-robin arrivals
// sent to two processes at once take turns and respect capacity; the scheduler's holder killed with SIGKILL in the
// middle of 100 tasks coming due, the other process takes over and each reminder is told and mailed once; a process
// killed right after assignments commit, before its outbox is sent, sends each mail once after a restart. Mails are
// counted at a real SMTP peer; the rows are read from the database itself.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../src/db/connection.ts';
import { DIALECTS, type FreshDatabase, migratedDatabase } from './helpers/database.ts';
import { call, crash, type Served, serveCli } from './helpers/process.ts';
import { type MailCatcher, startMailCatcher } from './helpers/smtp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const password = 'a passphrase for the desk 42';

for (const dialect of DIALECTS) {
  describe(`the desk across processes (${dialect})`, { timeout: 240_000 }, () => {
    let fresh: FreshDatabase;
    let database: Database;
    let smtp: MailCatcher;
    let env: Record<string, string>;
    const running: Served[] = [];
    let token: string;
    /** Starts one more `leadbook serve` on the shared database. */
    const serve = async (extra: Record<string, string> = {}) => {
      const served = await serveCli({ ...env, ...extra }, 30_000);
      running.push(served);
      return served;
    };
    /** Agents made by the admin; `mail: false` turns their notification mails off (they are not what is counted). */
    const agents = async (base: string, names: string[], mail = true) => {
      const ids: number[] = [];
      for (const name of names) {
        const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${dialect}@example.org`;
        const made = await call(base, 'POST', '/api/v1/users', token, {
          name,
          email,
          password,
          role: 'agent',
          notify_email: mail,
        });
        assert.equal(made.status, 201, made.text);
        ids.push(Number(made.body.data.id));
      }
      return ids;
    };
    const tokenOf = async (base: string, name: string) => {
      const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${dialect}@example.org`;
      const issued = await call(base, 'POST', '/api/v1/auth/token', null, { email, password, device_name: 'test' });
      assert.equal(issued.status, 201, issued.text);
      return issued.body.token as string;
    };

    before(async () => {
      fresh = await migratedDatabase(dialect);
      database = openDatabase(fresh.options);
      smtp = await startMailCatcher();
      // Processes behind one balancer share the database and the app key (SQLite: the data folder too).
      env = {
        DATA_DIR: fresh.options.dataDir,
        APP_KEY: randomBytes(32).toString('base64'),
        SMTP_URL: smtp.url,
        LOG_LEVEL: 'warn',
        SCHEDULER_TICK_MS: '500',
        // A dead holder's lease runs out in 4 s, not the 10-20 s the ticks would give: the takeovers below wait for it.
        SCHEDULER_LEASE_MS: '4000',
        ...(fresh.options.databaseUrl ? { DATABASE_URL: fresh.options.databaseUrl } : {}),
      };
      const first = await serve();
      const admin = { name: 'Admin', email: `admin.${dialect}@example.org`, password };
      assert.equal((await call(first.url, 'POST', '/api/v1/auth/register', null, admin)).status, 201);
      const issued = await call(first.url, 'POST', '/api/v1/auth/token', null, {
        email: admin.email,
        password,
        device_name: 'test',
      });
      assert.equal(issued.status, 201, issued.text);
      token = issued.body.token;
      await first.stop();
    });
    after(async () => {
      await Promise.all(running.map((s) => s.stop()));
      await database?.close();
      await smtp?.close();
      await fresh?.drop();
    });

    test('200 arrivals at once on two processes: round robin within 1, capacity 60 holds, the rest wait', async () => {
      const [a, b] = [await serve(), await serve()];
      const team = await agents(a.url, ['Ana Turn', 'Ben Turn', 'Cai Turn', 'Dee Turn'], false);
      const rule = await call(a.url, 'POST', '/api/v1/assignment-rules', token, {
        name: 'Everyone, in turn',
        position: 1,
        strategy: 'round_robin',
        users: team,
        capacity: 60,
      });
      assert.equal(rule.status, 201, rule.text);
      const arrive = (count: number, from: number) =>
        Promise.all(
          Array.from({ length: count }, (_, i) =>
            call(i % 2 ? b.url : a.url, 'POST', '/api/v1/inquiries', token, { name: `Arrival ${from + i}` }),
          ),
        );
      const counts = async () => {
        const rows = await database.db
          .selectFrom('inquiries')
          .select(['assigned_to', (eb) => eb.fn.countAll<number>().as('n')])
          .where('name', 'like', 'Arrival %')
          .groupBy('assigned_to')
          .execute();
        const of = (id: number | null) =>
          Number(rows.find((r) => (r.assigned_to === null ? null : Number(r.assigned_to)) === id)?.n ?? 0);
        return { agents: team.map(of), unassigned: of(null) };
      };
      const first = await arrive(200, 0);
      assert.deepEqual(
        first.filter((r) => r.status !== 201).map((r) => r.text),
        [],
      );
      const half = await counts();
      assert.equal(half.unassigned, 0, 'room for all 200');
      assert.ok(Math.max(...half.agents) - Math.min(...half.agents) <= 1, `in turn: ${half.agents.join(' / ')}`);
      // 60 more: each fills up to 60 and no further; the other 20 wait unassigned.
      const second = await arrive(60, 200);
      assert.deepEqual(
        second.filter((r) => r.status !== 201).map((r) => r.text),
        [],
      );
      assert.deepEqual(await counts(), { agents: [60, 60, 60, 60], unassigned: 20 });
      await database.db.updateTable('assignment_rules').set({ active: false }).execute();
      await Promise.all([a.stop(), b.stop()]);
    });

    test('the scheduler holder SIGKILLed among 100 tasks coming due: the other takes over; each told and mailed once', async () => {
      const holder = await serve();
      // The first process holds the lease before the second starts.
      for (let i = 0; i < 50 && !(await database.db.selectFrom('leases').selectAll().executeTakeFirst()); i++)
        await sleep(100);
      const lease = await database.db.selectFrom('leases').select('holder').executeTakeFirstOrThrow();
      const other = await serve();
      // Her own tasks: nobody is told of their making, only of their coming due.
      const [owner] = await agents(holder.url, ['Rita Reminded']);
      const own = await tokenOf(holder.url, 'Rita Reminded');
      const start = Date.now() + 3000;
      const made = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          call(i % 2 ? other.url : holder.url, 'POST', '/api/v1/tasks', own, {
            title: `Follow up ${i}`,
            assigned_to: owner,
            due_at: new Date(start + i * 200).toISOString(),
          }),
        ),
      );
      assert.deepEqual(
        made.filter((r) => r.status !== 201).map((r) => r.text),
        [],
      );
      const ids = made.map((r) => String(r.body.data.id));
      const reminded = () =>
        database.db
          .selectFrom('notifications')
          .select(['record_id', (eb) => eb.fn.countAll<number>().as('n')])
          .where('kind', '=', 'task_due')
          .groupBy('record_id')
          .execute();
      // Kill the holder part-way, once some reminders went out and most have not.
      while ((await reminded()).length < 20) await sleep(100);
      await crash(holder);
      const before = (await reminded()).length;
      assert.ok(before < 100, `killed with ${before} of 100 told`);
      const deadline = Date.now() + 60_000;
      while ((await reminded()).length < 100 && Date.now() < deadline) await sleep(250);
      const told = await reminded();
      assert.deepEqual(told.map((r) => String(r.record_id)).sort(), [...ids].sort(), 'every task told');
      assert.deepEqual(
        told.filter((r) => Number(r.n) !== 1),
        [],
        'none told twice',
      );
      const taken = await database.db.selectFrom('leases').select('holder').executeTakeFirstOrThrow();
      assert.notEqual(taken.holder, lease.holder, 'the lease passed to the other process');
      const due = (m: { subject: string }) => /Your task “Follow up \d+” is due/.test(m.subject);
      await smtp.waitFor(due, { count: 100, timeoutMs: 30_000 });
      await sleep(1500);
      // Mail goes at least once (src/records/notifications.ts): a kill between a send and its record sends that one
      // mail again, with the same Message-ID, which a mail client shows as one message. The holder sends one at a
      // time, so at most the mail in flight at the kill comes twice.
      const messageIds = new Map<string, Set<string>>();
      const received = smtp.mails.filter(due);
      for (const m of received) {
        const id = m.headers.get('message-id');
        assert.ok(id, `"${m.subject}" has a Message-ID`);
        messageIds.set(m.subject, (messageIds.get(m.subject) ?? new Set()).add(id));
      }
      assert.equal(messageIds.size, 100, 'every task mailed');
      assert.deepEqual(
        [...messageIds].filter(([, sent]) => sent.size !== 1),
        [],
        'a mail sent again keeps its Message-ID',
      );
      assert.ok(received.length <= 101, `${received.length} mails for 100 tasks`);
      await other.stop();
    });

    test('killed right after assignments commit: after a restart each mail is sent exactly once', async () => {
      // A process an earlier test left running (it failed before stopping it) would send this test's mail.
      await Promise.all(running.splice(0).map((s) => s.stop()));
      // A long tick: the process sends its outbox at start and then not for a minute, so the kill finds it unsent.
      const slow = await serve({ SCHEDULER_TICK_MS: '60000' });
      const [one, two] = await agents(slow.url, ['Olga Outbox', 'Otto Outbox']);
      await sleep(300);
      const made = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call(slow.url, 'POST', '/api/v1/inquiries', token, { name: `Kept ${i}`, assigned_to: i % 2 ? one : two }),
        ),
      );
      assert.deepEqual(
        made.filter((r) => r.status !== 201).map((r) => r.text),
        [],
      );
      await crash(slow);
      const kept = (m: { subject: string }) => /Kept \d+/.test(m.subject);
      assert.equal(smtp.mails.filter(kept).length, 0, 'nothing was sent before the kill');
      const waiting = await database.db
        .selectFrom('notifications')
        .select('record_id')
        .where('kind', '=', 'assigned')
        .where('mail_pending', '=', true)
        .where(
          'record_id',
          'in',
          made.map((r) => r.body.data.id),
        )
        .execute();
      assert.equal(waiting.length, 50, 'the 50 mails wait in the outbox');
      const restarted = await serve({ SCHEDULER_TICK_MS: '100' });
      await smtp.waitFor(kept, { count: 50, timeoutMs: 30_000 });
      await sleep(1000);
      const sent = smtp.mails.filter(kept);
      assert.equal(sent.length, 50, 'each once');
      assert.equal(new Set(sent.map((m) => m.headers.get('message-id'))).size, 50, 'one Message-ID each');
      assert.deepEqual(
        sent.map((m) => m.subject.match(/Kept \d+/)![0]).sort(),
        Array.from({ length: 50 }, (_, i) => `Kept ${i}`).sort(),
      );
      await restarted.stop();
    });
  });
}
