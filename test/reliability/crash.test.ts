// Crash safety: clients write (create and patch) as fast as they can while
// the server is killed with SIGKILL at a random moment; after a restart on the
// same data every acknowledged write is there with exactly the acknowledged
// values, and a write that was in flight is there wholly or not at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordResources, user } from '../../src/resources/index.ts';
import type { Resource } from '../../src/schema/resource.ts';
import { DIALECTS, migratedDatabase } from '../helpers/database.ts';
import { inDependencyOrder, sampleInput } from '../helpers/samples.ts';
import {
  type Answer,
  type Api,
  api,
  countOf,
  envOf,
  random,
  recordsById,
  asListed,
  type Running,
  SOAK,
  seedOf,
  signUpAdmin,
  sleep,
  type Warm,
  warmServer,
} from './helpers/served.ts';

const ROUNDS = SOAK ? 100 : 10;
// Every record resource, derived from the declarations (accounts are written through their own doors, tested by the
// accounts suites); a writer per resource at least.
const RESOURCES = inDependencyOrder(recordResources.filter((r) => r !== user)).map((r) => r.name);
const WRITERS = Math.max(4, RESOURCES.length);
type ResourceName = string;
const declared = (name: ResourceName): Resource => recordResources.find((r) => r.name === name)!;

interface Write {
  kind: 'create' | 'patch' | 'delete';
  resource: ResourceName;
  /** The record patched or deleted; for a create, known once acknowledged. */
  id?: string;
  body: Record<string, unknown>;
}

const keyOf = (resource: string, id: unknown) => `${resource}/${String(id)}`;

/** References name the admin, or the first record of another resource (written before the rounds). */
type Anchors = Map<Resource, unknown>;

/** A whole record's worth of fields, each text tagged so a stray one is recognised (derived from the declaration). */
const createBody = (resource: ResourceName, tag: string, n: number, anchors: Anchors) =>
  sampleInput(declared(resource), n, tag, (target) => anchors.get(target));

/**
 * Every writable field, all tagged with the same request; not the title (the in-flight create is found by its title)
 * unless no other text carries the tag (a note's body; a webhook whose description is sent empty), since every patch must change something.
 */
function patchBody(resource: ResourceName, tag: string, n: number, anchors: Anchors): Record<string, unknown> {
  const { title } = declared(resource);
  const { [title.name]: _title, ...body } = createBody(resource, `p${tag}`, n + 1, anchors);
  // A text sent as null (samples leave some optional ones empty) carries no tag: the patch might change nothing.
  const tagged = declared(resource).writable.some(
    (f) => f !== title && f.kind.textual && typeof body[f.name] === 'string' && String(body[f.name]).includes(tag),
  );
  return tagged ? body : { ...body, [title.name]: _title };
}

/** Do the sent fields of `body` hold in `record`, as the API writes them back? */
function holds(record: Record<string, unknown>, body: Record<string, unknown>): boolean {
  return Object.entries(body).every(([k, v]) => {
    const got = record[k];
    if (typeof v === 'bigint' || typeof got === 'bigint') return String(got) === String(v);
    // A list or a map (an assignment rule's users, its match) is a value too.
    if (typeof v === 'object' && v !== null) return JSON.stringify(got) === JSON.stringify(v);
    return got === v;
  });
}

/**
 * The change log agrees with the record: one `created` entry, an `updated` entry per committed patch, and the last
 * value the entries wrote to a field is the field's value now. A change committed without its entry, or an entry without its change, breaks it.
 */
async function logProblems(
  client: Api,
  resource: ResourceName,
  id: bigint,
  record: Record<string, unknown>,
  patches: number,
) {
  const entries: { action: string; changes?: Record<string, [unknown, unknown]> }[] = [];
  for (let cursor = ''; ; ) {
    const page = await client.get(`/api/v1/${resource}/${id}/activity${cursor ? `?cursor=${cursor}` : ''}`);
    if (page.status !== 200) return [`${resource}/${id}: its timeline answers ${page.status}`];
    entries.push(...page.body.data);
    if (!page.body.meta.next_cursor) break;
    cursor = page.body.meta.next_cursor;
  }
  const problems: string[] = [];
  const created = entries.filter((e) => e.action === 'created').length;
  if (created !== 1) problems.push(`${resource}/${id}: ${created} created entries`);
  // Every patch that committed (each changes a tagged field) has its entry, and no other patch does.
  const own = (e: (typeof entries)[number]) =>
    Object.keys(e.changes ?? {}).some((k) => !byOthers(resource).includes(k));
  const updated = entries.filter((e) => e.action === 'updated' && own(e)).length;
  if (updated !== patches) problems.push(`${resource}/${id}: ${updated} updated entries for ${patches} patches`);
  const latest: Record<string, unknown> = {};
  for (const entry of entries.toReversed())
    for (const [name, [, to]] of Object.entries(entry.changes ?? {})) latest[name] = to;
  if (!holds(record, ownPart(resource, latest) as Record<string, unknown>))
    problems.push(`${resource}/${id}: the change log disagrees with the record`);
  return problems;
}

const same = (a: unknown, b: unknown) => {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
};

/**
 * Fields the server changes when another record is written (an inquiry's first response, set by a note on it) or as
 * time passes (`overdue`): a record's acknowledged state is the rest.
 */
const byOthers = (name: ResourceName) => {
  const r = declared(name);
  return [
    ...r.fields.filter((f) => f.readOnly && !f.timestamp && !f.primary && !f.derive && !f.hidden).map((f) => f.name),
    ...Object.keys(r.computed),
  ];
};
const ownPart = (name: ResourceName, record: unknown) =>
  record && typeof record === 'object'
    ? Object.fromEntries(Object.entries(record).filter(([k]) => !byOthers(name).includes(k)))
    : record;
/** The same acknowledged state (see byOthers). */
const sameRecord = (name: ResourceName, a: unknown, b: unknown) => same(ownPart(name, a), ownPart(name, b));

for (const dialect of DIALECTS) {
  describe(`crash safety (${dialect})`, () => {
    test(`every acknowledged write survives SIGKILL, nothing is half-written (${ROUNDS} rounds)`, {
      timeout: SOAK ? 3_600_000 : 240_000,
    }, async (t) => {
      const seed = seedOf();
      const rand = random(seed);
      const fresh = await migratedDatabase(dialect);
      const env = envOf(fresh);
      const warming: Promise<Warm>[] = [];
      let server: Running | undefined;
      const stats = {
        rounds: 0,
        creates: 0,
        patches: 0,
        deletes: 0,
        inFlight: 0,
        inFlightApplied: 0,
        failures: 0,
        lost: 0,
      };
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
        /** How many patches of each record committed (acknowledged, or in flight and found applied). */
        const patched = new Map<string, number>();
        // What a new install holds already (the default pipeline's stages), and then every record written.
        const admins = api(server.url, admin.token);
        const totals: Record<ResourceName, number> = Object.fromEntries(
          await Promise.all(RESOURCES.map(async (r) => [r, await countOf(admins, r)] as const)),
        );
        const anchors: Anchors = new Map([[user, admin.id]]);
        for (const [i, resource] of RESOURCES.entries()) {
          const created = await api(server.url, admin.token).request('POST', `/api/v1/${resource}`, {
            json: createBody(resource, `anchor${i}`, i, anchors),
          });
          assert.equal(created.status, 201, created.text);
          anchors.set(declared(resource), created.body.data.id);
          expected.set(keyOf(resource, created.body.data.id), asListed(created.body.data));
          totals[resource] = (totals[resource] ?? 0) + 1;
        }
        const owned: string[][] = Array.from({ length: WRITERS }, () => []);
        /** The records whose deletion committed (acknowledged, or in flight and found applied) this round. */
        const deleted = new Set<string>();
        const gone = (key: string) => {
          expected.delete(key);
          etags.delete(key);
          deleted.add(key);
          totals[key.split('/')[0]!]!--;
          stats.deletes++;
        };
        const failures: string[] = [];
        let n = 0;

        for (let round = 1; round <= ROUNDS; round++) {
          // The next server has loaded (it loads during the check of the last round): the writers get the machine.
          await warming[0];
          const client: Api = api(server.url, admin.token);
          const inFlight: (Write | null)[] = Array(WRITERS).fill(null);
          const touched = new Set<string>();
          deleted.clear();
          let stopped = false;
          const writer = async (w: number) => {
            const resource = RESOURCES[w % RESOURCES.length]!;
            while (!stopped) {
              const mine = owned[w]!;
              const tag = `r${round}w${w}n${++n}`;
              const roll = rand();
              // (A writer per resource: with seven of them each gets a few writes a round, so one in five deletes.)
              const write: Write =
                mine.length > 1 && roll < 0.2
                  ? { kind: 'delete', resource, id: mine.splice(Math.floor(rand() * mine.length), 1)[0]!, body: {} }
                  : mine.length && roll < 0.5
                    ? {
                        kind: 'patch',
                        resource,
                        id: mine[Math.floor(rand() * mine.length)]!,
                        body: patchBody(resource, tag, n, anchors),
                      }
                    : { kind: 'create', resource, body: createBody(resource, tag, n, anchors) };
              inFlight[w] = write;
              let answer: Answer;
              try {
                answer =
                  write.kind === 'create'
                    ? await client.request('POST', `/api/v1/${resource}`, { json: write.body })
                    : write.kind === 'delete'
                      ? await client.request('DELETE', `/api/v1/${resource}/${write.id}`)
                      : await client.request('PATCH', `/api/v1/${resource}/${write.id}`, { json: write.body });
              } catch {
                return; // the server is gone: the outcome of this write is unknown
              }
              inFlight[w] = null;
              if (write.kind === 'delete') {
                if (answer.status !== 204)
                  failures.push(`delete ${resource}: ${answer.status} ${answer.text.slice(0, 200)}`);
                else gone(keyOf(resource, write.id));
                continue;
              }
              if (answer.status !== (write.kind === 'create' ? 201 : 200)) {
                failures.push(`${write.kind} ${resource}: ${answer.status} ${answer.text.slice(0, 200)}`);
                continue;
              }
              const record = answer.body.data;
              const key = keyOf(resource, record.id);
              if (!holds(record, write.body))
                failures.push(`${write.kind} ${key} answered other values than were sent`);
              expected.set(key, asListed(record));
              etags.set(key, answer.headers.get('etag')!);
              touched.add(key);
              if (write.kind === 'create') {
                mine.push(String(record.id));
                totals[resource] = (totals[resource] ?? 0) + 1;
                stats.creates++;
              } else {
                stats.patches++;
                patched.set(key, (patched.get(key) ?? 0) + 1);
              }
            }
          };
          const settled = () => stats.creates + stats.patches + stats.deletes;
          const before = settled();
          const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
          await sleep(100 + Math.floor(rand() * 500));
          // On a loaded machine fewer answers come in that time: the kill waits (at most 10 s) for two writes a
          // writer, so that every round kills a server that is taking writes and the writers own records to delete.
          const enough = before + 2 * WRITERS;
          for (const until = Date.now() + 10_000; settled() < enough && Date.now() < until; ) await sleep(20);
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
              const title = declared(write.resource).title.name;
              const name = String(write.body[title]);
              const found = await after.get(`/api/v1/${write.resource}?filter[${title}]=${encodeURIComponent(name)}`);
              assert.equal(found.status, 200, found.text);
              const rows = found.body.data as Record<string, unknown>[];
              if (rows.length > 1) problems.push(`in-flight create ${name} is there ${rows.length} times`);
              if (rows.length === 1) {
                if (!holds(rows[0]!, write.body))
                  problems.push(
                    `in-flight create ${name} is half there: ${JSON.stringify(rows[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
                  );
                const key = keyOf(write.resource, rows[0]!.id);
                expected.set(key, rows[0]!);
                etags.delete(key);
                touched.add(key);
                totals[write.resource] = (totals[write.resource] ?? 0) + 1;
                stats.inFlightApplied++;
              }
            } else if (write.kind === 'delete') {
              // There wholly (its entry and its trash item too), or not at all.
              const key = keyOf(write.resource, write.id);
              const now = (await recordsById(after, write.resource, [BigInt(write.id!)])).get(write.id!);
              if (!now) {
                gone(key);
                stats.inFlightApplied++;
              } else if (!sameRecord(write.resource, now, expected.get(key)))
                problems.push(`${key}: changed by a delete in flight`);
            } else {
              const key = keyOf(write.resource, write.id);
              const now = (await recordsById(after, write.resource, [BigInt(write.id!)])).get(write.id!);
              const before = expected.get(key)!;
              if (!now) {
                problems.push(`${key} vanished while a patch of it was in flight`);
                continue;
              }
              if (sameRecord(write.resource, now, before)) continue;
              type Fields = Record<string, unknown>;
              const { updated_at: _u, ...rest } = ownPart(write.resource, { ...before, ...write.body }) as Fields;
              const { updated_at: _v, ...nowRest } = ownPart(write.resource, now) as Fields;
              if (holds(nowRest, rest) && Object.keys(nowRest).length === Object.keys(rest).length) {
                expected.set(key, now);
                etags.delete(key);
                stats.inFlightApplied++;
                patched.set(key, (patched.get(key) ?? 0) + 1);
              } else {
                problems.push(`${key}: an in-flight patch is half applied`);
              }
            }
          }
          // Every acknowledged write of this round, exactly as acknowledged.
          for (const resource of RESOURCES) {
            const ids = [...touched]
              .filter((k) => k.startsWith(`${resource}/`) && !deleted.has(k))
              .map((k) => BigInt(k.split('/')[1]!));
            const stored = await recordsById(after, resource, ids);
            for (const id of ids) {
              const key = keyOf(resource, id);
              const got = stored.get(String(id));
              if (!got) problems.push(`${key} was acknowledged and is gone`);
              else if (!sameRecord(resource, got, expected.get(key)))
                problems.push(`${key} differs from what was acknowledged`);
              else problems.push(...(await logProblems(after, resource, id, got, patched.get(key) ?? 0)));
            }
            const total = await countOf(after, resource);
            if (total !== totals[resource])
              problems.push(`${resource}: ${total} records, expected ${totals[resource]}`);
          }
          // Each deletion is in the trash, and each of this round's trash items is a record that is gone.
          const trashed = new Set<string>();
          for (let cursor = ''; ; ) {
            const page = await after.get(`/api/v1/trash${cursor ? `?cursor=${cursor}` : ''}`);
            assert.equal(page.status, 200, page.text);
            for (const item of page.body.data) trashed.add(keyOf(item.resource, item.id));
            cursor = page.body.meta.next_cursor;
            if (!cursor) break;
          }
          for (const key of deleted) {
            // A resource without a trash (a source, a saved view) is deleted for good.
            if (declared(key.split('/')[0]!).trash && !trashed.has(key))
              problems.push(`${key} was deleted and is not in the trash (no log entry)`);
            if ((await after.get(`/api/v1/${key}`)).status !== 404) problems.push(`${key} was deleted and is there`);
          }
          const stillThere = [...trashed].filter((key) => expected.has(key));
          if (stillThere.length) problems.push(`in the trash but not deleted: ${stillThere.join(', ')}`);
          // The ETag is the acknowledged one too (a few records per round).
          for (const key of [...touched].filter((k) => etags.has(k)).slice(0, 3)) {
            const read = await after.get(`/api/v1/${key}`);
            // A change by another record's write (see byOthers) is a new representation, with a new ETag.
            const changedByOthers = !same(read.body.data, expected.get(key));
            if (read.headers.get('etag') !== etags.get(key) && !changedByOthers)
              problems.push(`${key}: ETag ${read.headers.get('etag')} is not the acknowledged ${etags.get(key)}`);
          }
          stats.lost += problems.filter((p) => /gone|differs|vanished/.test(p)).length;
          stats.rounds++;
          assert.deepEqual(problems, [], `round ${round} (seed ${seed})`);
        }

        // At the end, every record ever acknowledged, from every round.
        const client = api(server.url, admin.token);
        for (const resource of RESOURCES) {
          const keys = [...expected.keys()].filter((k) => k.startsWith(`${resource}/`));
          const stored = await recordsById(
            client,
            resource,
            keys.map((k) => BigInt(k.split('/')[1]!)),
          );
          const wrong = keys.filter((k) => !sameRecord(resource, stored.get(k.split('/')[1]!), expected.get(k)));
          stats.lost += wrong.length;
          assert.deepEqual(wrong, [], `records that differ from their acknowledged state at the end (seed ${seed})`);
          assert.equal(
            await countOf(client, resource),
            totals[resource],
            `${resource}: no record beyond those written`,
          );
        }
        stats.failures = failures.length;
        assert.deepEqual(failures, [], 'no write was refused or answered wrongly before the kill');
        assert.ok(stats.creates > ROUNDS, `the writers got writes through (${stats.creates} creates)`);
        assert.ok(stats.patches > 0, `the writers patched records (${stats.patches})`);
        assert.ok(stats.deletes > 0, `the writers deleted records (${stats.deletes})`);
      } finally {
        t.diagnostic(
          `reliability crash ${dialect}: rounds=${stats.rounds} acknowledged_creates=${stats.creates} acknowledged_patches=${stats.patches} deletes=${stats.deletes} in_flight=${stats.inFlight} in_flight_applied=${stats.inFlightApplied} failures=${stats.failures} lost_writes=${stats.lost} seed=${seed}`,
        );
        await server?.kill('SIGKILL');
        for (const warm of warming) await (await warm.catch(() => null))?.discard();
        await fresh.drop();
      }
    });
  });
}
