// npm run bench:intake [-- --db sqlite|postgres|both] [--duration S] [--rounds N] [--workers W] [--profile]
//
// The public intake at the rate of its acceptance line: on one fresh database and one app process (`leadbook serve`
// with TRUST_PROXY=true), an admin (a token) makes two agents, a source, an intake form of that source and an
// assignment rule giving the source's inquiries to the agents in turn, so that each submission takes the real path:
// the form, the 10-a-minute limit counted in the database, a new contact, the rule, the agent's notification. Then
// autocannon, from a separate process at 10 connections, sends
//   intake:  POST /api/v1/intake/<slug>, no sign-in, each request from an address of its own (x-forwarded-for) with
//            an email of its own (a new contact each), answered 202 {reference};
//   create:  POST /api/v1/inquiries with the admin's bearer token, the same fields and the form's source, 201;
// one unmeasured warm-up of each, then `--rounds` rounds of both, alternating which goes first. Each measurement is
// a fixed number of requests (what its side answered in `--duration` seconds last time), so that every request sent
// is answered and counted: afterwards the inquiries, contacts, assignments and notifications in the database must
// match the answers exactly. Any answer other than 202/201 (or an error or a timeout) fails the run. Writes the
// database's intake section of bench/RESULTS.md, with the issue's targets (SQLite: intake ≥ 300 accepted/s, and
// ≥ 0.5 × the signed-in create measured in the same run).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialect } from '../src/db/dialect.ts';
import type { LoadJob, LoadResult } from './load.ts';
import {
  cleanUpOnSignal,
  createAccounts,
  DATA_ROOT,
  freshPlace,
  getJson,
  log,
  postJson,
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

const USAGE = `npm run bench:intake -- [options]
  --db sqlite|postgres|both   databases to measure (default sqlite; the targets are for SQLite)
  --duration S                about how long each measurement runs, in seconds (default 10)
  --rounds N                  measured rounds of both requests, alternating which goes first (default 2)
  --workers W                 app processes (\`serve --workers W\`; default 1, what the targets are for)
  --profile                   run the app with --cpu-prof; the .cpuprofile is kept in bench/.data/profiles/
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).`;

const { argv, fail, command } = benchCommand('bench:intake', USAGE, {
  db: { type: 'string', default: 'sqlite' },
  duration: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '2' },
  workers: { type: 'string', default: '1' },
  profile: { type: 'boolean', default: false },
});

const dialects = dialectsOf(argv.db, fail);
const duration = Number(argv.duration);
if (!(duration > 0 && duration <= 600)) fail('--duration must be a number of seconds from 0 to 600');
const rounds = Number(argv.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail('--rounds must be a whole number from 1 to 20');
const workers = Number(argv.workers);
if (!Number.isInteger(workers) || workers < 1 || workers > 16) fail('--workers must be a whole number from 1 to 16');
if (argv.profile && workers > 1) fail('--profile profiles one app process: leave out --workers');

/** The issue's acceptance line (SQLite). */
const TARGET = { intakeRps: 300, ratio: 0.5 } as const;
const CONNECTIONS = 10;
/** Requests of each side's warm-up (also the first estimate of its rate). */
const WARM_UP = 600;
const SLUG = 'bench-contact';
const BIN = path.join(ROOT, 'bin/leadbook.js');
const PROFILES = path.join(DATA_ROOT, 'profiles');

type Side = 'intake' | 'create';
const LABELS: Record<Side, string> = {
  intake: 'public intake, no sign-in',
  create: 'signed-in create (admin token)',
};
const PATHS: Record<Side, string> = { intake: `POST /api/v1/intake/${SLUG}`, create: 'POST /api/v1/inquiries' };
const STATUS: Record<Side, number> = { intake: 202, create: 201 };

/** What each submission says; `{n}` makes the name and the email (so the contact) new each time. */
const FIELDS = {
  name: 'Lead {n}',
  email: 'lead.{n}@example.org',
  detail: 'Asked for a quote on rooftop panels for two depots',
  country: 'United Kingdom',
} as const;

// ------------------------------------------------------------------ what is measured

interface Measure {
  side: Side;
  round: number;
  /** Requests sent (all answered). */
  amount: number;
  result: LoadResult;
  /** CPU of the app's process per answer, ms (on SQLite the database's work is in it). */
  cpu: number;
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
  code: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  warmUp: Measure[];
  measures: Measure[];
  checks: Checked[];
  rss: { idle?: number | null; after?: number | null };
  profile?: string;
  notes: string[];
  /** Answers other than the expected status, errors and timeouts, per measurement. */
  bad: string[];
  failed: boolean;
}

// ------------------------------------------------------------------ helpers

/** The app's process and its workers (`serve --workers`). */
function appPids(pid: number): number[] {
  try {
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
    return [pid, ...children.map(Number)];
  } catch {
    return [pid];
  }
}

/** CPU ticks (1/100 s) of these processes together. */
const cpuOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + (cpuTicks(pid) ?? 0), 0);

/** The better (higher) of the rounds' rates of one side. */
const best = (measures: readonly Measure[], side: Side) =>
  measures
    .filter((m) => m.side === side)
    .reduce<Measure | undefined>((a, b) => (!a || b.result.rps > a.result.rps ? b : a), undefined);

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The rounds' intake / create ratios (each round's two sides measured back to back). */
function ratios(measures: readonly Measure[]): number[] {
  const out: number[] = [];
  for (const round of new Set(measures.map((m) => m.round))) {
    const i = measures.find((m) => m.round === round && m.side === 'intake');
    const c = measures.find((m) => m.round === round && m.side === 'create');
    if (i && c) out.push(i.result.rps / c.result.rps);
  }
  return out;
}

// ------------------------------------------------------------------ one database

async function benchDatabase(dialect: Dialect): Promise<Report> {
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
    `leadbook_bench_${process.pid}_intake_${dialect}`,
    randomBytes(32).toString('base64'),
  );
  const load = new LoadClient();
  let app: Server | undefined;
  try {
    // 1. The admin; the app, trusting x-forwarded-for (each request its own client address).
    const admin = { email: 'bench-admin@example.com', password: `bench admin ${randomBytes(9).toString('base64url')}` };
    await createAccounts(place, [{ ...admin, name: 'Bench Admin', admin: true }]);
    const env = { ...place.env, TRUST_PROXY: 'true' };
    if (argv.profile) {
      fs.mkdirSync(PROFILES, { recursive: true });
      app = await startServer(['--cpu-prof', '--cpu-prof-dir', PROFILES, BIN, 'serve'], env);
    } else app = await appServer(env, workers > 1 ? ['--workers', String(workers)] : []);
    const url = app.url;
    report.rss.idle = rssMb(app.pid);
    log(`${dialect}: app on ${url} (pid ${app.pid}, RSS ${fmt.mb(report.rss.idle)})`);
    const issued = await postJson(`${url}/api/v1/auth/token`, { ...admin, device_name: 'bench' });
    expectStatus(issued, 201, 'POST /api/v1/auth/token');
    const token = issued.body.token as string;
    const asAdmin = async (method: string, to: string, json: unknown, status: number) => {
      const a = await request(method, url + to, { token, json });
      expectStatus(a, status, `${method} ${to}`);
      return a.body.data;
    };

    // 2. Two agents, a source, the form, the rule.
    const agents: number[] = [];
    for (const name of ['Ada Agent', 'Ben Agent']) {
      const email = `${name.toLowerCase().replace(' ', '.')}@example.org`;
      const password = `bench agent ${randomBytes(9).toString('base64url')}`;
      agents.push(Number((await asAdmin('POST', '/api/v1/users', { name, email, password, role: 'agent' }, 201)).id));
    }
    const sourceId = Number((await asAdmin('POST', '/api/v1/sources', { name: 'Website form' }, 201)).id);
    await asAdmin(
      'POST',
      '/api/v1/intake-forms',
      {
        name: 'Contact us',
        slug: SLUG,
        fields: ['name', 'email', 'detail', 'country'],
        required: ['email'],
        source_id: sourceId,
        allowed_origins: ['https://www.example.com'],
      },
      201,
    );
    await asAdmin(
      'POST',
      '/api/v1/assignment-rules',
      { name: 'Web leads', position: 1, match: { source_id: sourceId }, users: agents, respond_within_minutes: 60 },
      201,
    );

    // 3. One of each by hand: each makes an inquiry with a contact, the source, an agent and a due time.
    const bodies: Record<Side, string> = {
      intake: JSON.stringify(FIELDS),
      create: JSON.stringify({ ...FIELDS, source_id: sourceId }),
    };
    const sent: Record<Side, number> = { intake: 0, create: 0 };
    for (const side of ['intake', 'create'] as const) {
      const n = `check-${side}`;
      const body = JSON.parse(bodies[side].replaceAll('{n}', n));
      const a =
        side === 'intake'
          ? await request('POST', `${url}/api/v1/intake/${SLUG}`, {
              json: body,
              headers: { 'x-forwarded-for': '192.0.2.1' },
            })
          : await request('POST', `${url}/api/v1/inquiries`, { json: body, token });
      expectStatus(a, STATUS[side], PATHS[side]);
      sent[side]++;
      const found = await getJson(`${url}/api/v1/inquiries?filter[name]=${encodeURIComponent(`Lead ${n}`)}`, token);
      const made = found.body.data?.[0];
      if (!made) throw new Error(`${PATHS[side]} answered ${a.status} but made no inquiry named Lead ${n}`);
      const wrong = [
        made.contact_id === null && 'no contact',
        Number(made.source_id) !== sourceId && `source ${made.source_id}`,
        !agents.includes(Number(made.assigned_to)) && `assigned to ${made.assigned_to}`,
        made.due_at === null && 'no due time',
      ].filter(Boolean);
      if (wrong.length) throw new Error(`${PATHS[side]} made an inquiry with ${wrong.join(', ')}`);
    }

    // 4. The load: a fixed number of requests, every one answered and counted.
    const jobFor = (side: Side, amount: number): LoadJob => ({
      url,
      method: 'POST',
      path: side === 'intake' ? `/api/v1/intake/${SLUG}` : '/api/v1/inquiries',
      headers: side === 'intake' ? { 'x-forwarded-for': '{ip}' } : { authorization: `Bearer ${token}` },
      body: bodies[side],
      connections: CONNECTIONS,
      duration,
      amount,
    });
    const run = async (side: Side, round: number, amount: number): Promise<Measure> => {
      const pids = appPids(app!.pid);
      const ticks = cpuOf(pids);
      const result = await load.run(jobFor(side, amount));
      const cpu = ((cpuOf(pids) - ticks) * 10) / Math.max(1, result.ok);
      sent[side] += result.ok;
      const expected = result.statusCodes[String(STATUS[side])] ?? 0;
      if (result.non2xx || result.errors || result.timeouts || expected !== amount) {
        const said = app!
          .output()
          .trim()
          .split('\n')
          .slice(-3)
          .map((l) => l.slice(0, 300))
          .join(' / ');
        report.bad.push(
          `${LABELS[side]}, ${round ? `round ${round}` : 'warm-up'}: of ${fmt.int(amount)} requests, ` +
            `${fmt.int(expected)} answered ${STATUS[side]}; status codes ${JSON.stringify(result.statusCodes)}, ` +
            `${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts` +
            `${said ? `; the server's last words: ${said}` : ''}`,
        );
        log(`${dialect}: BAD ANSWERS: ${report.bad.at(-1)}`);
      }
      return { side, round, amount, result, cpu };
    };
    const show = (m: Measure) =>
      log(
        `${dialect}: ${m.round ? `round ${m.round}` : 'warm-up'} ${LABELS[m.side].padEnd(31)} ` +
          `${fmt.int(m.result.ok).padStart(6)} answers in ${fmt.s(m.result.ok / m.result.rps)}: ` +
          `${fmt.rps(m.result.rps).padStart(5)}/s; p50 ${fmt.ms(m.result.p50)} ms, p99 ${fmt.ms(m.result.p99)} ms; ` +
          `CPU ${fmt.ms(m.cpu)} ms per request`,
      );
    const rate: Record<Side, number> = { intake: 0, create: 0 };
    for (const side of ['intake', 'create'] as const) {
      const m = await run(side, 0, WARM_UP);
      report.warmUp.push(m);
      rate[side] = m.result.rps;
      show(m);
      await sleep(500);
    }
    log(`${dialect}: warmed up; ${rounds} round(s) of about ${duration} s per request at ${CONNECTIONS} connections`);
    for (let round = 1; round <= rounds; round++) {
      const order: Side[] = round % 2 ? ['intake', 'create'] : ['create', 'intake'];
      for (const side of order) {
        const amount = Math.max(10 * CONNECTIONS, Math.round(rate[side] * duration));
        const m = await run(side, round, amount);
        report.measures.push(m);
        rate[side] = m.result.rps;
        show(m);
        await sleep(500);
      }
      const r = ratios(report.measures).at(-1);
      if (r !== undefined) log(`${dialect}: round ${round}: intake / create ${fmt.ratio(r)}`);
    }
    report.rss.after = rssMb(app.pid);

    // 5. What the database holds: one inquiry per answer, each with a new contact, assigned, its agent notified.
    const total = sent.intake + sent.create;
    const listed = await getJson(`${url}/api/v1/inquiries?per_page=1`, token);
    expectStatus(listed, 200, 'GET /api/v1/inquiries');
    const agentList = agents.join(', ');
    report.checks.push(
      { what: 'inquiries (the API’s meta.total)', expected: total, found: Number(listed.body.meta.total) },
      {
        what: 'inquiries made by no one (the intake)',
        expected: sent.intake,
        found: await readCount(place, 'select count(*) as n from inquiries where created_by is null'),
      },
      {
        what: 'inquiries made by the admin',
        expected: sent.create,
        found: await readCount(place, 'select count(*) as n from inquiries where created_by is not null'),
      },
      { what: 'contacts', expected: total, found: await readCount(place, 'select count(*) as n from contacts') },
      {
        what: 'inquiries assigned to an agent by the rule',
        expected: total,
        found: await readCount(place, `select count(*) as n from inquiries where assigned_to in (${agentList})`),
      },
      {
        what: 'notifications of an assignment',
        expected: total,
        found: await readCount(place, `select count(*) as n from notifications where kind = 'assigned'`),
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
    if (report.bad.length) {
      report.failed = true;
      report.notes.push(`**Answers other than 202/201 appeared:** ${report.bad.join(' ')}`);
    }
    return report;
  } catch (error) {
    report.failed = true;
    report.notes.push(`**The run failed:** ${(error as Error).message}`);
    log(`${dialect}: FAILED: ${(error as Error).message}`);
    return report;
  } finally {
    report.codeAfter = codeState();
    load.close();
    const before = argv.profile && fs.existsSync(PROFILES) ? new Set(fs.readdirSync(PROFILES)) : new Set<string>();
    await app?.stop();
    if (argv.profile) {
      const made = fs.readdirSync(PROFILES).filter((f) => !before.has(f) && f.endsWith('.cpuprofile'));
      if (made.length) {
        report.profile = path.join(PROFILES, made[0]!);
        log(`${dialect}: the app's CPU profile: ${path.relative(process.cwd(), report.profile)}`);
      }
    }
    await place.drop().catch((e: Error) => log(`cleanup: ${e.message}`));
  }
}

// ------------------------------------------------------------------ markdown

function section(r: Report): string {
  const name = r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const processes =
    workers > 1
      ? `${workers} app processes (\`leadbook serve --workers ${workers}\``
      : 'one app process (`leadbook serve`';
  const lines = [
    `## Public intake against the signed-in create (${name})`,
    '',
    `- Date: ${utcMinute(r.started)}${r.failed ? ' — **the run failed, see the notes**' : ''}`,
    `- Machine: ${machine()}; load average at the start ${r.loadAverage.map((n) => n.toFixed(2)).join(', ')} ` +
      '(the machine is shared)',
    `- Node ${process.version}${r.dialect === 'postgres' ? ', PostgreSQL on 127.0.0.1' : ', better-sqlite3'}`,
    `- Code: ${describeCode(r.code)}`,
    `- Command: \`${command}\`${argv.profile ? ' (the app ran with --cpu-prof, which slows it)' : ''}`,
    `- One fresh database, ${processes}, TRUST_PROXY=true); an intake form (name, email, detail, country; its ` +
      "source) and an assignment rule giving the source's inquiries to 2 agents in turn (due in 60 minutes; each " +
      'agent notified, mail on: .eml files)',
    `- Load: autocannon in a separate process, ${CONNECTIONS} connections. Intake: \`${PATHS.intake}\`, no ` +
      'sign-in, each request from an address of its own (x-forwarded-for) with an email of its own (a new contact ' +
      `each), no Origin, no Idempotency-Key. Create: \`${PATHS.create}\` with the admin's bearer token, the same ` +
      "fields and the form's source",
    `- ${fmt.int(WARM_UP)} requests of each to warm up, then ${rounds} round(s) of both, alternating which goes ` +
      `first; each measurement is as many requests as its side answered in ${duration} s the time before, every ` +
      'one answered and counted; the time is from the first request to the last answer',
    '',
  ];
  const all = [...r.warmUp, ...r.measures];
  if (all.length)
    lines.push(
      table(
        ['measurement', 'request', 'answers', 'time', 'per second', 'p50 ms', 'p99 ms', 'CPU per request (app)'],
        all.map((m) => [
          m.round ? `round ${m.round}` : 'warm-up',
          `${LABELS[m.side]}: \`${PATHS[m.side]}\` → ${STATUS[m.side]}`,
          fmt.int(m.result.ok),
          fmt.s(m.result.ok / m.result.rps),
          fmt.rps(m.result.rps),
          fmt.ms(m.result.p50),
          fmt.ms(m.result.p99),
          `${fmt.ms(m.cpu)} ms`,
        ]),
      ),
      '',
    );
  const intake = best(r.measures, 'intake');
  const create = best(r.measures, 'create');
  const each = ratios(r.measures);
  const ratio = intake && create ? intake.result.rps / create.result.rps : undefined;
  if (intake && create)
    lines.push(
      'Reported: the better of the rounds for each request: ' +
        `intake ${fmt.rps(intake.result.rps)}/s (round ${intake.round}), ` +
        `create ${fmt.rps(create.result.rps)}/s (round ${create.round}), ratio ${fmt.ratio(ratio)}; ` +
        `the ratio within each round: ${each.map(fmt.ratio).join(', ')} (median ${fmt.ratio(median(each))}). ` +
        `CPU per request: ${fmt.ms(intake.cpu)} ms for the intake, ${fmt.ms(create.cpu)} ms for the create ` +
        `(the app's process${workers > 1 ? 'es' : ''}` +
        `${r.dialect === 'sqlite' ? ', SQLite in it' : "; PostgreSQL's processes not counted"}). ` +
        `App RSS: ${fmt.mb(r.rss.idle)} after start, ${fmt.mb(r.rss.after)} at the end.`,
      '',
    );
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
  const forSqlite = r.dialect === 'sqlite';
  const verdict = (ok: boolean | undefined) =>
    !forSqlite
      ? 'n/a (the target is for SQLite)'
      : workers > 1
        ? 'n/a (the target is for one app process)'
        : ok === undefined || r.failed
          ? 'n/a'
          : ok
            ? 'pass'
            : '**FAIL**';
  lines.push(
    `### Targets (intake, ${name})`,
    '',
    table(
      ['target', 'measured', 'result'],
      [
        [
          `public intake: ≥ ${TARGET.intakeRps} accepted (202) submissions/s on SQLite at ${CONNECTIONS} connections`,
          intake ? `${fmt.rps(intake.result.rps)}/s` : '–',
          verdict(intake ? intake.result.rps >= TARGET.intakeRps : undefined),
        ],
        [
          `public intake: ≥ ${TARGET.ratio} × the signed-in \`${PATHS.create}\` (same run, ${CONNECTIONS} connections)`,
          ratio !== undefined
            ? `${fmt.ratio(ratio)} (${fmt.rps(intake!.result.rps)} / ${fmt.rps(create!.result.rps)})`
            : '–',
          verdict(ratio !== undefined ? ratio >= TARGET.ratio : undefined),
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
log(`bench:intake: ${dialects.join(' and ')}, ${rounds} round(s) of about ${duration} s per request`);
let failed = false;
for (const dialect of dialects) {
  const report = await benchDatabase(dialect);
  const markdown = section(report);
  writeSection(`intake:${dialect}`, markdown);
  failed ||= report.failed;
  console.log(`\n${markdown}`);
  log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.failed ? ' (FAILED)' : ''}`);
}
stopAll();
log(`bench:intake: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
