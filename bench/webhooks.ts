// npm run bench:webhooks [-- --db sqlite|postgres|both] [--duration S] [--rounds N] [--no-fast] [--profile]
//
// Issue 16's line for webhooks: "a slow receiver (10 s hang) does not slow record writes: create p99 under a hanging
// receiver ≤ 1.5 × without it". On one fresh database and one app process (`leadbook serve` with
// WEBHOOKS_ALLOW_PRIVATE=true, so that it may deliver to receivers on 127.0.0.1), autocannon, from a separate process
// at 10 connections, sends `POST /api/v1/contacts` with an admin's bearer token (a new contact each) under
//   none:     no webhook endpoint at all;
//   hanging:  one endpoint for contact.created at a receiver in this process that takes each delivery and never
//             answers: every one of the dispatcher's 16 slots waits out the app's 10 s timeout, the delivery is
//             retried later, and the backlog grows with every contact made;
//   fast:     one endpoint for contact.created at a receiver that answers 204 at once (what the dispatcher costs
//             when it keeps up, or tries to).
// Each scenario's endpoint is created before its measurement and deleted after it (its deliveries with it), so
// that `none` has no webhook rows to pass over at all. Before a hanging measurement, a few contacts are made by
// hand until all 16 slots hang, and the measurement starts HANG_LEAD_MS later, so that the first wave of timeouts,
// retries and new claims falls about halfway through it. One unmeasured warm-up of each scenario, then `--rounds` rounds,
// alternating the scenarios' order; each measurement is a fixed number of requests (what its scenario answered in
// `--duration` seconds the time before), so that every request sent is answered and counted: afterwards the
// contacts in the database must equal the 201 answers. Writes the database's webhooks section of bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { Dialect } from '../src/db/dialect.ts';
import type { LoadJob, LoadResult } from './load.ts';
import { type Heard, Receiver } from './receiver.ts';
import {
  cleanUpOnSignal,
  createAccounts,
  DATA_ROOT,
  freshPlace,
  getJson,
  type Json,
  log,
  postJson,
  readRows,
  request,
  sleep,
  expectStatus,
  readCount,
} from './places.ts';
import { appServer, cpuTicks, LoadClient, ROOT, type Server, startServer, stopAll, rssMb } from './processes.ts';
import {
  benchCommand,
  busyNote,
  codeChangedNote,
  codeState,
  describeCode,
  dialectsOf,
  fmt,
  machine,
  RESULTS_FILE,
  table,
  utcMinute,
  writeSection,
} from './results.ts';

const USAGE = `npm run bench:webhooks -- [options]
  --db sqlite|postgres|both   databases to measure (default both)
  --duration S                about how long each measurement runs, in seconds (default 8)
  --rounds N                  measured rounds of the scenarios, alternating their order (default 3)
  --no-fast                   leave out the scenario with a receiver that answers at once
  --profile                   run the app with --cpu-prof; the .cpuprofile is kept in bench/.data/profiles/
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).`;

const { argv, fail, command } = benchCommand('bench:webhooks', USAGE, {
  db: { type: 'string', default: 'both' },
  duration: { type: 'string', default: '8' },
  rounds: { type: 'string', default: '3' },
  fast: { type: 'boolean', default: true },
  profile: { type: 'boolean', default: false },
});

const dialects = dialectsOf(argv.db, fail);
const duration = Number(argv.duration);
if (!(duration > 0 && duration <= 600)) fail('--duration must be a number of seconds from 0 to 600');
const rounds = Number(argv.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail('--rounds must be a whole number from 1 to 20');

/** The issue's acceptance line: create p99 with a hanging receiver at most this many times the p99 without one. */
const TARGET_RATIO = 1.5;
const CONNECTIONS = 10;
/** The dispatcher's requests in flight (WEBHOOKS_CONCURRENCY, set to its default so that the bench knows it). */
const SLOTS = 16;
/** The app's delivery timeout (src/app.ts), as the sections say it. */
const TIMEOUT_S = 10;
/** Requests of each scenario's warm-up (also the first estimate of its rate). */
const WARM_UP = 400;
/** Contacts made by hand after the hanging endpoint is created: more than the slots, so that all of them hang. */
const PRIME = SLOTS + 4;
/**
 * How long after the slots are full a hanging measurement starts: the first wave of timeouts (and retries, and new
 * claims) then falls about halfway through it, not after its end.
 */
const HANG_LEAD_MS = Math.max(0, Math.round((TIMEOUT_S - duration / 2) * 1000));
const BIN = path.join(ROOT, 'bin/leadbook.js');
const PROFILES = path.join(DATA_ROOT, 'profiles');
const PATH = '/api/v1/contacts';
const EVENTS = ['contact.created'];

type Scenario = 'none' | 'hanging' | 'fast';
const SCENARIOS: Scenario[] = argv.fast ? ['none', 'hanging', 'fast'] : ['none', 'hanging'];
const LABELS: Record<Scenario, string> = {
  none: 'no webhook endpoint',
  hanging: 'hanging receiver',
  fast: 'receiver answering 204',
};

/** A new contact per request (`{n}` is unique to it). */
const BODY = JSON.stringify({
  name: 'Bench Contact {n}',
  email: 'bench.contact.{n}@example.com',
  phone: '+44 20 7946 0000',
  city: 'Bristol',
  country: 'United Kingdom',
  detail: 'Asked for a quote on rooftop panels for two depots',
});

// ------------------------------------------------------------------ the receivers

// ------------------------------------------------------------------ what is measured

/** What the receiver of the scenario saw during one measurement. */
interface Receiving {
  /** Requests and connections that arrived while the load ran. */
  requests: number;
  connections: number;
  /** Requests held unanswered, sampled every 100 ms while the load ran (hanging). */
  heldMin?: number;
  heldMax?: number;
  /** The endpoint's deliveries afterwards, by status (before it is deleted). */
  deliveries?: Record<string, number>;
}

interface Measure {
  scenario: Scenario;
  round: number;
  /** Requests sent (all answered). */
  amount: number;
  result: LoadResult;
  /** CPU of the app's process per answer, ms (on SQLite the database's work is in it). */
  cpu: number;
  receiving?: Receiving;
}

interface Checked {
  what: string;
  expected: number;
  found: number;
}

interface Report {
  dialect: Dialect;
  started: Date;
  loadAverage: number[];
  loadAverageEnd?: number[];
  code: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  warmUp: Measure[];
  measures: Measure[];
  checks: Checked[];
  /** What the hanging receiver heard over the whole run. */
  hangingHeard?: Heard;
  fastHeard?: Heard;
  rss: { idle?: number | null; after?: number | null };
  seconds?: number;
  profile?: string;
  notes: string[];
  /** Answers other than 201, errors and timeouts, per measurement. */
  bad: string[];
  failed: boolean;
}

// ------------------------------------------------------------------ helpers

async function until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what()}`);
    await sleep(50);
  }
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Each round's value of `of(scenario) / of('none')` (the two measured in the same round). */
function ratios(measures: readonly Measure[], scenario: Scenario, of: (r: LoadResult) => number): number[] {
  const out: number[] = [];
  for (const round of new Set(measures.map((m) => m.round))) {
    const s = measures.find((m) => m.round === round && m.scenario === scenario);
    const n = measures.find((m) => m.round === round && m.scenario === 'none');
    if (s && n) out.push(of(s.result) / of(n.result));
  }
  return out;
}

const p99Ratios = (measures: readonly Measure[], scenario: Scenario) => ratios(measures, scenario, (r) => r.p99);

/** The scenarios' order in a round: reversed every other round. */
const orderOf = (round: number) => (round % 2 ? SCENARIOS : [...SCENARIOS].reverse());

// ------------------------------------------------------------------ one database

async function benchDatabase(dialect: Dialect): Promise<Report> {
  const began = performance.now();
  const report: Report = {
    dialect,
    started: new Date(),
    loadAverage: os.loadavg(),
    code: codeState(),
    warmUp: [],
    measures: [],
    checks: [],
    rss: {},
    notes: [],
    bad: [],
    failed: false,
  };
  const busy = busyNote(report.loadAverage);
  if (busy) {
    report.notes.push(busy);
    log(`${dialect}: WARNING: ${busy}`);
  }
  const place = await freshPlace(
    dialect,
    `leadbook_bench_${process.pid}_webhooks_${dialect}`,
    randomBytes(32).toString('base64'),
  );
  const load = new LoadClient();
  const hanging = await new Receiver(true).start();
  const fast = await new Receiver(false).start();
  let app: Server | undefined;
  try {
    // 1. The admin; the app, allowed to deliver to loopback.
    const admin = { email: 'bench-admin@example.com', password: `bench admin ${randomBytes(9).toString('base64url')}` };
    await createAccounts(place, [{ ...admin, name: 'Bench Admin', admin: true }]);
    const env = { ...place.env, WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_CONCURRENCY: String(SLOTS) };
    if (argv.profile) {
      fs.mkdirSync(PROFILES, { recursive: true });
      app = await startServer(['--cpu-prof', '--cpu-prof-dir', PROFILES, BIN, 'serve'], env);
    } else app = await appServer(env);
    const url = app.url;
    report.rss.idle = rssMb(app.pid);
    log(`${dialect}: app on ${url} (pid ${app.pid}, RSS ${fmt.mb(report.rss.idle)})`);
    log(`${dialect}: receivers: hanging ${hanging.url}, fast ${fast.url}`);
    const issued = await postJson(`${url}/api/v1/auth/token`, { ...admin, device_name: 'bench' });
    expectStatus(issued, 201, 'POST /api/v1/auth/token');
    const token = issued.body.token as string;
    const asAdmin = async (method: string, to: string, json: unknown, status: number | number[]): Promise<Json> => {
      const a = await request(method, url + to, { token, json });
      expectStatus(a, status, `${method} ${to}`);
      return a.body;
    };
    /** 201 answers, by hand and under load together: the contacts the database must hold. */
    let created = 0;
    const createOne = async (n: string): Promise<Json> => {
      const made = (await asAdmin('POST', PATH, JSON.parse(BODY.replaceAll('{n}', n)), 201)).data;
      created++;
      return made;
    };
    const addEndpoint = async (receiver: Receiver, description: string) => {
      const made = await asAdmin('POST', '/api/v1/webhooks', { url: receiver.url, events: EVENTS, description }, 201);
      return { id: String(made.data.id), secret: made.secret as string };
    };
    const webhookRows = async (id: string) =>
      Object.fromEntries(
        (
          await readRows<{ status: string; n: unknown }>(
            place,
            `select status, count(*) as n from webhook_deliveries where webhook_id = ${Number(id)} group by status`,
          )
        ).map((r) => [r.status, Number(r.n)]),
      );

    // 2. One delivery by hand (the dispatcher starts on the scheduler's first tick): to the fast receiver, signed
    // with the endpoint's secret, about the contact just made.
    {
      const hook = await addEndpoint(fast, 'bench: check');
      const made = await createOne('check');
      await until(
        () => fast.first !== undefined,
        30_000,
        () => 'the first delivery to the fast receiver',
      );
      const event = new Webhook(hook.secret).verify(fast.first!.body, fast.first!.headers) as Json;
      if (event.type !== 'contact.created' || String(event.data?.id) !== String(made.id))
        throw new Error(`the first delivery was not about contact ${made.id}: ${fast.first!.body.slice(0, 300)}`);
      await asAdmin('DELETE', `/api/v1/webhooks/${hook.id}`, undefined, [200, 204]);
      log(`${dialect}: a signed contact.created delivery arrived; the dispatcher runs`);
    }

    // 3. The scenarios: an endpoint made before each measurement and deleted after it.
    let primed = 0;
    const enter = async (scenario: Scenario): Promise<string | undefined> => {
      const listed = await getJson(`${url}/api/v1/webhooks?per_page=1`, token);
      expectStatus(listed, 200, 'GET /api/v1/webhooks');
      if (Number(listed.body.meta.total) !== 0) throw new Error(`${listed.body.meta.total} endpoint(s) left over`);
      if (scenario === 'none') return undefined;
      const hook = await addEndpoint(scenario === 'hanging' ? hanging : fast, `bench: ${scenario}`);
      if (scenario === 'hanging') {
        // Until every slot hangs: contacts by hand, then the wait for the dispatcher to claim their deliveries.
        for (let i = 0; i < PRIME; i++) await createOne(`prime-${++primed}`);
        await until(
          () => hanging.open >= SLOTS,
          30_000,
          () => `${SLOTS} deliveries held by the hanging receiver (${hanging.open} now)`,
        );
        await sleep(HANG_LEAD_MS);
      } else await sleep(500);
      return hook.id;
    };
    const leave = async (scenario: Scenario, hook: string | undefined, receiving: Receiving) => {
      if (hook === undefined) return;
      receiving.deliveries = await webhookRows(hook);
      await asAdmin('DELETE', `/api/v1/webhooks/${hook}`, undefined, [200, 204]);
      // The held sends end now (a reset) rather than up to 10 s into the next measurement.
      if (scenario === 'hanging') hanging.release();
      await sleep(1000);
    };

    // 4. The load: a fixed number of requests, every one answered and counted.
    const jobFor = (amount: number): LoadJob => ({
      url,
      method: 'POST',
      path: PATH,
      headers: { authorization: `Bearer ${token}` },
      body: BODY,
      connections: CONNECTIONS,
      duration,
      amount,
    });
    const run = async (scenario: Scenario, round: number, amount: number): Promise<Measure> => {
      const hook = await enter(scenario);
      const receiver = scenario === 'hanging' ? hanging : scenario === 'fast' ? fast : undefined;
      const heard = receiver ? { ...receiver.heard } : undefined;
      let heldMin = Number.POSITIVE_INFINITY;
      let heldMax = 0;
      const sampler =
        scenario === 'hanging'
          ? setInterval(() => {
              heldMin = Math.min(heldMin, hanging.open);
              heldMax = Math.max(heldMax, hanging.open);
            }, 100)
          : undefined;
      const ticks = cpuTicks(app!.pid) ?? 0;
      const result = await load.run(jobFor(amount));
      const cpu = (((cpuTicks(app!.pid) ?? 0) - ticks) * 10) / Math.max(1, result.ok);
      if (sampler) clearInterval(sampler);
      const receiving: Receiving | undefined =
        receiver && heard
          ? {
              requests: receiver.heard.requests - heard.requests,
              connections: receiver.heard.connections - heard.connections,
              ...(sampler ? { heldMin, heldMax } : {}),
            }
          : undefined;
      created += result.statusCodes['201'] ?? 0;
      if (result.non2xx || result.errors || result.timeouts || (result.statusCodes['201'] ?? 0) !== amount) {
        const said = app!
          .output()
          .trim()
          .split('\n')
          .slice(-3)
          .map((l) => l.slice(0, 300))
          .join(' / ');
        report.bad.push(
          `${LABELS[scenario]}, ${round ? `round ${round}` : 'warm-up'}: of ${fmt.int(amount)} requests, ` +
            `${fmt.int(result.statusCodes['201'] ?? 0)} answered 201; status codes ` +
            `${JSON.stringify(result.statusCodes)}, ${result.non2xx} non-2xx, ${result.errors} errors, ` +
            `${result.timeouts} timeouts${said ? `; the server's last words: ${said}` : ''}`,
        );
        log(`${dialect}: BAD ANSWERS: ${report.bad.at(-1)}`);
      }
      await leave(scenario, hook, receiving ?? { requests: 0, connections: 0 });
      return { scenario, round, amount, result, cpu, ...(receiving ? { receiving } : {}) };
    };
    const show = (m: Measure) => {
      const r = m.receiving;
      const heard = !r
        ? ''
        : `; receiver: ${r.requests} requests on ${r.connections} new connections` +
          `${r.heldMin !== undefined ? `, ${r.heldMin}–${r.heldMax} held` : ''}` +
          `${r.deliveries ? `, deliveries ${JSON.stringify(r.deliveries)}` : ''}`;
      log(
        `${dialect}: ${m.round ? `round ${m.round}` : 'warm-up'} ${LABELS[m.scenario].padEnd(22)} ` +
          `${fmt.int(m.result.ok).padStart(6)} in ${fmt.s(m.result.ok / m.result.rps)}: ` +
          `${fmt.rps(m.result.rps).padStart(5)}/s; p50 ${fmt.ms(m.result.p50)}, p97.5 ${fmt.ms(m.result.p975)}, ` +
          `p99 ${fmt.ms(m.result.p99)} ms; CPU ${fmt.ms(m.cpu)} ms/request${heard}`,
      );
    };
    const rate = {} as Record<Scenario, number>;
    for (const scenario of SCENARIOS) {
      const m = await run(scenario, 0, WARM_UP);
      report.warmUp.push(m);
      rate[scenario] = m.result.rps;
      show(m);
    }
    log(`${dialect}: warmed up; ${rounds} round(s) of about ${duration} s per scenario at ${CONNECTIONS} connections`);
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of orderOf(round)) {
        const amount = Math.max(10 * CONNECTIONS, Math.round(rate[scenario] * duration));
        const m = await run(scenario, round, amount);
        report.measures.push(m);
        rate[scenario] = m.result.rps;
        show(m);
        const held = m.receiving;
        // The slots empty and fill again at each wave of timeouts; a measurement that saw no wave, or never all
        // the slots held, measured less than the scenario means.
        if (scenario === 'hanging' && held && (held.requests === 0 || (held.heldMax ?? 0) < SLOTS))
          report.notes.push(
            `Round ${round}: the hanging receiver heard ${held.requests} request(s) while the load ran ` +
              `(${fmt.s(m.result.ok / m.result.rps)}) and held ${held.heldMin}–${held.heldMax} of the ${SLOTS} ` +
              `slots${held.requests === 0 ? ': no timeout fell inside the measurement' : ''}.`,
          );
      }
      const r = p99Ratios(report.measures, 'hanging').at(-1);
      if (r !== undefined) log(`${dialect}: round ${round}: p99 hanging / none ${fmt.ratio(r)}`);
    }
    report.rss.after = rssMb(app.pid);
    report.hangingHeard = { ...hanging.heard };
    report.fastHeard = { ...fast.heard };

    // 5. What the database holds: one contact per 201, no endpoint left.
    const listed = await getJson(`${url}/api/v1/contacts?per_page=1`, token);
    expectStatus(listed, 200, 'GET /api/v1/contacts');
    report.checks.push(
      { what: 'contacts (the API’s meta.total)', expected: created, found: Number(listed.body.meta.total) },
      {
        what: 'contacts (in the database)',
        expected: created,
        found: await readCount(place, 'select count(*) as n from contacts'),
      },
      {
        what: 'webhook endpoints left',
        expected: 0,
        found: await readCount(place, 'select count(*) as n from webhooks'),
      },
    );
    for (const c of report.checks) {
      const mismatch = c.found === c.expected ? '' : ' MISMATCH';
      log(`${dialect}: ${c.what}: ${fmt.int(c.found)} (expected ${fmt.int(c.expected)})${mismatch}`);
    }
    if (report.checks.some((c) => c.found !== c.expected)) {
      report.failed = true;
      report.notes.push('**The database does not hold what the answers said** (see the checks).');
    }
    if (report.measures.some((m) => m.scenario === 'hanging' && !m.receiving?.requests && !m.receiving?.heldMax)) {
      report.failed = true;
      report.notes.push('**A hanging measurement ran with nothing held by the receiver**: it measured nothing.');
    }
    if (report.bad.length) {
      report.failed = true;
      report.notes.push(`**Answers other than 201 appeared:** ${report.bad.join(' ')}`);
    }
    return report;
  } catch (error) {
    report.failed = true;
    report.notes.push(`**The run failed:** ${(error as Error).message}`);
    log(`${dialect}: FAILED: ${(error as Error).message}`);
    return report;
  } finally {
    report.codeAfter = codeState();
    report.loadAverageEnd = os.loadavg();
    load.close();
    const before = argv.profile && fs.existsSync(PROFILES) ? new Set(fs.readdirSync(PROFILES)) : new Set<string>();
    await hanging.close();
    await fast.close();
    await app?.stop();
    if (argv.profile) {
      const made = fs.readdirSync(PROFILES).filter((f) => !before.has(f) && f.endsWith('.cpuprofile'));
      if (made.length) {
        report.profile = path.join(PROFILES, made[0]!);
        log(`${dialect}: the app's CPU profile: ${path.relative(process.cwd(), report.profile)}`);
      }
    }
    await place.drop().catch((e: Error) => log(`cleanup: ${e.message}`));
    report.seconds = (performance.now() - began) / 1000;
  }
}

// ------------------------------------------------------------------ markdown

function receiverCell(m: Measure): string {
  const r = m.receiving;
  if (!r) return '–';
  const d = r.deliveries ?? {};
  const deliveries = Object.entries(d)
    .map(([status, n]) => `${fmt.int(n)} ${status}`)
    .join(', ');
  return m.scenario === 'hanging'
    ? `${fmt.int(r.requests)} requests; ${r.heldMin}–${r.heldMax} of ${SLOTS} held; deliveries: ${deliveries || '–'}`
    : `${fmt.int(r.requests)} requests; deliveries: ${deliveries || '–'}`;
}

function section(r: Report): string {
  const name = r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const lines = [
    `## Webhooks: writes under a hanging receiver (${name})`,
    '',
    `- Date: ${utcMinute(r.started)}${r.failed ? ' — **the run failed, see the notes**' : ''}`,
    `- Machine: ${machine()}; load average at the start ${r.loadAverage.map((n) => n.toFixed(2)).join(', ')}` +
      `${r.loadAverageEnd ? `, at the end ${r.loadAverageEnd.map((n) => n.toFixed(2)).join(', ')}` : ''} ` +
      '(the machine is shared)',
    `- Node ${process.version}${r.dialect === 'postgres' ? ', PostgreSQL on 127.0.0.1' : ', better-sqlite3'}`,
    `- Code: ${describeCode(r.code)}`,
    `- Command: \`${command}\` (${fmt.s(r.seconds)})${argv.profile ? '; the app ran with --cpu-prof, which slows it' : ''}`,
    '- One fresh database, one app process (`leadbook serve`, WEBHOOKS_ALLOW_PRIVATE=true, ' +
      `WEBHOOKS_CONCURRENCY=${SLOTS}, the ${TIMEOUT_S} s delivery timeout, retries from 5 s): the dispatcher runs in ` +
      'it (the scheduler’s lease holder)',
    `- Load: autocannon in a separate process, ${CONNECTIONS} connections, \`POST ${PATH}\` with an admin's bearer ` +
      'token, a new contact each (name, email, phone, city, country, detail) → 201',
    '- Scenarios: **none**, no webhook endpoint; **hanging**, one endpoint for contact.created at a receiver on ' +
      `127.0.0.1 that takes each delivery and never answers (each waits out the ${TIMEOUT_S} s timeout and is ` +
      `retried; the backlog grows with every contact); ${argv.fast ? '**fast**, one endpoint at a receiver that answers 204 at once. ' : ''}` +
      'Each endpoint is created before its measurement and deleted (its deliveries with it) after it. Before a ' +
      `hanging measurement, ${PRIME} contacts by hand until all ${SLOTS} slots hang, then ${fmt.s(HANG_LEAD_MS / 1000)}, ` +
      'so that the first wave of timeouts, retries and new claims falls about halfway through the measurement',
    `- ${fmt.int(WARM_UP)} requests of each scenario to warm up, then ${rounds} round(s), the scenarios' order ` +
      `reversed every other round; each measurement is as many requests as its scenario answered in ${duration} s ` +
      'the time before, every one answered and counted; the time is from the first request to the last answer',
    '',
  ];
  const all = [...r.warmUp, ...r.measures];
  if (all.length)
    lines.push(
      table(
        [
          'measurement',
          'scenario',
          'answers',
          'time',
          'per second',
          'p50 ms',
          'p97.5 ms',
          'p99 ms',
          'CPU per request',
          'receiver',
        ],
        all.map((m) => [
          m.round ? `round ${m.round}` : 'warm-up',
          LABELS[m.scenario],
          fmt.int(m.result.ok),
          fmt.s(m.result.ok / m.result.rps),
          fmt.rps(m.result.rps),
          fmt.ms(m.result.p50),
          fmt.ms(m.result.p975),
          fmt.ms(m.result.p99),
          `${fmt.ms(m.cpu)} ms`,
          receiverCell(m),
        ]),
      ),
      '',
    );
  if (r.measures.length) {
    const of = (scenario: Scenario, value: (x: LoadResult) => number) =>
      median(r.measures.filter((m) => m.scenario === scenario).map((m) => value(m.result)));
    lines.push(
      `The median of the ${rounds} round(s), per scenario:`,
      '',
      table(
        ['scenario', 'per second', 'p50 ms', 'p97.5 ms', 'p99 ms'],
        SCENARIOS.map((s) => [
          LABELS[s],
          fmt.rps(of(s, (x) => x.rps)),
          fmt.ms(of(s, (x) => x.p50)),
          fmt.ms(of(s, (x) => x.p975)),
          fmt.ms(of(s, (x) => x.p99)),
        ]),
      ),
      '',
    );
  }
  const p99 = p99Ratios(r.measures, 'hanging');
  const rps = ratios(r.measures, 'hanging', (x) => x.rps);
  const p975 = ratios(r.measures, 'hanging', (x) => x.p975);
  const summary = [
    `Within each round, hanging / none: p99 ${p99.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(p99))}); ` +
      `p97.5 ${p975.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(p975))}); ` +
      `req/s ${rps.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(rps))}).`,
  ];
  if (argv.fast) {
    const fp99 = p99Ratios(r.measures, 'fast');
    const frps = ratios(r.measures, 'fast', (x) => x.rps);
    summary.push(
      `Fast / none: p99 ${fp99.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(fp99))}); ` +
        `req/s ${frps.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(frps))}).`,
    );
  }
  if (r.hangingHeard)
    summary.push(
      `The hanging receiver heard ${fmt.int(r.hangingHeard.requests)} requests on ` +
        `${fmt.int(r.hangingHeard.connections)} connections in the whole run (warm-up and priming included)` +
        `${r.fastHeard ? `; the fast one ${fmt.int(r.fastHeard.requests)} on ${fmt.int(r.fastHeard.connections)}` : ''}.`,
    );
  summary.push(
    `CPU per request is the app's process (${r.dialect === 'sqlite' ? 'SQLite in it' : "PostgreSQL's processes not counted"}). ` +
      `App RSS: ${fmt.mb(r.rss.idle)} after start, ${fmt.mb(r.rss.after)} at the end.`,
  );
  if (r.measures.length) lines.push(summary.join(' '), '');
  if (r.checks.length)
    lines.push(
      table(
        ['checked afterwards', 'expected', 'found', 'result'],
        r.checks.map((c) => [
          c.what,
          fmt.int(c.expected),
          fmt.int(c.found),
          c.found === c.expected ? 'ok' : '**MISMATCH**',
        ]),
      ),
      '',
    );
  const ratio = p99.length ? median(p99) : undefined;
  const hangingP99 = r.measures.filter((m) => m.scenario === 'hanging').map((m) => fmt.ms(m.result.p99));
  const noneP99 = r.measures.filter((m) => m.scenario === 'none').map((m) => fmt.ms(m.result.p99));
  lines.push(
    `### Targets (webhooks, ${name})`,
    '',
    table(
      ['target', 'measured', 'result'],
      [
        [
          `create p99 under a hanging receiver ≤ ${TARGET_RATIO} × without it (same run; the median of the ` +
            "rounds' ratios)",
          ratio !== undefined
            ? `${fmt.ratio(ratio)} (p99 hanging ${hangingP99.join(', ')} ms; none ${noneP99.join(', ')} ms)`
            : '–',
          ratio === undefined || r.failed ? 'n/a' : ratio <= TARGET_RATIO ? 'pass' : '**FAIL**',
        ],
      ],
    ),
    '',
  );
  const notes = [...r.notes];
  const changed = codeChangedNote(r);
  if (changed) notes.push(changed);
  if (notes.length) lines.push('### Notes', '', ...notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

// ------------------------------------------------------------------ main

const started = performance.now();
cleanUpOnSignal();
fs.mkdirSync(DATA_ROOT, { recursive: true });
log(`bench:webhooks: ${dialects.join(' and ')}, ${rounds} round(s) of about ${duration} s per scenario`);
let failed = false;
for (const dialect of dialects) {
  const report = await benchDatabase(dialect);
  const markdown = section(report);
  writeSection(`webhooks:${dialect}`, markdown);
  failed ||= report.failed;
  console.log(`\n${markdown}`);
  log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.failed ? ' (FAILED)' : ''}`);
}
stopAll();
log(`bench:webhooks: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
