// npm run bench:pipeline [-- --db sqlite|postgres|both] [--contacts N] [--inquiries M] [--duration S] [--quick]
//
// The pipeline at the size of issue 13's acceptance line: seeds a fresh database (`leadbook seed --pipeline`:
// inquiries linked to contacts, spread over the stages, assigned to 8 agents), starts the app (`leadbook serve`),
// signs in as the agent with about a tenth of the inquiries (a session cookie, as a browser), and measures with
// autocannon from a separate process, throughput at 10 connections and service time (p50, p99) at 1:
//   the board page (GET /inquiries/board), the page the navigation's "My open inquiries" link opens (read from the
//   board page's own navigation), and the global search (GET /api/v1/search) for one word and for two;
// then, as an admin with a token, times an update of 10,000 inquiries' stage (POST /api/v1/inquiries/bulk) end to
// end: once in a single call of 10,000 ids, once in the parts the web page sends (public/bulk.js: 500 ids a call),
// each on inquiries not yet in that stage, and checks that every record changed and got its change-log entry.
// Writes the database's pipeline section of bench/RESULTS.md, with the issue's targets.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGENTS } from '../src/cli/fake-data.ts';
import type { Dialect } from '../src/db/dialect.ts';
import type { LoadJob, LoadResult } from './load.ts';
import {
  cleanUpOnSignal,
  type Answer,
  createAccounts,
  DATA_ROOT,
  freshPlace,
  getJson,
  log,
  type Place,
  postJson,
  readRows,
  request,
  seedPlace,
  type Seeded,
  sleep,
  expectStatus,
  readCount,
} from './places.ts';
import { appServer, cpuTicks, LoadClient, type Server, stopAll, rssMb } from './processes.ts';
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
import { SEARCH_ONE, SEARCH_TWO } from './scenarios.ts';

const USAGE = `npm run bench:pipeline -- [options]
  --db sqlite|postgres|both   databases to measure (default both)
  --contacts N                contacts to seed (default 1,000,000; --quick: 100,000)
  --inquiries M               inquiries to seed (default 100,000; --quick: 10,000)
  --duration S                seconds per measurement (default 10; --quick: 1)
  --quick                     the smaller sizes and short measurements
  --keep                      keep the seeded database at the end (for EXPLAIN), and say where it is
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).`;

const { argv, fail, command } = benchCommand('bench:pipeline', USAGE, {
  db: { type: 'string', default: 'both' },
  contacts: { type: 'string' },
  inquiries: { type: 'string' },
  duration: { type: 'string' },
  quick: { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
});

const dialects = dialectsOf(argv.db, fail);
const contacts = argv.contacts !== undefined ? Number(argv.contacts) : argv.quick ? 100_000 : 1_000_000;
if (!Number.isInteger(contacts) || contacts < 100) fail('--contacts must be a whole number of at least 100');
const inquiries = argv.inquiries !== undefined ? Number(argv.inquiries) : argv.quick ? 10_000 : 100_000;
if (!Number.isInteger(inquiries) || inquiries < 100) fail('--inquiries must be a whole number of at least 100');
const duration = argv.duration !== undefined ? Number(argv.duration) : argv.quick ? 1 : 10;
if (!(duration > 0 && duration <= 600)) fail('--duration must be a number of seconds from 0 to 600');
const SEED = 1;

/** The issue's targets, set for 1,000,000 contacts and 100,000 inquiries. */
const TARGET = { pageP50: 10, searchP50: 30, bulkSeconds: 10, bulkRecords: 10_000 } as const;
const FULL = { contacts: 1_000_000, inquiries: 100_000 } as const;
/** Ids per call of the web page's bulk bar (public/bulk.js: SMALLEST, LARGEST, PARTS). */
const webPart = (total: number) => Math.min(500, Math.max(100, Math.ceil(total / 20)));
/** The agent signed in: the first of the 8 the seed assigns inquiries to. */
const AGENT = AGENTS[0]!;

// ------------------------------------------------------------------ what is measured

type PageName = 'board' | 'mine' | 'search1' | 'search2';
const PAGES: readonly PageName[] = ['board', 'mine', 'search1', 'search2'];
const LABELS: Record<PageName, string> = {
  board: 'board page',
  mine: '"My open inquiries"',
  search1: 'global search, one word',
  search2: 'global search, two words',
};
const p50Target = (page: PageName) => (page.startsWith('search') ? TARGET.searchP50 : TARGET.pageP50);

interface PageMeasure {
  path: string;
  /** Bytes of one answer. */
  bytes: number;
  ten?: LoadResult;
  one?: LoadResult;
  /** CPU per answer at 1 connection, in ms: the app's process, and the database's server processes (PostgreSQL). */
  cpu?: Cpu;
}

/** CPU spent, in ms: the app's process (on SQLite the database's work too), and PostgreSQL's server processes. */
interface Cpu {
  app: number;
  db: number;
}

interface BulkMeasure {
  how: string;
  records: number;
  calls: number;
  seconds: number;
  updated: number;
  failed: number;
  /** Change-log entries the update wrote (one per record expected). */
  entries: number;
  /** Inquiries in the target stage afterwards, less before. */
  moved: number;
  cpu: Cpu;
}

interface Report {
  dialect: Dialect;
  started: Date;
  loadAverage: number[];
  code: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  seed?: Seeded;
  who?: string;
  pages: Partial<Record<PageName, PageMeasure>>;
  bulk: BulkMeasure[];
  rss: { idle?: number | null; after?: number | null };
  notes: string[];
  failed: boolean;
}

// ------------------------------------------------------------------ helpers

/**
 * A reading of the CPU ticks (1/100 s) of the app and of the PostgreSQL processes serving the place's database;
 * `since` answers the ms spent from it on. The CPU is less disturbed by a busy machine than the time: on a quiet
 * one, a request at 1 connection takes about its CPU. A server process that ends meanwhile (the pool closes idle
 * connections) takes its ticks along: the database's CPU is a lower bound.
 */
async function cpuReading(place: Place, appPid: number) {
  const backends = async () => {
    const ticks = new Map<number, number>();
    if (place.dialect !== 'postgres') return ticks;
    const rows = await readRows<{ pid: number }>(
      place,
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    for (const { pid } of rows) ticks.set(pid, cpuTicks(pid) ?? 0);
    return ticks;
  };
  const app = cpuTicks(appPid) ?? 0;
  const db = await backends();
  return {
    async since(): Promise<Cpu> {
      let spent = 0;
      for (const [pid, ticks] of await backends()) spent += ticks - (db.get(pid) ?? 0);
      return { app: ((cpuTicks(appPid) ?? 0) - app) * 10, db: spent * 10 };
    },
  };
}

/** CPU as the tables show it: `app + database` in ms (or s); the app alone on SQLite, where it does both. */
function cpuText(dialect: Dialect, cpu: Cpu | undefined, unit: 'ms' | 's' = 'ms'): string {
  if (!cpu) return '–';
  const show = (n: number) => (unit === 's' ? fmt.s(n / 1000) : `${fmt.ms(n)} ms`);
  return dialect === 'sqlite' ? show(cpu.app) : `${show(cpu.app)} + ${show(cpu.db)}`;
}

/** The cookies an answer sets, as a Cookie header. */
const cookiesOf = (a: Answer) =>
  a.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .join('; ');

const decode = (href: string) => href.replaceAll('&amp;', '&');

/** `meta.total` of a list, as the admin sees it. */
async function total(app: Server, token: string, query: string): Promise<number> {
  const a = await getJson(`${app.url}/api/v1/inquiries?${query ? `${query}&` : ''}per_page=1`, token);
  expectStatus(a, 200, `GET /api/v1/inquiries?${query}`);
  return Number(a.body.meta.total);
}

// ------------------------------------------------------------------ one database

async function benchDatabase(dialect: Dialect): Promise<Report> {
  const report: Report = {
    dialect,
    started: new Date(),
    loadAverage: os.loadavg(),
    code: codeState(),
    pages: {},
    bulk: [],
    rss: {},
    notes: [],
    failed: false,
  };
  const busy = busyNote(report.loadAverage);
  if (busy) {
    report.notes.push(busy);
    log(`${dialect}: WARNING: ${busy}`);
  }
  const place = await freshPlace(
    dialect,
    `leadbook_bench_${process.pid}_pipeline_${dialect}`,
    randomBytes(32).toString('base64'),
  );
  const load = new LoadClient();
  let app: Server | undefined;
  try {
    // 1. Data and accounts.
    log(`${dialect}: seeding ${fmt.int(contacts)} contacts and ${fmt.int(inquiries)} inquiries in a pipeline`);
    report.seed = await seedPlace(place, { contacts, inquiries, seed: SEED, pipeline: true });
    log(`${dialect}: ${report.seed.said}`);
    const admin = { email: 'bench-admin@example.com', password: `bench admin ${randomBytes(9).toString('base64url')}` };
    await createAccounts(place, [{ ...admin, name: 'Bench Admin', admin: true }]);

    // 2. The app; the admin's token; the agent, given a password by the admin, signs in as a browser does.
    app = await appServer(place.env);
    report.rss.idle = rssMb(app.pid);
    log(`${dialect}: app on ${app.url} (RSS ${fmt.mb(report.rss.idle)})`);
    const issued = await postJson(`${app.url}/api/v1/auth/token`, { ...admin, device_name: 'bench' });
    expectStatus(issued, 201, 'POST /api/v1/auth/token');
    const token = issued.body.token as string;
    const users = await getJson(`${app.url}/api/v1/users?per_page=100`, token);
    expectStatus(users, 200, 'GET /api/v1/users');
    const agent = (users.body.data as { id: number; email: string }[]).find((u) => u.email === AGENT.email);
    if (!agent) throw new Error(`the seeded agent ${AGENT.email} is missing`);
    const password = `bench agent ${randomBytes(9).toString('base64url')}`;
    expectStatus(
      await request('PATCH', `${app.url}/api/v1/users/${agent.id}`, { token, json: { password } }),
      200,
      `PATCH /api/v1/users/${agent.id} (a password for ${AGENT.email})`,
    );
    const signedIn = await postJson(`${app.url}/api/v1/auth/login`, { email: AGENT.email, password });
    expectStatus(signedIn, 200, 'POST /api/v1/auth/login');
    const cookie = cookiesOf(signedIn);
    if (!cookie) throw new Error('POST /api/v1/auth/login set no cookie');
    const asAgent = (path: string) => request('GET', app!.url + path, { headers: { cookie } });

    // 3. What the data holds for the agent.
    const stages = (await getJson(`${app.url}/api/v1/stages?sort=position&per_page=100`, token)).body.data as {
      id: number;
      name: string;
      kind: string;
    }[];
    const open = stages.filter((s) => s.kind === 'open');
    const all = await total(app, token, '');
    const mine = await total(app, token, `filter[assigned_to]=${agent.id}`);
    const mineOpen = await total(
      app,
      token,
      `filter[assigned_to]=${agent.id}&filter[stage_id][in]=${open.map((s) => s.id).join(',')}`,
    );
    report.who =
      `${AGENT.email} (agent), assigned ${fmt.int(mine)} of the ${fmt.int(all)} inquiries ` +
      `(${((100 * mine) / all).toFixed(1)}%), ${fmt.int(mineOpen)} of them in an open stage ` +
      `(${open.map((s) => s.name).join(', ')})`;
    log(`${dialect}: signed in as ${report.who}`);

    // 4. The pages, each checked once before it is measured.
    const board = await asAgent('/inquiries/board');
    expectStatus(board, 200, 'GET /inquiries/board');
    const link = /<a\b[^>]*\bhref="([^"]+)"[^>]*>\s*My open inquiries\s*</.exec(String(board.body));
    if (!link) throw new Error('the board page has no "My open inquiries" link in its navigation');
    const paths: Record<PageName, string> = {
      board: '/inquiries/board',
      mine: decode(link[1]!),
      search1: `/api/v1/search?q=${encodeURIComponent(SEARCH_ONE)}`,
      search2: `/api/v1/search?q=${encodeURIComponent(SEARCH_TWO)}`,
    };
    // A column's count, and whether it stopped at the board's cap ("1,000+").
    const counts = (html: string) =>
      [...html.matchAll(/<span data-count(?:="")?( data-capped(?:="")?)?>([\d,]+)\+?</g)].map((m) => ({
        n: Number(m[2]!.replaceAll(',', '')),
        capped: m[1] !== undefined,
      }));
    const seen: Partial<Record<PageName, Answer>> = { board };
    for (const page of PAGES) {
      const a = seen[page] ?? (await asAgent(paths[page]));
      expectStatus(a, 200, `GET ${paths[page]}`);
      const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      report.pages[page] = { path: paths[page], bytes: Buffer.byteLength(text) };
      if (page === 'board' || page === 'mine') {
        const columns = counts(text);
        const shown = columns.reduce((x, y) => x + y.n, 0);
        const capped = columns.filter((c) => c.capped).length;
        const expected = page === 'board' ? all : mineOpen;
        // Capped columns say "1,000+": together the columns then show less than the API counts, never more.
        if (capped ? shown >= expected : shown !== expected)
          report.notes.push(
            `${LABELS[page]} (${paths[page]}): its columns count ${fmt.int(shown)} inquiries, the API ${fmt.int(expected)}.`,
          );
        else if (capped)
          report.notes.push(
            `${LABELS[page]} (${paths[page]}): ${capped} of its ${columns.length} columns hold more than they count ` +
              `(each stops at 1,000: "1,000+"); the API counts ${fmt.int(expected)} in all.`,
          );
      } else {
        const groups = a.body.data as { resource: string; total: number }[];
        const found = groups.map((g) => `${g.resource} ${fmt.int(g.total)}`).join(', ');
        report.notes.push(`${LABELS[page]} (\`${decodeURIComponent(paths[page].split('q=')[1]!)}\`) finds ${found}.`);
      }
    }
    log(`${dialect}: "My open inquiries" is ${paths.mine}`);

    const job = (page: PageName, connections: number, seconds: number): LoadJob => ({
      url: app!.url,
      path: paths[page],
      headers: { cookie },
      connections,
      duration: seconds,
    });
    const note = (r: LoadResult, what: string) => {
      if (!(r.non2xx || r.errors || r.timeouts)) return;
      const said = app!
        .output()
        .trim()
        .split('\n')
        .slice(-3)
        .map((l) => l.slice(0, 300))
        .join(' / ');
      report.notes.push(
        `${what}: ${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodes)}), ${r.errors} errors, ` +
          `${r.timeouts} timeouts${said ? `; the server's last words: ${said}` : ''}`,
      );
    };
    const warm = Math.max(0.5, Math.min(3, duration / 3));
    for (const page of PAGES) await load.run(job(page, 10, warm));
    log(`${dialect}: warmed up; ${duration} s per measurement`);
    for (const page of PAGES) {
      const m = report.pages[page]!;
      m.ten = await load.run(job(page, 10, duration));
      await sleep(300);
      const reading = await cpuReading(place, app.pid);
      m.one = await load.run(job(page, 1, duration));
      const spent = await reading.since();
      m.cpu = { app: spent.app / m.one.ok, db: spent.db / m.one.ok };
      await sleep(300);
      note(m.ten, `${LABELS[page]} (10 connections)`);
      note(m.one, `${LABELS[page]} (1 connection)`);
      log(
        `${dialect}: ${LABELS[page].padEnd(26)} ${fmt.rps(m.ten.rps).padStart(6)} req/s; ` +
          `p50 ${fmt.ms(m.one.p50)} ms, p99 ${fmt.ms(m.one.p99)} ms (${fmt.int(m.bytes)} bytes); ` +
          `CPU per request ${cpuText(dialect, m.cpu)}`,
      );
    }

    // 5. Bulk updates of the stage: one call, then the web page's parts, each on inquiries not yet in it.
    const to = open[1] ?? stages.find((s) => s.id !== stages[0]!.id) ?? stages[0]!;
    const size = Math.min(
      TARGET.bulkRecords,
      Math.floor((await total(app, token, `filter[stage_id][ne]=${to.id}`)) / 2),
    );
    const candidates = (
      await readRows<{ id: unknown }>(
        place,
        `select id from inquiries where stage_id <> ${Number(to.id)} order by id limit ${2 * size}`,
      )
    ).map((r) => Number(r.id));
    const entries = () =>
      readCount(place, `select count(*) as n from change_log where resource = 'inquiries' and action = 'updated'`);
    for (const [how, ids, part] of [
      ['one call', candidates.slice(0, size), size],
      ['the web page’s parts', candidates.slice(size, 2 * size), webPart(size)],
    ] as const) {
      const inStage = await total(app, token, `filter[stage_id]=${to.id}`);
      const entriesBefore = await entries();
      let updated = 0;
      let failed = 0;
      let calls = 0;
      const reading = await cpuReading(place, app.pid);
      const began = performance.now();
      for (let at = 0; at < ids.length; at += part) {
        const a = await request('POST', `${app.url}/api/v1/inquiries/bulk`, {
          token,
          json: { ids: ids.slice(at, at + part), action: 'update', changes: { stage_id: to.id } },
        });
        calls++;
        expectStatus(a, 200, `POST /api/v1/inquiries/bulk (${fmt.int(Math.min(part, ids.length - at))} ids)`);
        updated += Number(a.body.updated);
        failed += (a.body.failed as unknown[]).length;
      }
      const seconds = (performance.now() - began) / 1000;
      const cpu = await reading.since();
      const m: BulkMeasure = {
        how,
        records: ids.length,
        calls,
        seconds,
        updated,
        failed,
        entries: (await entries()) - entriesBefore,
        moved: (await total(app, token, `filter[stage_id]=${to.id}`)) - inStage,
        cpu,
      };
      report.bulk.push(m);
      log(
        `${dialect}: bulk update of ${fmt.int(m.records)} inquiries to ${to.name}, ${how} (${calls} call(s)): ` +
          `${fmt.s(seconds)} (CPU ${cpuText(dialect, cpu, 's')}); updated ${fmt.int(updated)}, failed ${failed}, ` +
          `${fmt.int(m.entries)} log entries, ` +
          `${fmt.int(m.moved)} moved`,
      );
      if (m.updated !== m.records || m.failed || m.entries !== m.records || m.moved !== m.records)
        report.notes.push(
          `Bulk update, ${how}: of ${fmt.int(m.records)} inquiries, ${fmt.int(m.updated)} updated, ${m.failed} failed, ` +
            `${fmt.int(m.entries)} change-log entries written, ${fmt.int(m.moved)} now in ${to.name} that were not.`,
        );
    }
    report.notes.push(
      `Bulk updates: \`{ids: [...], action: 'update', changes: {stage_id: ${to.id}}}\` (to ${to.name}) as an admin ` +
        `with a token, on inquiries in other stages; "the web page’s parts": ${fmt.int(webPart(size))} ids a call, one ` +
        'call after the other, as public/bulk.js sends them (to the web route, which runs the same bulkRecords).',
    );
    report.rss.after = rssMb(app.pid);
    return report;
  } catch (error) {
    report.failed = true;
    report.notes.push(`**The run failed:** ${(error as Error).message}`);
    log(`${dialect}: FAILED: ${(error as Error).message}`);
    return report;
  } finally {
    report.codeAfter = codeState();
    load.close();
    await app?.stop();
    if (argv.keep)
      log(`${dialect}: kept the database: ${place.url ?? path.join(place.env.DATA_DIR!, 'leadbook.sqlite')}`);
    else await place.drop().catch((e: Error) => log(`cleanup: ${e.message}`));
  }
}

// ------------------------------------------------------------------ markdown

function section(r: Report): string {
  const name = r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const atFull = contacts === FULL.contacts && inquiries === FULL.inquiries;
  const lines = [
    `## Pipeline: board, search and bulk update (${name})`,
    '',
    `- Date: ${utcMinute(r.started)}${r.failed ? ' — **the run failed, see the notes**' : ''}`,
    `- Machine: ${machine()}; load average at the start ${r.loadAverage.map((n) => n.toFixed(2)).join(', ')} (the machine is shared)`,
    `- Node ${process.version}${r.dialect === 'postgres' ? ', PostgreSQL on 127.0.0.1' : ', better-sqlite3'}`,
    `- Code: ${describeCode(r.code)}`,
    `- Rows: ${fmt.int(contacts)} contacts and ${fmt.int(inquiries)} inquiries (\`leadbook seed --pipeline\`, seed ${SEED})`,
    `- Seed: ${r.seed ? `${fmt.int(r.seed.rows)} rows in ${fmt.s(r.seed.seconds)}, ${fmt.rps(r.seed.rate)} rows/s` : '–'}`,
    `- Signed in: ${r.who ?? '–'}, with a session cookie`,
    `- Command: \`${command}\` (${duration} s per measurement; throughput at 10 connections, p50 and p99 at 1)`,
    '',
  ];
  const cpuWhose = r.dialect === 'sqlite' ? 'app, with SQLite in it' : 'app + PostgreSQL';
  const measured = PAGES.filter((p) => r.pages[p]?.one);
  if (measured.length)
    lines.push(
      table(
        ['request', 'path', 'req/s', 'p50 ms', 'p99 ms', `CPU per request (${cpuWhose})`, 'answer'],
        measured.map((p) => {
          const m = r.pages[p]!;
          return [
            LABELS[p],
            `\`GET ${m.path}\``,
            fmt.rps(m.ten?.rps),
            fmt.ms(m.one?.p50),
            fmt.ms(m.one?.p99),
            cpuText(r.dialect, m.cpu),
            `${fmt.int(Math.round(m.bytes / 1024))} KiB`,
          ];
        }),
      ),
      '',
    );
  if (r.bulk.length)
    lines.push(
      table(
        [
          'bulk update of the stage',
          'inquiries',
          'calls',
          'wall clock',
          'per record',
          `CPU (${cpuWhose})`,
          'updated / failed / logged',
        ],
        r.bulk.map((b) => [
          b.how,
          fmt.int(b.records),
          String(b.calls),
          fmt.s(b.seconds),
          `${fmt.ms((1000 * b.seconds) / b.records)} ms`,
          cpuText(r.dialect, b.cpu, 's'),
          `${fmt.int(b.updated)} / ${b.failed} / ${fmt.int(b.entries)}`,
        ]),
      ),
      '',
    );
  lines.push(
    `CPU: user + system time of the app's process${r.dialect === 'postgres' ? " and of PostgreSQL's processes serving the database" : ''} ` +
      'while the requests ran at 1 connection, per request (less disturbed by a busy machine than the time: on a quiet ' +
      'machine a request at 1 connection takes about its CPU). App RSS: ' +
      `${fmt.mb(r.rss.idle)} after start, ${fmt.mb(r.rss.after)} at the end.`,
    '',
  );
  const verdict = (ok: boolean | undefined) => (ok === undefined || r.failed ? 'n/a' : ok ? 'pass' : '**FAIL**');
  const targets = PAGES.map((p) => {
    const m = r.pages[p]?.one;
    return [
      `${LABELS[p]}: p50 ≤ ${p50Target(p)} ms`,
      m ? `${fmt.ms(m.p50)} ms` : '–',
      verdict(m && Number.isFinite(m.p50) ? m.p50 <= p50Target(p) : undefined),
    ];
  });
  for (const b of r.bulk)
    targets.push([
      `bulk update of ${fmt.int(TARGET.bulkRecords)} inquiries ≤ ${TARGET.bulkSeconds} s (${b.how})`,
      `${fmt.s(b.seconds)} for ${fmt.int(b.records)}`,
      verdict(b.records === TARGET.bulkRecords ? b.seconds <= TARGET.bulkSeconds : undefined),
    ]);
  lines.push(
    `### Targets (pipeline, ${name}${atFull ? '' : `; set for ${fmt.int(FULL.contacts)} contacts and ${fmt.int(FULL.inquiries)} inquiries, measured at ${fmt.int(contacts)} and ${fmt.int(inquiries)}`})`,
    '',
    table(['target', 'measured', 'result'], targets),
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
log(
  `bench:pipeline: ${dialects.join(' and ')}, ${fmt.int(contacts)} contacts and ${fmt.int(inquiries)} inquiries, ` +
    `${duration} s per measurement`,
);
let failed = false;
for (const dialect of dialects) {
  const report = await benchDatabase(dialect);
  const markdown = section(report);
  writeSection(`pipeline:${dialect}`, markdown);
  failed ||= report.failed;
  console.log(`\n${markdown}`);
  log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.failed ? ' (FAILED)' : ''}`);
}
stopAll();
log(`bench:pipeline: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
