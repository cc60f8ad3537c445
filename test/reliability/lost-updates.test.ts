// No lost updates: many clients PATCH the same record at once. With If-Match,
// exactly one succeeds per version and the others get 412, so the record ends
// as the serial history of the winners. Without If-Match the last writer wins,
// and no record ever mixes the fields of two requests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { SOAK } from './helpers/served.ts';

const ROUNDS = SOAK ? 300 : 25;
const CLIENTS = 8;
const BIG = 2n ** 60n;

/** A service and a source for each client, made before the rounds: the references a request sets name one of them. */
let services: unknown[] = [];
let sources: unknown[] = [];
/** The `n`-th of `ids`: the eight clients of a round name eight different ones. */
const nth = (ids: unknown[], n: number) => ids[n % ids.length];

/** Several fields of a contact, all tagged with one request. */
const tagged = (tag: string, n: number) => ({
  name: `name ${tag}`,
  phone: `phone ${tag}`,
  city: `city ${tag}`,
  detail: `detail ${tag} ✓`,
  budget: `budget ${tag}`,
  service_id: nth(services, n),
});

/** Every field of an inquiry a client may set, all tagged with one request. */
const taggedInquiry = (tag: string, n: number) => ({
  name: `name ${tag}`,
  email: `${tag}@example.com`,
  phone: `phone ${tag}`,
  occupation: `occ ${tag}`,
  address: `addr ${tag}`,
  country: `country ${tag}`,
  city: `city ${tag}`,
  service_id: nth(services, n),
  source_id: nth(sources, n + 1),
  detail: `detail ${tag}`,
  budget: `budget ${tag}`,
  inquiry_country: `ic ${tag}`,
  ticket_id: BIG + BigInt(n),
  ticket_date: new Date(Date.UTC(2026, 0, 1, 0, 0, n % 86_400)).toISOString(),
});

/** The tags a record's fields carry (one tag: the fields came from one request). */
function tagsOf(record: Record<string, unknown>, body: Record<string, unknown>): Set<string> {
  const tags = new Set<string>();
  for (const [field, value] of Object.entries(body)) {
    const got = record[field];
    if (typeof value === 'string' && /r\d+c\d+/.test(value))
      tags.add(String(got).match(/r\d+c\d+/)?.[0] ?? `unknown ${field}=${String(got)}`);
  }
  return tags;
}

const withoutUpdatedAt = (record: Record<string, unknown>) => {
  const { updated_at: _ignored, ...rest } = record;
  return rest;
};

for (const dialect of DIALECTS) {
  describe(`no lost updates (${dialect})`, () => {
    let app: TestApp;
    before(
      async () => {
        app = await startApp(dialect);
        const made = async (resource: string) => {
          const ids: unknown[] = [];
          for (let c = 0; c < CLIENTS; c++) {
            const reply = await app.post(`/api/v1/${resource}`, { name: `${resource} ${c}` });
            assert.equal(reply.status, 201, reply.text);
            ids.push(reply.body.data.id);
          }
          return ids;
        };
        services = await made('services');
        sources = await made('sources');
      },
      { timeout: 60_000 },
    );
    after(() => app?.close(), { timeout: 30_000 });

    test(`with If-Match, one of ${CLIENTS} concurrent PATCHes wins each version; the rest get 412 (${ROUNDS} rounds)`, {
      timeout: SOAK ? 600_000 : 60_000,
    }, async (t) => {
      const created = await app.post('/api/v1/contacts', { name: 'Contested', city: 'start', country: 'NL' });
      assert.equal(created.status, 201, created.text);
      const path = `/api/v1/contacts/${created.body.data.id}`;
      let expected: Record<string, unknown> = created.body.data;
      let etag = created.headers.get('etag')!;
      let requests = 0;
      const unexpected: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const bodies = Array.from({ length: CLIENTS }, (_, c) => tagged(`r${round}c${c}`, round * 100 + c));
        const answers = await Promise.all(bodies.map((body) => app.patch(path, body, { 'if-match': etag })));
        requests += answers.length;
        const won = answers.flatMap((a, c) => (a.status === 200 ? [c] : []));
        for (const a of answers) {
          if (a.status === 200) continue;
          if (
            a.status !== 412 ||
            a.body?.code !== 'precondition_failed' ||
            !/^application\/problem\+json/.test(a.headers.get('content-type') ?? '')
          ) {
            unexpected.push(`round ${round}: ${a.status} ${a.text.slice(0, 200)}`);
          }
        }
        assert.equal(won.length, 1, `round ${round}: exactly one PATCH wins version ${etag}, not ${won.length}`);
        const winner = answers[won[0]!]!;
        // The winner's change applied to the previous version, and nothing else.
        assert.deepEqual(
          withoutUpdatedAt(winner.body.data),
          withoutUpdatedAt({ ...expected, ...bodies[won[0]!] }),
          `round ${round}: the winner's answer`,
        );
        expected = winner.body.data;
        etag = winner.headers.get('etag')!;
      }
      const final = await app.get(path);
      assert.deepEqual(final.body.data, expected, 'the record is the serial history of the winning PATCHes');
      assert.equal(final.headers.get('etag'), etag);
      assert.deepEqual(unexpected, [], 'every losing PATCH is a 412 precondition_failed problem');
      t.diagnostic(
        `reliability lost-updates if-match ${dialect}: rounds=${ROUNDS} requests=${requests} failures=${unexpected.length} lost_writes=0`,
      );
    });

    test(`without If-Match, the last writer wins and no record mixes two requests' fields (${ROUNDS} rounds)`, {
      timeout: SOAK ? 600_000 : 60_000,
    }, async (t) => {
      const created = await app.post('/api/v1/inquiries', { name: 'Contested inquiry', status: true });
      assert.equal(created.status, 201, created.text);
      const path = `/api/v1/inquiries/${created.body.data.id}`;
      let requests = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const bodies = Array.from({ length: CLIENTS }, (_, c) => taggedInquiry(`r${round}c${c}`, round * 100 + c));
        const answers = await Promise.all(bodies.map((body) => app.patch(path, body)));
        requests += answers.length;
        answers.forEach((a, c) => {
          assert.equal(a.status, 200, `round ${round}, client ${c}: ${a.text}`);
          assert.deepEqual(
            [...tagsOf(a.body.data, bodies[c]!)],
            [`r${round}c${c}`],
            `round ${round}: client ${c}'s answer holds its own fields only`,
          );
        });
        const final = await app.get(path);
        const tags = [...tagsOf(final.body.data, bodies[0]!)];
        assert.equal(
          tags.length,
          1,
          `round ${round}: the record's fields come from one request, not ${tags.join(', ')}`,
        );
        const last = Number(tags[0]!.split('c')[1]);
        assert.deepEqual(
          final.body.data,
          answers[last]!.body.data,
          `round ${round}: the record is what the last writer was answered`,
        );
        assert.equal(final.headers.get('etag'), answers[last]!.headers.get('etag'));
        for (const [field, value] of Object.entries(bodies[last]!)) {
          assert.equal(String(final.body.data[field]), String(value), `round ${round}: ${field} is the last writer's`);
        }
      }
      t.diagnostic(
        `reliability lost-updates last-writer ${dialect}: rounds=${ROUNDS} requests=${requests} failures=0 lost_writes=0`,
      );
    });
  });
}
