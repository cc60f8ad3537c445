// Suite 6, fuzzing: requests generated with fast-check from the app's own
// OpenAPI document — every route and method in it, with bodies, query strings,
// headers and path ids, valid-looking and broken — sent as the admin, as an
// agent and as nobody, on each database. Whatever comes in: no 5xx; every 4xx
// is problem+json whose status is the HTTP status and which has a code; a
// rejected write leaves contacts, inquiries and users as they were (a digest of
// every row, through the test's own connection, before and after); reads change
// nothing; and the built-in prototypes are never polluted.
//
// CI sends at least 2,000 requests in all (split over the databases); the soak
// run (LEADBOOK_SOAK=1) 50,000. A failure prints fast-check's seed and path:
// LEADBOOK_TEST_DIALECTS=… LEADBOOK_FUZZ_SEED=… LEADBOOK_FUZZ_PATH=… replays it.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { recordResources, user } from '../../src/resources/index.ts';
import type { Resource } from '../../src/schema/resource.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/database.ts';
import { inDependencyOrder, sampleInput } from '../helpers/samples.ts';
import {
  type Digest,
  digestChanges,
  digestOf,
  describe as describeRequest,
  fieldNamesOf,
  formBodyArb,
  formsOf,
  type FuzzRequest,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  type PageForm,
  type Principal,
  prototypeFingerprint,
  requestArb,
} from './helpers/fuzz.ts';
import { csrfOf, pageSignIn } from './helpers/security.ts';
import type { Role } from '../../src/schema/roles.ts';

const SOAK = Boolean(process.env.LEADBOOK_SOAK);
const TOTAL_CASES = SOAK ? 50_000 : 2_000;
const CASES = Math.ceil(TOTAL_CASES / Math.max(1, DIALECTS.length));
// The pages' forms are not in the OpenAPI document; they get a share of their own.
const FORM_CASES = Math.ceil((SOAK ? 10_000 : 300) / Math.max(1, DIALECTS.length));
// Chosen here and printed at the start, so that even a run cut short can be replayed (with
// LEADBOOK_TEST_DIALECTS set to the one database it ran on); each database gets its own.
const SEED_GIVEN = process.env.LEADBOOK_FUZZ_SEED ? Number(process.env.LEADBOOK_FUZZ_SEED) : undefined;
const seedFor = () => SEED_GIVEN ?? Math.floor(Math.random() * 2 ** 31);
const PATH = process.env.LEADBOOK_FUZZ_PATH;
// A generous bound: CI's run takes a fraction of it; shrinking a failure takes the rest.
const TIME_LIMIT_MS = SOAK ? 30 * 60_000 : 150_000;

interface Reply {
  status: number;
  type: string;
  text: string;
}

/** The accounts the requests go as, kept working whatever the requests do to them. */
/** An account's sign-in columns as stored. */
const original = (row: { email: unknown; password: unknown; role: Role }) => ({
  email: String(row.email),
  password: String(row.password),
  role: row.role,
});

class Principals {
  readonly tokens: Record<Exclude<Principal, 'none'>, string>;
  agent = { id: 0n, email: 'agent@example.com', password: 'agent pass phrase 4711' };
  private originals = new Map<string, { email: string; password: string; role: Role }>();

  constructor(private app: TestApp) {
    this.tokens = { admin: app.admin.token, agent: '' };
  }

  async setUp(): Promise<void> {
    const created = await this.app.post('/api/v1/users', {
      name: 'Agent',
      email: this.agent.email,
      password: this.agent.password,
      role: 'agent',
    });
    assert.equal(created.status, 201, created.text);
    this.agent.id = BigInt(created.body.data.id);
    this.tokens.agent = await this.issue(this.agent.email, this.agent.password);
    for (const id of [this.app.admin.id, this.agent.id]) {
      const row = await this.app.database.db
        .selectFrom('users')
        .select(['email', 'password', 'role'])
        .where('id', '=', Number(id))
        .executeTakeFirstOrThrow();
      this.originals.set(String(id), original(row));
    }
  }

  private async issue(email: string, password: string): Promise<string> {
    const issued = await this.app.request('POST', '/api/v1/auth/token', {
      json: { email, password, device_name: 'fuzz' },
      token: null,
    });
    assert.equal(issued.status, 201, `a token for ${email}: ${issued.text}`);
    return issued.body.token;
  }

  /**
   * Puts the two accounts back as they were after a request changed accounts: the
   * admin the only admin (so it can be neither deleted nor demoted), both with
   * their own email, password and role, unlocked, each with a working token.
   */
  async repair(): Promise<void> {
    const { db } = this.app.database;
    await db
      .updateTable('users')
      .set({ role: 'agent' })
      .where('role', '=', 'admin')
      .where('id', '!=', Number(this.app.admin.id))
      .execute();
    // Active again too: a request may have deactivated one.
    for (const [id, signIn] of this.originals)
      await db
        .updateTable('users')
        .set({ ...signIn, active: sql`true` })
        .where('id', '=', Number(id))
        .execute();
    await db.updateTable('account_states').set({ consecutive_failures: 0, reset_required: false }).execute();
    await db.deleteFrom('rate_limits').where('key', 'like', 'login:%').execute();
    const works = async (token: string) => (await this.app.request('GET', '/api/v1/me', { token })).status === 200;
    if (!(await works(this.tokens.admin)))
      this.tokens.admin = await this.issue(this.app.admin.email, this.app.admin.password);
    this.app.admin.token = this.tokens.admin;
    const agentRow = await db
      .selectFrom('users')
      .select('id')
      .where('id', '=', Number(this.agent.id))
      .executeTakeFirst();
    if (!agentRow) {
      // The admin deleted the agent: a new one, with the same credentials.
      this.originals.delete(String(this.agent.id));
      await this.setUp();
      this.originals.delete(String(this.app.admin.id));
      const row = await db
        .selectFrom('users')
        .select(['email', 'password', 'role'])
        .where('id', '=', Number(this.app.admin.id))
        .executeTakeFirstOrThrow();
      this.originals.set(String(this.app.admin.id), original(row));
    } else if (!(await works(this.tokens.agent))) {
      this.tokens.agent = await this.issue(this.agent.email, this.agent.password);
    }
  }
}

async function send(app: TestApp, principals: Principals, request: FuzzRequest): Promise<Reply> {
  const headers: Record<string, string> = { ...request.headers };
  if (headers.authorization === undefined && request.principal !== 'none')
    headers.authorization = `Bearer ${principals.tokens[request.principal]}`;
  let body: BodyInit | undefined;
  if (request.body?.kind === 'bytes') body = new Uint8Array(request.body.bytes);
  else if (request.body?.kind === 'form') {
    const form = new FormData();
    for (const part of request.body.parts) {
      if (part.filename === undefined && typeof part.content === 'string') form.append(part.name, part.content);
      else
        form.append(
          part.name,
          new Blob(
            [typeof part.content === 'string' ? part.content : new Uint8Array(part.content)],
            part.type ? { type: part.type } : {},
          ),
          part.filename ?? 'blob',
        );
    }
    body = form;
  }
  const res = await fetch(app.url + request.url, {
    method: request.method,
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The problems with one answer, as lines; none when it is fine. */
function answerProblems(request: FuzzRequest, reply: Reply): string[] {
  const problems: string[] = [];
  const ok =
    (reply.status >= 200 && reply.status < 300) || reply.status === 304 || (reply.status >= 400 && reply.status < 500);
  if (!ok) problems.push(`answered ${reply.status}`);
  // Outside /api/ (/healthz, /readyz) a browser that asked for HTML gets the web app's not-found page, by design.
  const page =
    !request.url.startsWith('/api/') &&
    /text\/html/.test(request.headers.accept ?? '') &&
    reply.status === 404 &&
    /^text\/html/.test(reply.type);
  if (reply.status >= 400 && !page) {
    if (!/^application\/problem\+json\b/.test(reply.type))
      problems.push(`a ${reply.status} as ${reply.type || 'no content type'}`);
    let problem: { status?: unknown; code?: unknown } | undefined;
    try {
      problem = JSON.parse(reply.text);
    } catch {
      problems.push(`a ${reply.status} whose body is not JSON`);
    }
    if (problem && problem.status !== reply.status)
      problems.push(`a ${reply.status} whose problem says status ${String(problem.status)}`);
    if (problem && (typeof problem.code !== 'string' || problem.code === ''))
      problems.push(`a ${reply.status} without a code`);
  }
  return problems;
}

const READS = new Set(['GET', 'HEAD']);
const ACCOUNT_PATHS = /^\/api\/v1\/(users|me|auth)\b/;
// An import that went bad part-way keeps the complete rows before that point and says so (CONTRACT, POST /{resource}/import).
const PARTIAL_IMPORT = /The rows before it were imported: (\d+) created/;
/** The record resources the suite writes (accounts come from their own doors); a new resource is fuzzed without edits. */
const WRITTEN: readonly Resource[] = inDependencyOrder(recordResources.filter((r) => r !== user));

for (const dialect of DIALECTS) {
  describe(`fuzzing every route of the OpenAPI document (${dialect})`, () => {
    const SEED = seedFor();
    let app: TestApp;
    let principals: Principals;
    let operations: Operation[];

    /** The last record written of each resource. */
    const existing = new Map<Resource, unknown>();

    before(async () => {
      app = await startApp(dialect);
      existing.set(user, app.admin.id);
      principals = new Principals(app);
      await principals.setUp();
      // 15 records of every record resource, from its declaration; references name the admin or an earlier record.
      for (let i = 1; i <= 15; i++) {
        for (const resource of WRITTEN) {
          const created = await app.post(
            `/api/v1/${resource.name}`,
            sampleInput(resource, i, `fuzz${i}`, (target) => existing.get(target)),
          );
          assert.equal(created.status, 201, created.text);
          existing.set(resource, created.body.data.id);
        }
      }
    });
    after(async () => {
      await app?.close();
    });

    test(`${CASES} generated requests: no 5xx, problem+json errors, rejected writes change nothing, no prototype pollution`, {
      timeout: TIME_LIMIT_MS + 60_000,
    }, async (t) => {
      const openapi = await app.request('GET', '/api/v1/openapi.json', { token: null });
      assert.equal(openapi.status, 200, openapi.text);
      operations = operationsOf(openapi.body as OpenApiDocument);
      assert.ok(operations.length >= 40, `the document lists the routes (${operations.length})`);
      const postBody = (path: string) =>
        operations.find((o) => o.method === 'POST' && o.path === path)?.bodies[0]?.schema;
      const words = {
        fieldNames: fieldNamesOf(operations),
        importColumns: (path: string) => [
          'id',
          ...Object.keys(postBody(path.replace(/\/import$/, ''))?.properties ?? { name: {} }),
          'created_at',
        ],
      };

      const prototypes = prototypeFingerprint();
      let baseline: Digest = await digestOf(app.database);
      let readsSinceBaseline = 0;
      const seen = {
        cases: 0,
        writes: 0,
        rejectedWrites: 0,
        partialImports: 0,
        byStatus: new Map<number, number>(),
        routes: new Set<string>(),
      };

      const property = fc.asyncProperty(requestArb(operations, words), async (request) => {
        seen.cases++;
        seen.routes.add(request.note);
        const write = !READS.has(request.method);
        let before: Digest | undefined;
        if (write) {
          before = await digestOf(app.database);
          // The reads since the last write changed nothing either.
          if (readsSinceBaseline)
            assert.deepEqual(
              digestChanges(baseline, before),
              [],
              `${readsSinceBaseline} reads since the last write changed rows`,
            );
          readsSinceBaseline = 0;
        } else {
          readsSinceBaseline++;
        }
        const reply = await send(app, principals, request);
        seen.byStatus.set(reply.status, (seen.byStatus.get(reply.status) ?? 0) + 1);
        const problems = answerProblems(request, reply);
        assert.deepEqual(
          problems,
          [],
          `${describeRequest(request)}\n→ ${reply.status} ${reply.type}: ${reply.text.slice(0, 500)}`,
        );
        assert.equal(
          prototypeFingerprint(),
          prototypes,
          `the built-in prototypes changed after ${describeRequest(request)}`,
        );
        if (!write) return;
        seen.writes++;
        const afterwards = await digestOf(app.database);
        if (reply.status >= 400) {
          seen.rejectedWrites++;
          const changes = digestChanges(before!, afterwards);
          // A write to an unknown non-API path with Accept: text/html is answered by the HTML not-found page.
          const partial = PARTIAL_IMPORT.exec(/json/.test(reply.type) ? (JSON.parse(reply.text).detail ?? '') : '');
          if (partial && request.url.split('?')[0]!.endsWith('/import')) {
            seen.partialImports++;
            const table = request.url.split('/')[3]!;
            const expected = Array.from({ length: Number(partial[1]) }, () => `${table} added`);
            assert.deepEqual(
              changes.map((c) => c.replace(/ #\d+/, '')),
              expected,
              `a partial import adds exactly the rows it reports: ${describeRequest(request)}`,
            );
          } else {
            assert.deepEqual(
              changes,
              [],
              `a rejected write (${reply.status} ${reply.text.slice(0, 200)}) changed rows: ${describeRequest(request)}`,
            );
          }
        }
        baseline = afterwards;
        if (reply.status < 300 && ACCOUNT_PATHS.test(request.url)) {
          await principals.repair();
          baseline = await digestOf(app.database);
        }
      });

      const started = Date.now();
      t.diagnostic(`LEADBOOK_TEST_DIALECTS=${dialect} LEADBOOK_FUZZ_SEED=${SEED}; ${CASES} cases`);
      // Every route once first (1,000 random draws missed one of 134 routes about one run in thirteen), then at random.
      const everyRoute = operations.map(
        (operation, i) => [fc.sample(requestArb([operation], words), { numRuns: 1, seed: SEED + i })[0]!] as const,
      );
      await fc.assert(property, {
        numRuns: CASES,
        seed: SEED,
        ...(PATH ? { path: PATH } : { examples: everyRoute.map(([request]) => [request]) }),
        includeErrorInReport: true,
        plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS, { failOnInterrupt: true })],
      });
      const statuses = [...seen.byStatus]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      t.diagnostic(
        `${seen.cases} requests (${seen.writes} writes, ${seen.rejectedWrites} rejected, ${seen.partialImports} of them imports that kept the rows before a bad line) over ${seen.routes.size} routes in ${((Date.now() - started) / 1000).toFixed(1)} s: ${statuses}`,
      );
      assert.ok(seen.cases >= CASES, `${seen.cases} of ${CASES} cases ran`);
      assert.equal(seen.routes.size, operations.length, 'every route and method of the document was tried');
      assert.ok(
        seen.rejectedWrites > CASES / 10,
        `many writes were refused (${seen.rejectedWrites}), so the digest check did work`,
      );
      assert.ok(
        [...seen.byStatus.keys()].some((s) => s >= 200 && s < 300),
        'some requests succeeded',
      );
      assert.equal(prototypeFingerprint(), prototypes, 'Object.prototype is unpolluted after the run');
    });

    test(`${FORM_CASES} generated posts to every form the pages show: no 5xx, a refused form changes nothing`, {
      timeout: TIME_LIMIT_MS + 60_000,
    }, async (t) => {
      // The forms, as a signed-in admin and as a stranger see them (records, users, profile, sign-in, reset …).
      let admin = await pageSignIn(app, app.admin);
      const stranger = app.client();
      const pages = [
        '/',
        '/profile',
        '/verify-email',
        '/users',
        '/users/new',
        `/users/${principals.agent.id}/edit`,
        `/users/${principals.agent.id}/delete`,
      ];
      // Fresh records: the requests above may have deleted the ones the suite started with, and
      // each references the one just written before it (dependency order).
      for (const [i, resource] of WRITTEN.entries()) {
        const created = await app.post(
          `/api/v1/${resource.name}`,
          sampleInput(resource, i, 'form', (target) => existing.get(target)),
        );
        assert.equal(created.status, 201, created.text);
        const id = created.body.data.id;
        existing.set(resource, id);
        const base = `/${resource.name}`;
        pages.push(base, `${base}/new`, `${base}/${id}`, `${base}/${id}/edit`, `${base}/${id}/delete`);
      }
      const found = new Map<string, PageForm & { who: 'admin' | 'stranger' }>();
      for (const [who, client, list] of [
        ['admin', admin, pages],
        ['stranger', stranger, ['/login', '/forgot-password', '/reset-password?token=x&email=y', '/register']],
      ] as const) {
        for (const page of list) {
          const shown = await client.get(page);
          assert.ok(shown.status === 200 || shown.status === 403, `${page}: ${shown.status}`);
          // One form per kind: the forty toggles of an index page are one form with forty ids.
          for (const f of formsOf(shown.text)) {
            const kind = f.action.replace(/\/\d+(?=\/|$)/g, '/{id}');
            if (!f.multipart && f.action !== '/logout' && !found.has(kind)) found.set(kind, { ...f, who });
          }
        }
      }
      const forms = [...found.values()];
      assert.ok(forms.length >= 20, `the pages show their forms (${forms.map((f) => f.action).join(' ')})`);
      const csrf = {
        admin: csrfOf((await admin.get('/profile')).text),
        stranger: csrfOf((await stranger.get('/login')).text),
      };

      const prototypes = prototypeFingerprint();
      const seen = { cases: 0, byStatus: new Map<number, number>(), actions: new Set<string>() };
      const arb = fc.constantFrom(...forms).chain((f) => fc.tuple(fc.constant(f), formBodyArb(f, csrf[f.who])));
      const property = fc.asyncProperty(arb, async ([f, body]) => {
        seen.cases++;
        seen.actions.add(f.action);
        const client = f.who === 'admin' ? admin : stranger;
        const before = await digestOf(app.database);
        const reply = await client.request('POST', f.action, {
          body,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        seen.byStatus.set(reply.status, (seen.byStatus.get(reply.status) ?? 0) + 1);
        const what = `${f.who}: POST ${f.action} ${body.slice(0, 600)}\n→ ${reply.status}: ${reply.text.slice(0, 300)}`;
        assert.ok(reply.status < 500, what);
        assert.ok(
          reply.status !== 303 || (reply.headers.get('location') ?? '').startsWith('/'),
          `a redirect stays on this site: ${what}`,
        );
        assert.equal(prototypeFingerprint(), prototypes, `the built-in prototypes changed after ${what}`);
        if (reply.status >= 400)
          assert.deepEqual(
            digestChanges(before, await digestOf(app.database)),
            [],
            `a refused form changed rows: ${what}`,
          );
        if (reply.status < 400 && /^\/(profile|users)/.test(f.action)) {
          await principals.repair();
          // The admin's browser may have signed itself out of other sessions or changed its address: sign in again.
          if ((await admin.get('/api/v1/me')).status !== 200) admin = await pageSignIn(app, app.admin);
          csrf.admin = csrfOf((await admin.get('/profile')).text);
        }
      });
      t.diagnostic(`LEADBOOK_TEST_DIALECTS=${dialect} LEADBOOK_FUZZ_SEED=${SEED}; ${FORM_CASES} cases`);
      await fc.assert(property, {
        numRuns: FORM_CASES,
        seed: SEED,
        ...(PATH ? { path: PATH } : {}),
        includeErrorInReport: true,
        plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS, { failOnInterrupt: true })],
      });
      const statuses = [...seen.byStatus]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      t.diagnostic(`${seen.cases} form posts to ${seen.actions.size} of ${forms.length} forms: ${statuses}`);
      assert.ok(seen.cases >= FORM_CASES, `${seen.cases} of ${FORM_CASES} cases ran`);
      assert.ok(seen.actions.size >= Math.min(forms.length, 10), 'the posts reached most forms');
    });
  });
}
