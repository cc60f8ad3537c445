// Crash safety: clients write (create and patch) as fast as they can while
// the server is killed with SIGKILL at a random moment; after a restart on the
// same data every acknowledged write is there with exactly the acknowledged
// values, and a write that was in flight is there wholly or not at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIALECTS, freshDatabase } from '../helpers/database.ts';
import { type Answer, type Api, api, countOf, envOf, random, recordsById, type Running, SOAK, seedOf, signUpAdmin, sleep, type Warm, warmServer } from './helpers/served.ts';

const ROUNDS = SOAK ? 100 : 10;
const WRITERS = 4;
const RESOURCES = ['contacts', 'inquiries'] as const;
type ResourceName = (typeof RESOURCES)[number];

interface Write {
  kind: 'create' | 'patch';
  resource: ResourceName;
  /** The record patched; for a create, known once acknowledged. */
  id?: string;
  body: Record<string, unknown>;
}

const keyOf = (resource: string, id: unknown) => `${resource}/${String(id)}`;
const BIG = 2n ** 53n;

/** A whole record's worth of fields, each value tagged so a stray one is recognised. */
function createBody(resource: ResourceName, tag: string, n: number, adminId: number | bigint): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: `${tag} Zoë`, email: `${tag}@example.com`, phone: `+1 555 ${n}`, occupation: `occ ${tag}`,
    address: `${n} Main St ✓`, country: 'NL', city: `city ${tag}`, service_id: n % 1000, source_id: (n * 7) % 1000,
    detail: `detail ${tag} — ${'x'.repeat(n % 200)}`, budget: `${n} EUR`,
  };
  if (resource === 'inquiries') {
    Object.assign(body, {
      inquiry_country: `IC ${tag}`, inquiry_status: n % 2 === 0, status: [true, false, null][n % 3], inquiry_type: n % 5 === 0 ? null : true,
      assigned_to: adminId, ticket_id: BIG + BigInt(n), ticket_date: new Date(Date.UTC(2026, 0, 1 + (n % 300))).toISOString(),
    });
  }
  return body;
}

/** Several fields at once, all tagged with the same request. */
function patchBody(resource: ResourceName, tag: string, n: number): Record<string, unknown> {
  const body: Record<string, unknown> = { phone: `patched ${tag}`, city: `pcity ${tag}`, detail: `pdetail ${tag}`, budget: `${n} USD`, service_id: n % 100_000 };
  if (resource === 'inquiries') Object.assign(body, { ticket_id: BIG * 2n + BigInt(n), status: [false, null, true][n % 3], inquiry_country: `PIC ${tag}` });
  return body;
}

/** Do the sent fields of `body` hold in `record`, as the API writes them back? */
function holds(record: Record<string, unknown>, body: Record<string, unknown>): boolean {
  return Object.entries(body).every(([k, v]) => {
    const got = record[k];
    if (typeof v === 'bigint' || typeof got === 'bigint') return String(got) === String(v);
    return got === v;
  });
}

const same = (a: unknown, b: unknown) => {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
};

for (const dialect of DIALECTS) {
  describe(`crash safety (${dialect})`, () => {
    test(`every acknowledged write survives SIGKILL, nothing is half-written (${ROUNDS} rounds)`, { timeout: SOAK ? 3_600_000 : 240_000 }, async (t) => {
      const seed = seedOf();
      const rand = random(seed);
      const fresh = await freshDatabase(dialect);
      const env = envOf(fresh);
      const warming: Promise<Warm>[] = [];
      let server: Running | undefined;
      const stats = { rounds: 0, creates: 0, patches: 0, inFlight: 0, inFlightApplied: 0, failures: 0, lost: 0 };
      try {
        // The next two servers load while the current one is under test.
        warming.push(warmServer(env), warmServer(env));
        const restart = async () => {
          const started = await (await warming.shift()!).start();
          warming.push(warmServer(env));
          return started;
        };
        server = await restart();
        const admin = await signUpAdmin(server.url);
        /** The acknowledged state of every record, and its ETag when the acknowledgement is the latest word. */
        const expected = new Map<string, Record<string, unknown>>();
        const etags = new Map<string, string>();
        const totals: Record<ResourceName, number> = { contacts: 0, inquiries: 0 };
        const owned: string[][] = Array.from({ length: WRITERS }, () => []);
        const failures: string[] = [];
        let n = 0;

        for (let round = 1; round <= ROUNDS; round++) {
          // The next server has loaded (it loads during the check of the last round): the writers get the machine.
          await warming[0];
          const client: Api = api(server.url, admin.token);
          const inFlight: (Write | null)[] = Array(WRITERS).fill(null);
          const touched = new Set<string>();
          let stopped = false;
          const writer = async (w: number) => {
            const resource = RESOURCES[w % 2]!;
            while (!stopped) {
              const mine = owned[w]!;
              const tag = `r${round}w${w}n${++n}`;
              const write: Write = mine.length && rand() < 0.5
                ? { kind: 'patch', resource, id: mine[Math.floor(rand() * mine.length)]!, body: patchBody(resource, tag, n) }
                : { kind: 'create', resource, body: createBody(resource, tag, n, admin.id) };
              inFlight[w] = write;
              let answer: Answer;
              try {
                answer = write.kind === 'create'
                  ? await client.request('POST', `/api/v1/${resource}`, { json: write.body })
                  : await client.request('PATCH', `/api/v1/${resource}/${write.id}`, { json: write.body });
              } catch {
                return; // the server is gone: the outcome of this write is unknown
              }
              inFlight[w] = null;
              if (answer.status !== (write.kind === 'create' ? 201 : 200)) {
                failures.push(`${write.kind} ${resource}: ${answer.status} ${answer.text.slice(0, 200)}`);
                continue;
              }
              const record = answer.body.data;
              const key = keyOf(resource, record.id);
              if (!holds(record, write.body)) failures.push(`${write.kind} ${key} answered other values than were sent`);
              expected.set(key, record);
              etags.set(key, answer.headers.get('etag')!);
              touched.add(key);
              if (write.kind === 'create') {
                mine.push(String(record.id));
                totals[resource]++;
                stats.creates++;
              } else stats.patches++;
            }
          };
          const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
          await sleep(100 + Math.floor(rand() * 500));
          await server.kill('SIGKILL');
          stopped = true;
          await Promise.all(writers);

          server = await restart();
          const after = api(server.url, admin.token);
          const problems: string[] = [];
          // A write in flight at the kill: there wholly, or not at all.
          for (const write of inFlight) {
            if (!write) continue;
            stats.inFlight++;
            if (write.kind === 'create') {
              const name = String(write.body.name);
              const found = await after.get(`/api/v1/${write.resource}?filter[name]=${encodeURIComponent(name)}`);
              assert.equal(found.status, 200, found.text);
              const rows = found.body.data as Record<string, unknown>[];
              if (rows.length > 1) problems.push(`in-flight create ${name} is there ${rows.length} times`);
              if (rows.length === 1) {
                if (!holds(rows[0]!, write.body)) problems.push(`in-flight create ${name} is half there: ${JSON.stringify(rows[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
                const key = keyOf(write.resource, rows[0]!.id);
                expected.set(key, rows[0]!);
                etags.delete(key);
                touched.add(key);
                totals[write.resource]++;
                stats.inFlightApplied++;
              }
            } else {
              const key = keyOf(write.resource, write.id);
              const now = (await recordsById(after, write.resource, [BigInt(write.id!)])).get(write.id!);
              const before = expected.get(key)!;
              if (!now) { problems.push(`${key} vanished while a patch of it was in flight`); continue; }
              if (same(now, before)) continue;
              const { updated_at: _u, ...rest } = { ...before, ...write.body };
              const { updated_at: _v, ...nowRest } = now;
              if (holds(nowRest, rest) && Object.keys(nowRest).length === Object.keys(rest).length) {
                expected.set(key, now);
                etags.delete(key);
                stats.inFlightApplied++;
              } else {
                problems.push(`${key}: an in-flight patch is half applied`);
              }
            }
          }
          // Every acknowledged write of this round, exactly as acknowledged.
          for (const resource of RESOURCES) {
            const ids = [...touched].filter((k) => k.startsWith(`${resource}/`)).map((k) => BigInt(k.split('/')[1]!));
            const stored = await recordsById(after, resource, ids);
            for (const id of ids) {
              const key = keyOf(resource, id);
              const got = stored.get(String(id));
              if (!got) problems.push(`${key} was acknowledged and is gone`);
              else if (!same(got, expected.get(key))) problems.push(`${key} differs from what was acknowledged`);
            }
            const total = await countOf(after, resource);
            if (total !== totals[resource]) problems.push(`${resource}: ${total} records, expected ${totals[resource]}`);
          }
          // The ETag is the acknowledged one too (a few records per round).
          for (const key of [...touched].filter((k) => etags.has(k)).slice(0, 3)) {
            const read = await after.get(`/api/v1/${key}`);
            if (read.headers.get('etag') !== etags.get(key)) problems.push(`${key}: ETag ${read.headers.get('etag')} is not the acknowledged ${etags.get(key)}`);
          }
          stats.lost += problems.filter((p) => /gone|differs|vanished/.test(p)).length;
          stats.rounds++;
          assert.deepEqual(problems, [], `round ${round} (seed ${seed})`);
        }

        // At the end, every record ever acknowledged, from every round.
        const client = api(server.url, admin.token);
        for (const resource of RESOURCES) {
          const keys = [...expected.keys()].filter((k) => k.startsWith(`${resource}/`));
          const stored = await recordsById(client, resource, keys.map((k) => BigInt(k.split('/')[1]!)));
          const wrong = keys.filter((k) => !same(stored.get(k.split('/')[1]!), expected.get(k)));
          stats.lost += wrong.length;
          assert.deepEqual(wrong, [], `records that differ from their acknowledged state at the end (seed ${seed})`);
          assert.equal(await countOf(client, resource), totals[resource], `${resource}: no record beyond those written`);
        }
        stats.failures = failures.length;
        assert.deepEqual(failures, [], 'no write was refused or answered wrongly before the kill');
        assert.ok(stats.creates > ROUNDS, `the writers got writes through (${stats.creates} creates)`);
        assert.ok(stats.patches > 0, `the writers patched records (${stats.patches})`);
      } finally {
        t.diagnostic(`reliability crash ${dialect}: rounds=${stats.rounds} acknowledged_creates=${stats.creates} acknowledged_patches=${stats.patches} in_flight=${stats.inFlight} in_flight_applied=${stats.inFlightApplied} failures=${stats.failures} lost_writes=${stats.lost} seed=${seed}`);
        await server?.kill('SIGKILL');
        for (const warm of warming) await (await warm.catch(() => null))?.discard();
        await fresh.drop();
      }
    });
  });
}
