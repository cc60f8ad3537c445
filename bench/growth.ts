// How cost grows with the data (issue 18, item 6): one database per kind, grown from 10,000 contacts to 100,000 and
// 1,000,000 (and 10,000,000 with --huge) by `leadbook seed`, and at each size the same operations measured on the
// app: get by id, page 1, a cursor page 90% down, an equality filter, one- and two-word search and create (service
// time at one connection), and the import of the same 10,000-row CSV file. The section gives each operation's cost
// at every size and its ratio between the last two sizes, against the goals (get, page 1, cursor page and
// filter ≤ 1.5 ×; search ≤ 4 ×).
//
//   npm run bench:growth [-- --db sqlite|postgres|both] [--huge] [--sizes 10000,100000] [--duration S]
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialect } from '../src/db/dialect.ts';
import type { LoadJob } from './load.ts';
import {
  cleanUpOnSignal,
  createAccounts,
  DATA_ROOT,
  dataParams,
  freshPlace,
  log,
  type Place,
  postJson,
  seedPlace,
  readCount,
} from './places.ts';
import { appServer, LoadClient, leadbook, type Server, stopAll } from './processes.ts';
import {
  benchCommand,
  busyNote,
  codeState,
  DATABASE_NAMES,
  describeCode,
  dialectsOf,
  fmt,
  machine,
  table,
  utcMinute,
  writeSection,
} from './results.ts';
import { appPath, createBody, type ReadScenario } from './scenarios.ts';

const USAGE = `Usage: npm run bench:growth [-- options]
  --db sqlite|postgres|both              databases to grow (default both)
  --huge                                 grow on to 10,000,000 contacts (SQLite and PostgreSQL seed at 5,000–10,000
                                         rows/s: this adds half an hour or more per database)
  --sizes N,N,…                          the sizes instead (at least 1,000 each, rising)
  --duration S                           seconds per measurement (default 3)
Writes the growth sections of bench/RESULTS.md.`;

const { argv, fail, command } = benchCommand('bench:growth', USAGE, {
  db: { type: 'string', default: 'both' },
  huge: { type: 'boolean', default: false },
  sizes: { type: 'string' },
  duration: { type: 'string', default: '3' },
});
const dialects = dialectsOf(argv.db, fail, ['sqlite', 'postgres']);
const sizes = argv.sizes
  ? argv.sizes.split(',').map(Number)
  : [10_000, 100_000, 1_000_000, ...(argv.huge ? [10_000_000] : [])];
if (sizes.length < 2 || sizes.some((n, i) => !Number.isInteger(n) || n < 1000 || (i > 0 && n <= sizes[i - 1]!)))
  fail('--sizes: at least two rising whole numbers of 1,000 or more');
const duration = Number(argv.duration);
if (!(duration > 0 && duration <= 60)) fail('--duration must be a number of seconds from 0 to 60');
const IMPORT_ROWS = 10_000;
const ADMIN = { email: 'growth@example.com', password: `growth ${randomBytes(9).toString('base64url')}` };

type Operation = ReadScenario | 'get' | 'create' | 'import';
const OPERATIONS: { name: Operation; label: string; goal?: number }[] = [
  { name: 'get', label: 'get by id', goal: 1.5 },
  { name: 'page1', label: 'list page 1 with total', goal: 1.5 },
  { name: 'deep-cursor', label: 'cursor page 90% down', goal: 1.5 },
  { name: 'filter-eq', label: 'filter equality (city)', goal: 1.5 },
  { name: 'search1', label: 'search one word', goal: 4 },
  { name: 'search2', label: 'search two words', goal: 4 },
  { name: 'create', label: 'create' },
  { name: 'import', label: `import of ${fmt.int(IMPORT_ROWS)} rows (the whole command)` },
];

/** Milliseconds: p50 and p99 at one connection; for the import, the time of the command. */
type Cost = { p50: number; p99?: number };

/** A CSV file of IMPORT_ROWS contacts made by the app itself: seeded into a scratch SQLite database, then exported. */
async function importFile(appKey: string): Promise<{ file: string; drop: () => Promise<void> }> {
  const scratch = await freshPlace('sqlite', `leadbook_growth_${process.pid}_csv`, appKey);
  const file = path.join(DATA_ROOT, `leadbook_growth_${process.pid}.csv`);
  const drop = async () => {
    fs.rmSync(file, { force: true });
    await scratch.drop();
  };
  await seedPlace(scratch, { contacts: IMPORT_ROWS, inquiries: 0, seed: 99 });
  await createAccounts(scratch, [{ ...ADMIN, name: 'Growth Admin', admin: true }]);
  const exported = await leadbook(['export', 'contacts', file], scratch.env);
  if (exported.code !== 0) throw new Error(`leadbook export failed:\n${exported.stderr}`);
  return { file, drop };
}

const count = (place: Place) => readCount(place, 'select count(*) as n from contacts');

async function growDatabase(dialect: Dialect, csv: string, appKey: string): Promise<string> {
  const load = new LoadClient();
  const place = await freshPlace(dialect, `leadbook_growth_${process.pid}_${dialect}`, appKey);
  const costs = new Map<number, Map<Operation, Cost>>();
  const seeding: string[] = [];
  const loadAverage = os.loadavg();
  const code = codeState();
  let app: Server | undefined;
  try {
    await createAccounts(place, [{ ...ADMIN, name: 'Growth Admin', admin: true }]);
    for (const [i, size] of sizes.entries()) {
      const have = await count(place);
      if (size > have) {
        log(`${dialect}: growing from ${fmt.int(have)} to ${fmt.int(size)} contacts`);
        const seeded = await seedPlace(place, { contacts: size - have, inquiries: 0, seed: i + 1 });
        seeding.push(`${fmt.int(have)} → ${fmt.int(size)}: ${fmt.int(seeded.rate)} rows/s`);
      }
      app = await appServer(place.env);
      const issued = await postJson(`${app.url}/api/v1/auth/token`, { ...ADMIN, device_name: 'growth' });
      if (issued.status !== 201) throw new Error(`POST /api/v1/auth/token answered ${issued.status}`);
      const token = issued.body.token as string;
      const p = await dataParams(app.url, token);
      const at = new Map<Operation, Cost>();
      const base = { url: app.url, connections: 1, idMin: p.idMin, idMax: p.idMax };
      const headers = { authorization: `Bearer ${token}` };
      for (const { name } of OPERATIONS) {
        if (name === 'import') continue;
        const job: LoadJob =
          name === 'get'
            ? { ...base, headers, duration, path: '/api/v1/contacts/{id}' }
            : name === 'create'
              ? {
                  ...base,
                  headers,
                  duration,
                  method: 'POST',
                  path: '/api/v1/contacts',
                  body: JSON.stringify(createBody('{n}')),
                }
              : { ...base, headers, duration, path: appPath(name, p) };
        await load.run({ ...job, duration: Math.min(1, duration) }); // warm-up
        const r = await load.run(job);
        if (r.non2xx || r.errors || r.ok === 0)
          throw new Error(`${name} at ${fmt.int(size)}: ${r.ok} answers, ${JSON.stringify(r.statusCodes)}`);
        at.set(name, { p50: r.p50, p99: r.p99 });
      }
      await app.stop();
      app = undefined;
      const before = await count(place);
      const imported = await leadbook(['import', 'contacts', csv], place.env);
      const added = (await count(place)) - before;
      if (imported.code !== 0 || added !== IMPORT_ROWS)
        throw new Error(
          `the import at ${fmt.int(size)} added ${added} rows (exit ${imported.code}): ${imported.stderr}`,
        );
      at.set('import', { p50: imported.seconds * 1000 });
      costs.set(size, at);
      log(
        `${dialect} at ${fmt.int(size)}: ${OPERATIONS.map(({ name }) => `${name} ${fmt.ms(at.get(name)!.p50)}`).join(', ')} ms`,
      );
    }
  } finally {
    await app?.stop();
    load.close();
    await place.drop();
  }

  const [previous, last] = sizes.slice(-2) as [number, number];
  const rows = OPERATIONS.map(({ name, label, goal }) => {
    const ratio = costs.get(last)!.get(name)!.p50 / costs.get(previous)!.get(name)!.p50;
    return [
      label,
      ...sizes.map((size) => {
        const c = costs.get(size)!.get(name)!;
        return c.p99 === undefined ? fmt.ms(c.p50) : `${fmt.ms(c.p50)} / ${fmt.ms(c.p99)}`;
      }),
      `${fmt.ratio(ratio)}×`,
      goal === undefined ? '–' : `≤ ${goal}×: ${ratio <= goal ? 'pass' : '**FAIL**'}`,
    ];
  });
  const busy = busyNote(loadAverage);
  return [
    `## How cost grows: ${DATABASE_NAMES[dialect]}`,
    '',
    `- Date: ${utcMinute(new Date())}`,
    `- Machine: ${machine()}; load average at the start ${loadAverage.map((n) => n.toFixed(2)).join(', ')}`,
    `- Code: ${describeCode(code)}`,
    `- Command: \`${command}\` (${duration} s per measurement, one connection; the import is \`leadbook import\` of the same ${fmt.int(IMPORT_ROWS)}-row file, process start included)`,
    `- Seed rates while growing: ${seeding.join('; ')}`,
    ...(busy ? [`- ${busy}`] : []),
    '',
    table(
      ['operation (ms: p50 / p99)', ...sizes.map((s) => fmt.int(s)), `${fmt.int(previous)} → ${fmt.int(last)}`, 'goal'],
      rows,
    ),
    '',
  ].join('\n');
}

cleanUpOnSignal();
const appKey = randomBytes(32).toString('base64');
log(`bench:growth: ${dialects.map((d) => DATABASE_NAMES[d]).join(', ')} at ${sizes.map(fmt.int).join(', ')} contacts`);
const csv = await importFile(appKey);
let failed = false;
try {
  for (const dialect of dialects) {
    try {
      writeSection(`growth:${dialect}`, await growDatabase(dialect, csv.file, appKey));
      log(`${dialect}: written to bench/RESULTS.md`);
    } catch (error) {
      failed = true;
      log(`${dialect}: FAILED: ${(error as Error).message}`);
    }
  }
} finally {
  await csv.drop();
  stopAll();
}
process.exit(failed ? 1 : 0);
