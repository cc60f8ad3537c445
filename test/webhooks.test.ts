// Webhooks (CONTRACT.md, "Webhooks"; issue 16) against the real app on each
// database, with a receiver on loopback that verifies every signature with the
// `standardwebhooks` package: 1,000 changes across 50 records arrive, each
// once accepted, in order per record, though the receiver fails the first 3
// attempts of each; the secret is shown once and rotates with a grace period;
// the delivery log, resends and test events; 410 Gone and 3 days of failures
// turn an endpoint off and tell the admins.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from './helpers/database.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { type DnsStub, startDnsStub } from './helpers/dns-stub.ts';
import { type Receiver, startReceiver, until } from './helpers/webhook-receiver.ts';

const ENV = {
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOKS_CONCURRENCY: '16',
  SCHEDULER_TICK_MS: '100',
  WEBHOOKS_RETRY_BASE_MS: '20',
};

for (const dialect of DIALECTS) {
  describe(`webhooks (${dialect})`, { timeout: 180_000 }, () => {
    let app: TestApp;
    const receivers: Receiver[] = [];
    const receiver = async (options: Parameters<typeof startReceiver>[0] = {}) => {
      const made = await startReceiver(options);
      receivers.push(made);
      return made;
    };
    /** An endpoint for `events` at the receiver, whose secret the receiver then verifies with. */
    const endpoint = async (to: Receiver, events: string[]) => {
      const made = await app.post('/api/v1/webhooks', { url: to.url, events, description: 'test' });
      assert.equal(made.status, 201, made.text);
      to.secrets.push(made.body.secret);
      return made.body.data;
    };

    before(async () => {
      app = await startApp(dialect, { env: ENV });
    });
    after(async () => {
      await app?.close();
      for (const r of receivers) await r.close();
    });

    test('the secret is answered once, as whsec_ and 32 bytes, and never again', async () => {
      const to = await receiver();
      const made = await app.post('/api/v1/webhooks', { url: to.url, events: ['contact.created'] });
      assert.equal(made.status, 201, made.text);
      assert.match(made.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(made.body.secret.slice(6), 'base64').length, 32);
      const read = await app.get(`/api/v1/webhooks/${made.body.data.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.text.includes(made.body.secret.slice(6)), false);
      assert.equal('secret' in read.body.data, false);
      const listed = await app.get('/api/v1/webhooks');
      assert.equal(listed.text.includes('whsec_'), false);
      const bad = await app.post('/api/v1/webhooks', { url: 'ftp://example.org/x', events: ['contact.nope'] });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.errors.url && bad.body.errors.events, bad.text);
    });

    test('1,000 changes across 50 records: every event accepted once, signed, in order per record', async () => {
      const to = await receiver({ failFirst: 3 });
      const hook = await endpoint(to, ['contact.created', 'contact.updated']);
      const ids: number[] = [];
      for (let i = 0; i < 50; i++) {
        const made = await app.post('/api/v1/contacts', { name: `Hook ${i}`, city: 'step 0' });
        assert.equal(made.status, 201, made.text);
        ids.push(Number(made.body.data.id));
      }
      // 950 updates, 19 per record, interleaved across the records.
      for (let step = 1; step <= 19; step++)
        await Promise.all(
          ids.map(async (id) => {
            const changed = await app.patch(`/api/v1/contacts/${id}`, { city: `step ${step}` });
            assert.equal(changed.status, 200, changed.text);
          }),
        );
      await until(
        () => new Set(to.accepted.map((d) => d.id)).size >= 1000,
        120_000,
        () => `${new Set(to.accepted.map((d) => d.id)).size} of 1000 accepted`,
      );
      const unique = new Map(to.accepted.map((d) => [d.id, d]));
      assert.equal(unique.size, 1000);
      assert.equal(to.badSignatures.length, 0);
      assert.deepEqual(to.overlapping, []);
      // Each message was tried 4 times: 3 refused, then accepted; none accepted twice.
      assert.equal(to.accepted.length, 1000);
      const perId = new Map<string, number>();
      for (const d of to.attempts) perId.set(d.id, (perId.get(d.id) ?? 0) + 1);
      assert.ok([...perId.values()].every((n) => n === 4));
      // Per record: created first, then steps 1..19 in order.
      for (const id of ids) {
        const seen = to.accepted
          .filter((d) => Number(d.event.data.id) === id)
          .map((d) => (d.event.type === 'contact.created' ? 0 : Number(String(d.event.changes.city[1]).slice(5))));
        assert.deepEqual(
          seen,
          Array.from({ length: 20 }, (_, n) => n),
        );
      }
      // Nothing of this endpoint waits any more; the metrics counted each attempt by its outcome (the first test's
      // endpoint, whose receiver knows no secret, keeps failing: its deliveries are the backlog).
      let waiting = await app.get(`/api/v1/webhooks/${hook.id}/deliveries?status=pending`);
      for (let i = 0; i < 50 && waiting.body.data.length; i++) {
        await new Promise((r) => setTimeout(r, 100));
        waiting = await app.get(`/api/v1/webhooks/${hook.id}/deliveries?status=pending`);
      }
      assert.equal(waiting.body.data.length, 0);
      const metrics = (await app.get('/metrics')).text;
      const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
      assert.ok(sample('leadbook_webhook_attempts_total\\{outcome="failure"\\}') >= 3000, metrics);
      assert.ok(sample('leadbook_webhook_attempts_total\\{outcome="success"\\}') >= 1000);
      assert.equal(sample('leadbook_webhook_backlog'), 50);
      const update = to.accepted.find((d) => d.event.type === 'contact.updated')!;
      assert.deepEqual(Object.keys(update.event).sort(), ['changes', 'data', 'timestamp', 'type']);
    });

    test('each kind of event, with the record as the API shows it (a deleted one as it was)', async () => {
      const to = await receiver();
      await endpoint(to, [
        'contact.deleted',
        'inquiry.updated',
        'inquiry.assigned',
        'note.created',
        'task.created',
        'task.done',
        'intake.received',
      ]);
      const contact = await app.post('/api/v1/contacts', { name: 'Short-lived', email: 'brief@example.org' });
      assert.equal((await app.delete(`/api/v1/contacts/${contact.body.data.id}`)).status, 204);
      const form = await app.post('/api/v1/intake-forms', {
        name: 'Hooked',
        slug: 'hooked',
        fields: ['name', 'email'],
      });
      assert.equal(form.status, 201, form.text);
      const sent = await app.request('POST', '/api/v1/intake/hooked', {
        json: { name: 'From the form', email: 'form@example.org' },
        token: null,
      });
      assert.equal(sent.status, 202, sent.text);
      const [arrived] = (await app.get('/api/v1/inquiries?filter[name]=From the form')).body.data;
      await app.patch(`/api/v1/inquiries/${arrived.id}`, { assigned_to: app.admin.id });
      await app.post(`/api/v1/inquiries/${arrived.id}/notes`, { body: 'Called back' });
      const task = await app.post('/api/v1/tasks', { title: 'Send the quote', inquiry_id: arrived.id });
      await app.patch(`/api/v1/tasks/${task.body.data.id}`, { done_at: new Date().toISOString() });
      const wanted = [
        'contact.deleted',
        'intake.received',
        'inquiry.updated',
        'inquiry.assigned',
        'note.created',
        'task.created',
        'task.done',
      ];
      await until(
        () => to.accepted.length >= wanted.length,
        20_000,
        () => to.accepted.map((d) => d.event.type).join(),
      );
      await new Promise((r) => setTimeout(r, 300));
      const events = to.accepted.map((d) => d.event);
      // (The note also marks the inquiry responded to: a second inquiry.updated.)
      assert.deepEqual([...new Set(events.map((e) => e.type))].sort(), [...wanted].sort());
      const of = (type: string) => events.find((e) => e.type === type);
      assert.equal(of('contact.deleted').data.email, 'brief@example.org');
      assert.equal(of('intake.received').data.name, 'From the form');
      assert.deepEqual(of('inquiry.assigned').changes.assigned_to, [null, Number(app.admin.id)]);
      assert.equal(of('note.created').data.body, 'Called back');
      assert.equal(of('task.done').data.title, 'Send the quote');
      for (const e of events) assert.ok(Date.parse(e.timestamp) > Date.now() - 60_000, e.timestamp);
      // Per record in order: the inquiry's update (its assignment) came after its arrival.
      const types = to.accepted.map((d) => d.event.type);
      assert.ok(types.indexOf('intake.received') < types.indexOf('inquiry.updated'));
    });

    test('a rotated secret signs beside the new one for a day', async () => {
      const to = await receiver();
      const hook = await endpoint(to, ['contact.created']);
      const old = to.secrets[0]!;
      const rotated = await app.post(`/api/v1/webhooks/${hook.id}/secret`);
      assert.equal(rotated.status, 200, rotated.text);
      assert.notEqual(rotated.body.secret, old);
      assert.ok(Date.parse(rotated.body.previous_until) > Date.now() + 23 * 3600_000);
      // Each secret alone verifies the delivery.
      for (const secrets of [[old], [rotated.body.secret]]) {
        to.secrets.splice(0, to.secrets.length, ...secrets);
        const before = to.accepted.length;
        await app.post('/api/v1/contacts', { name: `Rotated ${secrets[0]!.slice(6, 12)}` });
        await until(
          () => to.accepted.length > before,
          20_000,
          () => 'a delivery after the rotation',
        );
      }
      assert.equal(to.accepted.at(-1)!.signature.split(' ').length, 2);
    });

    test('the delivery log, a test event and a resend', async () => {
      const to = await receiver({ answer: 'x'.repeat(5000) });
      const hook = await endpoint(to, ['inquiry.created', 'inquiry.assigned']);
      const tested = await app.post(`/api/v1/webhooks/${hook.id}/test`);
      assert.equal(tested.status, 202, tested.text);
      await until(
        () => to.accepted.some((d) => d.event.type === 'webhook.test'),
        20_000,
        () => 'the test event',
      );
      const made = await app.post('/api/v1/inquiries', { name: 'Logged', assigned_to: app.admin.id });
      assert.equal(made.status, 201, made.text);
      await until(
        () => to.accepted.length >= 3,
        20_000,
        () => `${to.accepted.length} of 3`,
      );
      assert.deepEqual(
        to.accepted.map((d) => d.event.type),
        ['webhook.test', 'inquiry.created', 'inquiry.assigned'],
      );
      let log = await app.get(`/api/v1/webhooks/${hook.id}/deliveries`);
      for (let i = 0; i < 50 && log.body.data.some((d: { status: string }) => d.status !== 'succeeded'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        log = await app.get(`/api/v1/webhooks/${hook.id}/deliveries`);
      }
      assert.equal(log.status, 200, log.text);
      assert.equal(log.body.data.length, 3);
      for (const d of log.body.data) {
        assert.equal(d.status, 'succeeded');
        assert.equal(d.attempts, 1);
        assert.equal(d.last_status_code, 200);
        assert.ok(d.latency_ms >= 0);
        assert.equal(Buffer.byteLength(d.response_excerpt), 1024);
      }
      const resent = await app.post(`/api/v1/webhooks/${hook.id}/deliveries/${log.body.data[0].id}/resend`);
      assert.equal(resent.status, 202, resent.text);
      await until(
        () => to.accepted.length >= 4,
        20_000,
        () => 'the resent delivery',
      );
      // A resend is the same message: same webhook-id, same bytes.
      assert.equal(to.accepted[3]!.id, to.accepted[2]!.id);
      assert.equal(to.accepted[3]!.body, to.accepted[2]!.body);
      const missing = await app.post(`/api/v1/webhooks/${hook.id}/deliveries/999999/resend`);
      assert.equal(missing.status, 404);
    });

    test('410 Gone turns the endpoint off at once and tells the admins; back on, waiting events go', async () => {
      const to = await receiver({ status: () => 410 });
      const hook = await endpoint(to, ['contact.created']);
      await app.post('/api/v1/contacts', { name: 'Gone 1' });
      await until(
        () => to.attempts.length >= 1,
        20_000,
        () => 'the first attempt',
      );
      let read = await app.get(`/api/v1/webhooks/${hook.id}`);
      for (let i = 0; i < 50 && read.body.data.active; i++) {
        await new Promise((r) => setTimeout(r, 100));
        read = await app.get(`/api/v1/webhooks/${hook.id}`);
      }
      assert.equal(read.body.data.active, false);
      assert.match(read.body.data.disabled_reason, /410/);
      const told = await app.get('/api/v1/me/notifications');
      assert.ok(
        told.body.data.some((n: { kind: string; record: { id: number } }) => n.kind === 'webhook_disabled'),
        told.text,
      );
      // Off: nothing is sent. The failed delivery is resent once the endpoint is back on and answers.
      await app.post('/api/v1/contacts', { name: 'Gone 2' });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(to.attempts.length, 1);
      to.options.status = undefined;
      const on = await app.patch(`/api/v1/webhooks/${hook.id}`, { active: true });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.data.disabled_reason, null);
      const log = await app.get(`/api/v1/webhooks/${hook.id}/deliveries?status=failed`);
      assert.equal(log.body.data.length, 1);
      assert.equal(log.body.data[0].last_status_code, 410);
      await app.post(`/api/v1/webhooks/${hook.id}/deliveries/${log.body.data[0].id}/resend`);
      await until(
        () => to.accepted.length >= 1,
        20_000,
        () => 'the resent delivery',
      );
      assert.equal(to.accepted[0]!.event.data.name, 'Gone 1');
    });

    test('an endpoint failing for 3 days is turned off', async () => {
      const to = await receiver({ status: () => 503 });
      const hook = await endpoint(to, ['contact.created']);
      const threeDaysAgo = new Date(Date.now() - 3 * 24 * 3600_000 - 60_000).toISOString();
      await app.database.db
        .updateTable('webhooks')
        .set({ failing_since: threeDaysAgo })
        .where('id', '=', BigInt(hook.id))
        .execute();
      await app.post('/api/v1/contacts', { name: 'Still failing' });
      await until(
        () => to.attempts.length >= 1,
        20_000,
        () => 'an attempt',
      );
      let read = await app.get(`/api/v1/webhooks/${hook.id}`);
      for (let i = 0; i < 50 && read.body.data.active; i++) {
        await new Promise((r) => setTimeout(r, 100));
        read = await app.get(`/api/v1/webhooks/${hook.id}`);
      }
      assert.equal(read.body.data.active, false);
      assert.match(read.body.data.disabled_reason, /3 days/);
    });
  });
}

// SSRF (issue 16): without WEBHOOKS_ALLOW_PRIVATE, addresses inside the machine or its network are refused when the
// endpoint is saved and again when a delivery connects. Names resolve through a DNS stub on loopback
// (WEBHOOKS_DNS_SERVERS), so nothing leaves the machine: the public address it answers is never connected to.
for (const dialect of DIALECTS) {
  describe(`webhook addresses (${dialect})`, { timeout: 60_000 }, () => {
    let app: TestApp;
    let dns: DnsStub;
    let to: Receiver;
    before(async () => {
      to = await startReceiver();
      dns = await startDnsStub({
        'loopback.test': '127.0.0.1',
        'rebinding.test': { turns: [['93.184.216.34'], ['127.0.0.1']] },
      });
      app = await startApp(dialect, {
        env: {
          SCHEDULER_TICK_MS: '100',
          WEBHOOKS_RETRY_BASE_MS: '20',
          WEBHOOKS_ALLOW_PRIVATE: 'false',
          WEBHOOKS_CONCURRENCY: '16',
          WEBHOOKS_DNS_SERVERS: dns.servers.join(','),
        },
      });
    });
    after(async () => {
      await app?.close();
      await dns?.close();
      await to?.close();
    });

    test('loopback, private, link-local and metadata addresses, by number or by name, are refused with a 422', async () => {
      const port = new URL(to.url).port;
      for (const url of [
        'http://127.0.0.1/hook',
        `http://127.0.0.1:${port}/hook`,
        'http://[::1]/hook',
        'http://10.0.0.1/hook',
        'http://169.254.169.254/latest/meta-data',
        `http://loopback.test:${port}/hook`,
      ]) {
        const refused = await app.post('/api/v1/webhooks', { url, events: ['contact.created'] });
        assert.equal(refused.status, 422, `${url}: ${refused.text}`);
        assert.match(refused.body.errors.url[0], /public|resolve|address/, url);
      }
      // A name the stub does not know does not resolve: refused too (no query left the machine to find it).
      const unknown = await app.post('/api/v1/webhooks', { url: 'https://example.org/x', events: ['contact.created'] });
      assert.equal(unknown.status, 422);
      assert.ok(dns.queries('example.org') >= 1);
      assert.equal((await app.get('/api/v1/webhooks')).body.data.length, 0);
      assert.equal(to.attempts.length, 0);
    });

    test('a name that resolves elsewhere once saved is refused when the delivery connects', async () => {
      const port = new URL(to.url).port;
      const made = await app.post('/api/v1/webhooks', {
        url: `http://rebinding.test:${port}/hook`,
        events: ['contact.created'],
      });
      assert.equal(made.status, 201, made.text);
      await app.post('/api/v1/contacts', { name: 'Rebound' });
      let log = await app.get(`/api/v1/webhooks/${made.body.data.id}/deliveries`);
      for (let i = 0; i < 100 && !log.body.data[0]?.attempts; i++) {
        await new Promise((r) => setTimeout(r, 100));
        log = await app.get(`/api/v1/webhooks/${made.body.data.id}/deliveries`);
      }
      const [delivery] = log.body.data;
      assert.ok(delivery.attempts >= 1, log.text);
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.last_status_code, null);
      assert.match(delivery.last_error, /refused address 127\.0\.0\.1/);
      assert.equal(to.attempts.length, 0);
    });
  });
}

describe('webhook redirects', { timeout: 60_000 }, () => {
  test('a redirect, even to a private address, is an answer, never followed', async () => {
    const app = await startApp(DIALECTS[0]!, { env: ENV });
    const target = await startReceiver();
    const to = await startReceiver({ status: () => 302, location: target.url });
    try {
      // The receiver answers 302 to another server on loopback: it is an answer like any other, not followed.
      const made = await app.post('/api/v1/webhooks', { url: to.url, events: ['contact.created'] });
      to.secrets.push(made.body.secret);
      await app.post('/api/v1/contacts', { name: 'Redirected' });
      await until(
        () => to.attempts.length >= 2,
        20_000,
        () => 'two attempts',
      );
      const log = await app.get(`/api/v1/webhooks/${made.body.data.id}/deliveries`);
      assert.equal(log.body.data[0].last_status_code, 302);
      assert.equal(log.body.data[0].status, 'pending');
      assert.equal(target.attempts.length, 0);
    } finally {
      await app.close();
      await target.close();
      await to.close();
    }
  });
});
