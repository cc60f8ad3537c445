// npm run bench [-- --db sqlite|postgres|mysql|both|all] [--rows N] [--quick] [--duration S] [--only a,b]
//
// For each database: seeds a fresh one, starts the app (`leadbook serve`) and
// the floor (bench/floor.ts) on it, checks that both answer every read
// scenario with the same records, then drives each scenario with autocannon
// from a separate process, measures CSV export and import, memory, and on
// PostgreSQL and MariaDB 2 workers against 1, and writes bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialect } from '../src/db/dialect.ts';
import { WEBHOOK_EVENTS } from '../src/resources/webhook.ts';
import { sqlDrift } from './app-sql.ts';
import { copyDatabase, floorBulkInsert } from './floor-bulk.ts';
import type { LoadJob, LoadResult } from './load.ts';
import { Receiver } from './receiver.ts';
import {
  cleanUpOnSignal,
  DATA_ROOT,
  type Place,
  createAccounts,
  dataParams,
  freshPlace,
  getJson,
  type Json,
  log,
  postJson,
  readRows,
  request,
  seedPlace,
  sleep,
  expectStatus,
  readCount,
} from './places.ts';
import { LoadClient, type Server, appServer, floorServer, leadbook, stopAll, rssMb } from './processes.ts';
import {
  benchCommand,
  busyNote,
  codeState,
  DATABASE_NAMES,
  dialectsOf,
  type Measured,
  RATIO_SCENARIOS,
  RESULTS_FILE,
  ROUNDS,
  type Report,
  fmt,
  section,
  writeSection,
} from './results.ts';
import {
  LABELS,
  PER_PAGE,
  READ_SCENARIOS,
  SCENARIOS,
  type ScenarioName,
  type ReadScenario,
  type ScenarioParams,
  appPath,
  createBody,
  floorPath,
  patchBody,
} from './scenarios.ts';

/** Measurements besides the scenarios, by name. */
const EXTRAS = {
  csv: 'CSV export and import',
  upsert: 'an import that updates',
  workers: 'reads with 2 workers',
} as const;
/**
 * What --quick measures: what RESULTS.md's targets need. The deep page by offset, the date filter, sort by name, the
 * updating import and the 2 workers are measured by a full run, or when --only names them.
 */
const QUICK = [
  'get',
  'page1',
  'search1',
  'search2',
  'deep-cursor',
  'filter-eq',
  'create',
  'patch',
  'storm',
  'csv',
] as const satisfies readonly (ScenarioName | keyof typeof EXTRAS)[];

const USAGE = `npm run bench -- [options]
  --db sqlite|postgres|mysql|both|all
                              databases to measure (default all: SQLite, PostgreSQL and MariaDB; both: the first two)
  --rows N                    contacts to seed (default 1,000,000; --quick: 100,000); inquiries: a tenth of that
  --quick                     100,000 contacts (no inquiries), short measurements, and only what the targets need:
                              ${QUICK.join(', ')} (about 2 minutes a database)
  --duration S                seconds per measurement (default 10; --quick: 1)
  --only a,b                  only these scenarios (${SCENARIOS.join(', ')}),
                              and of the other measurements only those named: ${Object.keys(EXTRAS).join(', ')}
                              (upsert updates what csv imported)
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres);
MariaDB: BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/test).`;

const { argv, fail, command } = benchCommand('bench', USAGE, {
  db: { type: 'string', default: 'all' },
  rows: { type: 'string' },
  quick: { type: 'boolean', default: false },
  duration: { type: 'string' },
  only: { type: 'string' },
});

const dialects = dialectsOf(argv.db, fail, ['sqlite', 'postgres', 'mysql']);
const rows = argv.rows !== undefined ? Number(argv.rows) : argv.quick ? 100_000 : 1_000_000;
if (!Number.isInteger(rows) || rows < 1000) fail('--rows must be a whole number of at least 1000');
const duration = argv.duration !== undefined ? Number(argv.duration) : argv.quick ? 1 : 10;
if (!(duration > 0 && duration <= 600)) fail('--duration must be a number of seconds from 0 to 600');
const only = argv.only
  ? new Set(
      argv.only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
  : null;
for (const name of only ?? [])
  if (!(SCENARIOS as readonly string[]).includes(name) && !Object.hasOwn(EXTRAS, name))
    fail(`--only: ${name} is not a scenario`);
/** What is measured: --only's names, else --quick's, else everything. */
const chosen = only ?? (argv.quick ? new Set<string>(QUICK) : null);
const wanted = (name: string) => !chosen || chosen.has(name);
/** What a --quick run leaves out, as its sections say (--only says its own). */
const leftOut = only
  ? []
  : [
      ...SCENARIOS.filter((s) => !wanted(s)).map((s) => LABELS[s]),
      ...Object.entries(EXTRAS)
        .filter(([k]) => !wanted(k))
        .map(([, v]) => v),
    ];
const scenarios = SCENARIOS.filter(wanted);
// No scenario reads inquiries: the quick mode spends its minutes on contacts.
const inquiries = argv.quick ? 0 : Math.round(rows / 10);
const SEED = 1;

// ------------------------------------------------------------------ databases

const countContacts = (place: Place) => readCount(place, 'select count(*) as n from contacts');

/** The database server, its version and where it runs, as the section says them. */
async function serverOf(place: Place): Promise<string> {
  const host = new URL(place.url!).host;
  if (place.dialect === 'mysql') {
    const [row] = await readRows<{ v: string }>(place, 'select version() as v');
    return `MariaDB ${String(row?.v).split('-')[0]} on ${host}`;
  }
  const [row] = await readRows<{ v: string }>(place, 'show server_version');
  return `PostgreSQL ${String(Object.values(row ?? {})[0]).split(' ')[0]} on ${host}`;
}

// ------------------------------------------------------------------ scenarios

/** The autocannon job of a scenario, on the app or on the floor. */
function jobFor(
  scenario: ScenarioName,
  side: 'app' | 'floor',
  server: Server,
  token: string,
  p: ScenarioParams & { idMin: number; idMax: number },
  connections: number,
  seconds: number,
): LoadJob {
  const base = {
    url: server.url,
    connections,
    duration: seconds,
    idMin: p.idMin,
    idMax: p.idMax,
    headers: side === 'app' ? { authorization: `Bearer ${token}` } : ({} as Record<string, string>),
  };
  const prefix = side === 'app' ? '/api/v1/contacts' : '/contacts';
  switch (scenario) {
    case 'get':
    case 'storm':
      return { ...base, path: `${prefix}/{id}` };
    case 'create':
      return { ...base, method: 'POST', path: prefix, body: JSON.stringify(createBody('{n}')) };
    case 'patch':
      return { ...base, method: 'PATCH', path: `${prefix}/{id}`, body: JSON.stringify(patchBody('{n}')) };
    default:
      return { ...base, path: side === 'app' ? appPath(scenario, p) : floorPath(scenario, p) };
  }
}

/** Checks that the app and the floor answer each read scenario with the same records (and totals). */
async function verify(
  app: Server,
  floor: Server,
  token: string,
  p: ScenarioParams,
  list: ScenarioName[],
  warn: (note: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  const ids = (body: Json) => (Array.isArray(body?.data) ? body.data.map((r: { id: unknown }) => String(r.id)) : null);
  if (list.includes('get') || list.includes('storm') || list.includes('patch')) {
    const a = await getJson(`${app.url}/api/v1/contacts/${p.sampleId}`, token);
    const f = await getJson(`${floor.url}/contacts/${p.sampleId}`);
    if (a.status !== 200 || f.status !== 200)
      problems.push(`get by id ${p.sampleId}: app answered ${a.status}, floor ${f.status}`);
    else if (String(a.body.data.id) !== String(f.body.data.id) || a.body.data.name !== f.body.data.name)
      problems.push(
        `get by id: app gave ${a.body.data.id} ${a.body.data.name}, floor ${f.body.data.id} ${f.body.data.name}`,
      );
  }
  for (const scenario of READ_SCENARIOS.filter((s) => list.includes(s))) {
    const a = await getJson(app.url + appPath(scenario, p), token);
    const f = await getJson(floor.url + floorPath(scenario, p));
    if (a.status !== 200 || f.status !== 200) {
      problems.push(
        `${LABELS[scenario]}: app answered ${a.status} ${JSON.stringify(a.body).slice(0, 300)}, floor ${f.status} ${JSON.stringify(f.body).slice(0, 300)}`,
      );
      continue;
    }
    const appIds = ids(a.body);
    const floorIds = ids(f.body);
    if (!appIds)
      problems.push(`${LABELS[scenario]}: the app's answer holds no list (${JSON.stringify(a.body).slice(0, 200)})`);
    else if (appIds.length === 0)
      warn(`${LABELS[scenario]} finds no records in this data (too few rows?): it measures an empty answer.`);
    if (appIds?.join(',') !== floorIds?.join(','))
      problems.push(
        `${LABELS[scenario]}: different records\n    app:   ${appIds?.join(', ')}\n    floor: ${floorIds?.join(', ')}`,
      );
    const appTotal = a.body.meta?.total;
    const floorTotal = f.body.meta?.total;
    if (appTotal !== undefined && floorTotal !== undefined && Number(appTotal) !== Number(floorTotal))
      problems.push(`${LABELS[scenario]}: total ${appTotal} from the app, ${floorTotal} from the floor`);
  }
  return problems;
}

/** Milliseconds a GET takes to answer, start to last byte. */
async function timed(url: string, token?: string): Promise<number> {
  const started = performance.now();
  const answer = await getJson(url, token);
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}`);
  return performance.now() - started;
}

/**
 * When a read answered nothing within a measurement (each answer takes longer than the measurement, or than the
 * queue of 10 connections before it), the time of one request at a time, app and floor in turn, after one of each
 * has waited out the statements the measurement left running: what the section says instead of a rate.
 */
async function oneAtATime(appUrl: string, token: string, floorUrl: string, scenario: ScenarioName): Promise<string> {
  await timed(appUrl, token);
  await timed(floorUrl);
  const app: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 5; i++) {
    app.push(await timed(appUrl, token));
    bare.push(await timed(floorUrl));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return (
    `${LABELS[scenario]}: some of its ${duration} s measurements received no answer at all (each takes longer than ` +
    `the measurement, or than the requests queued before it); one request at a time afterwards took ` +
    `${fmt.ms(median(app))} ms on the app and ${fmt.ms(median(bare))} ms on the floor (median of 5 each).`
  );
}

/** Rows an import that updates is given: the first contacts, each a city of its own (a field the search copies). */
const UPDATE_ROWS = 10_000;

/** `leadbook import --upsert-by id` of a file that changes the city of the place's first UPDATE_ROWS contacts. */
async function measureUpdatingImport(place: Place, csv: NonNullable<Report['csv']>): Promise<void> {
  const ids = await readRows<{ id: number | string }>(
    place,
    `select id from contacts order by id limit ${UPDATE_ROWS}`,
  );
  const file = path.join(DATA_ROOT, `${path.basename(place.env.DATA_DIR!)}-updates.csv`);
  fs.writeFileSync(file, ['id,city', ...ids.map((r) => `${r.id},Upsertville ${r.id}`)].join('\n'));
  try {
    const updated = await leadbook(['import', '--upsert-by', 'id', 'contacts', file], place.env);
    const said = /updated (\d+)/.exec(updated.stdout);
    if (updated.code !== 0 || Number(said?.[1]) !== ids.length) {
      csv.note = `leadbook import --upsert-by id: ${[updated.stdout, updated.stderr].join(' ').trim().slice(0, 300)}`;
      log(`${place.dialect}: ${csv.note}`);
      return;
    }
    csv.updateSeconds = updated.seconds;
    csv.updatedRows = ids.length;
    log(`${place.dialect}: an import updated ${fmt.int(ids.length)} contacts in ${fmt.s(updated.seconds)}`);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The desk as the bench switched it on (switchOnDesk). */
interface Desk {
  said: string;
  /**
   * Before a measurement: the endpoint on for the app's, off for the floor's (the floor's writes land in the same
   * change log, and the app's dispatcher would otherwise deliver them, on the machine the floor is measured on), and
   * what earlier measurements queued delivered, so that each pays for its own writes' deliveries only.
   */
  settle(side: 'app' | 'floor'): Promise<void>;
}

/** Change-log entries the dispatcher has not read yet, and deliveries not sent yet. */
const BACKLOG_SQL = `select (select count(*) from webhook_deliveries where status = 'pending')
  + (select count(*) from change_log where id > (select last_id from webhook_cursor where name = 'webhooks')) as n`;

/**
 * Switches on what issue 18 measures the desk with, beyond what every write does anyway (the change log, contact
 * matching, the declared rules): an assignment rule for every new inquiry, and a webhook endpoint for every event
 * at `receiver` (a fast one, answering 204), so that the dispatcher queues, signs and sends a delivery for each
 * of the app's writes while they are measured.
 */
async function switchOnDesk(
  place: Place,
  appUrl: string,
  token: string,
  adminId: unknown,
  receiver: Receiver,
  warn: (note: string) => void,
): Promise<Desk> {
  const send = async (method: string, to: string, json: unknown, status: number) => {
    const a = await request(method, appUrl + to, { token, json });
    expectStatus(a, status, `${method} ${to}`);
    return a.body as Json;
  };
  await send('POST', '/api/v1/assignment-rules', { name: 'bench: every inquiry', position: 1, users: [adminId] }, 201);
  const endpoint = await send(
    'POST',
    '/api/v1/webhooks',
    { url: receiver.url, events: WEBHOOK_EVENTS, description: 'bench: every event' },
    201,
  );
  let active = true;
  return {
    said: `an assignment rule for every new inquiry, and a webhook endpoint for every event (${WEBHOOK_EVENTS.length} types) at a receiver on 127.0.0.1 answering 204 (on while the app is measured, off while the floor is)`,
    async settle(side) {
      // Drained first, with the endpoint as the last measurement had it: an endpoint turned off keeps what was
      // queued for it until it is on again.
      const deadline = Date.now() + 120_000;
      for (;;) {
        const backlog = await readCount(place, BACKLOG_SQL);
        if (backlog === 0) break;
        if (Date.now() > deadline) {
          warn(`the webhook backlog was still ${backlog} after 120 s; measured with it`);
          break;
        }
        await sleep(100);
      }
      if (active !== (side === 'app')) {
        active = side === 'app';
        await send('PATCH', `/api/v1/webhooks/${endpoint.data.id}`, { active }, 200);
      }
    },
  };
}

// ------------------------------------------------------------------ one database

async function benchDatabase(dialect: Dialect): Promise<Report> {
  const report: Report = {
    dialect,
    started: new Date(),
    loadAverage: os.loadavg(),
    code: codeState(),
    measured: {},
    rss: {},
    rssTrail: [],
    notes: [],
    failed: false,
  };
  const busy = busyNote(report.loadAverage);
  if (busy) {
    report.notes.push(busy);
    log(`${dialect}: WARNING: ${busy}`);
  }
  const appKey = randomBytes(32).toString('base64');
  const runName = `leadbook_bench_${process.pid}_${dialect}`;
  const place = await freshPlace(dialect, runName, appKey);
  const cleanups: (() => Promise<void>)[] = [place.drop];
  const load = new LoadClient();
  let app: Server | undefined;
  let floor: Server | undefined;
  try {
    // 1. Data.
    if (place.dialect !== 'sqlite') report.server = await serverOf(place);
    log(`${dialect}: seeding ${fmt.int(rows)} contacts and ${fmt.int(inquiries)} inquiries`);
    const seeded = await seedPlace(place, { contacts: rows, inquiries, seed: SEED });
    report.seed = { rows: seeded.rows, seconds: seeded.seconds, rate: seeded.rate };
    log(`${dialect}: ${seeded.said}`);
    const admin = { email: 'bench-admin@example.com', password: `bench admin ${randomBytes(9).toString('base64url')}` };
    const signer = {
      email: 'bench-storm@example.com',
      password: `bench storm ${randomBytes(9).toString('base64url')}`,
    };
    await createAccounts(place, [
      { ...admin, name: 'Bench Admin', admin: true },
      { ...signer, name: 'Bench Storm' },
    ]);

    // 2. Servers: the app may deliver webhooks to the bench's receiver on 127.0.0.1.
    const receiver = await new Receiver(false).start();
    cleanups.push(() => receiver.close());
    const appEnv = { ...place.env, WEBHOOKS_ALLOW_PRIVATE: 'true' };
    cleanups.unshift(async () => {
      await app?.stop();
      await floor?.stop();
    });
    const [started, startedFloor] = await Promise.allSettled([appServer(appEnv), floorServer(place.env)]);
    if (started.status === 'fulfilled') app = started.value;
    if (startedFloor.status === 'fulfilled') floor = startedFloor.value;
    if (!app || !floor)
      throw (started.status === 'rejected' ? started.reason : (startedFloor as PromiseRejectedResult).reason) as Error;
    const appPid = app.pid;
    const issued = await postJson(`${app.url}/api/v1/auth/token`, { ...admin, device_name: 'bench' });
    if (issued.status !== 201)
      throw new Error(`POST /api/v1/auth/token answered ${issued.status}: ${JSON.stringify(issued.body)}`);
    const token = issued.body.token as string;
    report.rss.idle = rssMb(appPid);
    log(`${dialect}: app on ${app.url} (RSS ${fmt.mb(report.rss.idle)}), floor on ${floor.url}`);
    const desk = await switchOnDesk(place, app.url, token, issued.body.data.id, receiver, (note) => {
      report.notes.push(note);
      log(`${dialect}: WARNING: ${note}`);
    });
    report.desk = { said: desk.said };

    // 3. What the scenarios need to know about the data.
    const params = await dataParams(app.url, token);
    log(
      `${dialect}: ${fmt.int(params.total)} contacts, ids ${params.idMin}–${params.idMax}; deep page ${params.deepPage} (row ${fmt.int((params.deepPage - 1) * PER_PAGE)}), city ${params.city}`,
    );

    // 4. Same SQL, same answers.
    const drift = await sqlDrift(dialect, params);
    if (drift.length) {
      log(`${dialect}: WARNING: the floor's SQL (bench/floor-sql.ts) differs from the app's:\n  ${drift.join('\n  ')}`);
      report.notes.push(
        `The floor's SQL differed from the app's (align bench/floor-sql.ts; \`node --import tsx bench/app-sql.ts\` prints the app's):\n\n\`\`\`\n${drift.join('\n')}\n\`\`\``,
      );
    }
    const mismatches = await verify(app, floor, token, params, scenarios, (note) => {
      report.notes.push(note);
      log(`${dialect}: WARNING: ${note}`);
    });
    if (mismatches.length) {
      report.failed = true;
      report.notes.push(
        `**The app and the floor answered differently; nothing was measured:**\n\n\`\`\`\n${mismatches.join('\n')}\n\`\`\``,
      );
      log(`${dialect}: FAILED: the app and the floor do not return the same records:\n  ${mismatches.join('\n  ')}`);
      return report;
    }
    log(`${dialect}: the app and the floor return the same records for every read scenario`);

    // 5. Warm-up, then each scenario: throughput at 10 connections, service time at 1.
    // Every path measured once (reads, writes, sign-ins), so that what memory grows by later is not first use; get by
    // id always, which the sign-in storm reads. At least 1 s a path: what autocannon took for any shorter time before
    // it checked every 0.1 s (bench/load.ts), so that "after warm-up" stays comparable with earlier runs.
    const warm = Math.max(1, Math.min(3, duration / 3));
    const warmed = (['get', 'page1', 'search1', 'filter-eq', 'sort-name', 'create', 'patch'] as const).filter(
      (s) => s === 'get' || wanted(s),
    );
    for (const s of warmed) {
      await load.run(jobFor(s, 'app', app, token, params, 10, warm));
      await load.run(jobFor(s, 'floor', floor, token, params, 10, warm));
    }
    await load.run({
      url: app.url,
      method: 'POST',
      path: '/api/v1/auth/login',
      body: JSON.stringify(signer),
      connections: 10,
      duration: warm,
    });
    await sleep(300);
    report.rss.warm = rssMb(appPid);
    log(`${dialect}: warmed up (app RSS ${fmt.mb(report.rss.warm)}); ${duration} s per measurement`);

    const note = (r: LoadResult | undefined, what: string, server?: Server) => {
      if (!r || !(r.non2xx || r.errors || r.timeouts)) return;
      const said = server
        ?.output()
        .trim()
        .split('\n')
        .slice(-3)
        .map((l) => l.slice(0, 300))
        .join(' / ');
      report.notes.push(
        `${what}: ${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodes)}), ${r.errors} errors, ${r.timeouts} timeouts${said ? `; the server's last words: ${said}` : ''}`,
      );
    };
    /** The round whose throughput is the median (of an odd number of rounds). */
    const medianRound = (results: LoadResult[]) => [...results].sort((a, b) => a.rps - b.rps)[results.length >> 1]!;
    // autocannon reports when its time is up, with requests still in flight: let them finish
    // before the next measurement, or a write of the app's would collide with the floor's.
    const measure = async (job: LoadJob, side: 'app' | 'floor' = 'app') => {
      await desk.settle(side);
      const r = await load.run(job);
      await sleep(300);
      return r;
    };
    for (const scenario of scenarios.filter((s) => s !== 'storm')) {
      const m: Measured = {};
      const rounds = (RATIO_SCENARIOS as readonly string[]).includes(scenario) ? ROUNDS : 1;
      const app10: LoadResult[] = [];
      const floor10: LoadResult[] = [];
      for (let round = 0; round < rounds; round++) {
        app10.push(await measure(jobFor(scenario, 'app', app, token, params, 10, duration)));
        floor10.push(await measure(jobFor(scenario, 'floor', floor, token, params, 10, duration), 'floor'));
      }
      m.app10 = medianRound(app10);
      m.floor10 = medianRound(floor10);
      // Service time at 1 connection; --quick leaves it out where a target reads the rate only.
      if (!argv.quick || rounds === 1) {
        m.app1 = await measure(jobFor(scenario, 'app', app, token, params, 1, duration));
        m.floor1 = await measure(jobFor(scenario, 'floor', floor, token, params, 1, duration), 'floor');
      }
      const taken = { app10, floor10, app1: m.app1 ? [m.app1] : [], floor1: m.floor1 ? [m.floor1] : [] };
      for (const [k, results] of Object.entries(taken))
        for (const r of results)
          note(
            r,
            `${LABELS[scenario]} (${k.replace(/\d+$/, '')}, ${k.match(/\d+$/)![0]} connection(s))`,
            k.startsWith('app') ? app : floor,
          );
      report.measured[scenario] = m;
      if ((READ_SCENARIOS as readonly string[]).includes(scenario) && Object.values(m).some((r) => r.ok === 0)) {
        const read = scenario as ReadScenario;
        const said = await oneAtATime(
          app.url + appPath(read, params),
          token,
          floor.url + floorPath(read, params),
          scenario,
        ).catch(
          (e: Error) =>
            `${LABELS[scenario]}: a measurement received no answer, and one request could not be timed: ${e.message}`,
        );
        report.notes.push(said);
        log(`${dialect}: ${said}`);
      }
      report.rssTrail.push(`${scenario} ${fmt.mb(rssMb(appPid))}`);
      log(
        `${dialect}: ${LABELS[scenario].padEnd(30)} app ${fmt.rps(m.app10.rps).padStart(6)} req/s, floor ${fmt.rps(m.floor10.rps).padStart(6)} req/s (${fmt.ratio(m.app10.rps / m.floor10.rps)}); p50 ${fmt.ms(m.app1?.p50)} ms, p99 ${fmt.ms(m.app1?.p99)} ms; floor p50 ${fmt.ms(m.floor1?.p50)} ms${rounds > 1 ? `; rounds ${app10.map((r, i) => fmt.ratio(r.rps / floor10[i]!.rps)).join(', ')}` : ''}`,
      );
    }

    // 6. Reads while 10 clients keep signing in.
    if (wanted('storm')) {
      // The idle baseline right before the storm, so that both see the same machine (it is shared).
      const idle = await measure(jobFor('get', 'app', app, token, params, 1, duration));
      const stormLoad = new LoadClient();
      try {
        const storm = stormLoad.run({
          url: app.url,
          method: 'POST',
          path: '/api/v1/auth/login',
          body: JSON.stringify(signer),
          connections: 10,
          duration: duration + 2,
        });
        await sleep(1000);
        const during = await load.run(jobFor('get', 'app', app, token, params, 1, duration));
        const signIns = await storm;
        note(signIns, 'sign-in storm (logins)');
        note(during, 'get by id during the sign-in storm');
        report.measured.storm = { app1: during };
        report.storm = {
          loginsPerSecond: signIns.rps,
          idleP99: idle.p99,
          stormP99: during.p99,
          non2xx: signIns.non2xx,
        };
        log(
          `${dialect}: sign-in storm ${fmt.rps(signIns.rps)} logins/s: get by id p50 ${fmt.ms(during.p50)} ms, p99 ${fmt.ms(during.p99)} ms (idle p99 ${fmt.ms(idle.p99)} ms)`,
        );
      } finally {
        stormLoad.close();
      }
    }
    report.rss.after = rssMb(appPid);
    report.desk.deliveries = receiver.heard.requests;
    report.rssTrail.push(`end ${fmt.mb(report.rss.after)}`);
    log(`${dialect}: app RSS after the bench ${fmt.mb(report.rss.after)}`);
    await app.stop();
    await floor.stop();

    // 7. The server databases (PostgreSQL, MariaDB): reads with 2 workers against 1.
    if (dialect !== 'sqlite' && wanted('workers')) {
      try {
        const two = await appServer(appEnv, ['--workers', '2']);
        try {
          report.workers = [];
          for (const s of ['get', 'page1'] as const) {
            const one = report.measured[s]?.app10 ?? undefined;
            // Fresh processes: warm them as the single one was.
            await load.run(jobFor(s, 'app', two, token, params, 10, warm * 2));
            const r2 = await measure(jobFor(s, 'app', two, token, params, 10, duration));
            note(r2, `${LABELS[s]} (2 workers)`);
            report.workers.push({ scenario: LABELS[s], one: one?.rps ?? NaN, two: r2.rps });
            log(`${dialect}: ${LABELS[s]} with 2 workers: ${fmt.rps(r2.rps)} req/s (1 worker: ${fmt.rps(one?.rps)})`);
          }
        } finally {
          await two.stop();
        }
      } catch (error) {
        report.workersNote = `serve --workers 2 could not be measured: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`;
        log(`${dialect}: ${report.workersNote}`);
      }
    }

    // 8. CSV: export everything, import it into a fresh database.
    if (wanted('csv')) {
      report.csv = {};
      const file = path.join(DATA_ROOT, `${runName}-contacts.csv`);
      cleanups.push(async () => fs.rmSync(file, { force: true }));
      const exported = await leadbook(['export', 'contacts', file], place.env, { watchMemory: true });
      if (exported.code !== 0) {
        report.csv.note = `leadbook export failed: ${exported.stderr.trim().split('\n').slice(0, 3).join(' ')}`;
        log(`${dialect}: ${report.csv.note}`);
      } else {
        report.csv.exportSeconds = exported.seconds;
        report.csv.exportPeakMb = exported.peakRssMb;
        report.csv.exportRows = await countContacts(place);
        log(
          `${dialect}: exported ${fmt.int(report.csv.exportRows)} contacts in ${fmt.s(exported.seconds)}, peak RSS ${fmt.mb(exported.peakRssMb)}`,
        );
      }
      if (report.csv.exportRows !== undefined) {
        const target = await freshPlace(dialect, `${runName}_import`, appKey);
        cleanups.push(target.drop);
        // The exported rows name their service, source and creator, which an import looks up by name: the target
        // holds the seed's accounts and lookup rows (a seed of no records), as the database they came from does.
        const lookups = await leadbook(
          ['seed', '--contacts', '0', '--inquiries', '0', '--seed', String(SEED)],
          target.env,
        );
        if (lookups.code !== 0) throw new Error(`leadbook seed failed in the import database:\n${lookups.stderr}`);
        // The import's rows are created by an admin, as an upload through the API would be.
        const owner = await leadbook(
          ['user:create', '--admin', '--email', admin.email, '--name', 'Bench Admin'],
          target.env,
          { input: `${admin.password}\n` },
        );
        if (owner.code !== 0) throw new Error(`leadbook user:create failed in the import database:\n${owner.stderr}`);
        // SQLite: the floor's bulk insert of the same rows goes into a copy of the database as the import finds it.
        const targetFile = path.join(target.env.DATA_DIR!, 'leadbook.sqlite');
        const floorFile = path.join(target.env.DATA_DIR!, 'floor-bulk.sqlite');
        if (dialect === 'sqlite') copyDatabase(targetFile, floorFile);
        const imported = await leadbook(['import', 'contacts', file], target.env, { showProgress: true });
        if (imported.code !== 0) {
          // Its progress goes to standard error; what it refused, to standard output.
          const said = [...imported.stderr.split(/[\r\n]+/), ...imported.stdout.split('\n')]
            .filter((l) => l.trim() && !l.startsWith('importing '))
            .slice(0, 4)
            .join(' ');
          report.csv.note = `leadbook import failed (exit ${imported.code}): ${said}`;
          log(`${dialect}: ${report.csv.note}`);
        } else {
          report.csv.importSeconds = imported.seconds;
          report.csv.importedRows = await countContacts(target);
          log(`${dialect}: imported ${fmt.int(report.csv.importedRows)} contacts in ${fmt.s(imported.seconds)}`);
          if (dialect === 'sqlite') {
            const floorBulk = floorBulkInsert(targetFile, floorFile, argv.quick);
            report.csv.floorImportSeconds = floorBulk.seconds;
            report.csv.floorImportRows = floorBulk.rows;
            report.csv.floorImportHow = floorBulk.how;
            log(
              `${dialect}: the floor inserted ${fmt.int(floorBulk.rows)} of the same rows in ${fmt.s(floorBulk.seconds)} (${floorBulk.how})`,
            );
          }
          if (report.csv.importedRows !== report.csv.exportRows)
            report.notes.push(
              `The import wrote ${report.csv.importedRows} contacts of the ${report.csv.exportRows} exported: ${imported.stdout.trim().split('\n').slice(-3).join(' ')}`,
            );
          if (wanted('upsert')) await measureUpdatingImport(target, report.csv);
        }
        await target.drop();
      }
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
    for (const cleanup of cleanups) await cleanup().catch((e: Error) => log(`cleanup: ${e.message}`));
  }
}

// ------------------------------------------------------------------ main

const started = performance.now();
let failed = false;
cleanUpOnSignal();
fs.mkdirSync(DATA_ROOT, { recursive: true });
log(
  `bench: ${dialects.map((d) => DATABASE_NAMES[d]).join(', ')}, ${fmt.int(rows)} contacts, ${duration} s per measurement${only ? `, only ${[...only].join(',')}` : ''}`,
);
for (const dialect of dialects) {
  const report = await benchDatabase(dialect);
  writeSection(dialect, section(report, { rows, inquiries, seed: SEED, duration, command, only, leftOut }));
  failed ||= report.failed;
  log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.failed ? ' (FAILED)' : ''}`);
}
stopAll();
log(`bench: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
