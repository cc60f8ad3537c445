// npm run bench:change-log [-- --db sqlite|postgres|both] [--writes N] [--rows N] [--parts P] [--rounds R]
//
// What the change log costs: the same work with the log on (the default) and
// off (`database.logChanges = false`, the switch kept for this bench only),
// the record operations called in this process, one call awaited after the
// other as a single API client would:
//   create: N createRecord calls (a contact each, bench/scenarios.ts createBody)
//   patch:  N updateRecord calls setting `city`, one on each record just created
//   import: importCsv of M contacts (src/cli/fake-data.ts, seed 1), as
//           `leadbook import` runs it, the same rows for every import, fed as
//           P files of M / P rows each (P = 1: one file)
// Each side of each measurement gets a fresh database (a temporary SQLite
// directory, or a new PostgreSQL database), migrated, with one admin, who acts.
// One unmeasured warm-up first (JIT, statement caches), then R rounds,
// alternating which side goes first. The machine is shared and noisy, so the
// targets are judged on the ratio of the two sides within a round (median over
// the rounds), never on numbers from different runs. Within a round the two
// sides take turns: of 100 calls for creates and patches, of one file for the
// import (10 files of 10,000 rows by default: each importCsv call then runs the
// same five transactions of 2,000 rows that a whole file's import runs in a
// row), so that a burst of noise of a few seconds hits both sides.
// Writes the database's change-log section of bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { sql } from 'kysely';
import { createUser } from '../src/accounts/register.ts';
import { CITIES, ContactFaker } from '../src/cli/fake-data.ts';
import { type Database, openDatabase } from '../src/db/connection.ts';
import type { Dialect } from '../src/db/dialect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { importCsv } from '../src/records/import.ts';
import { type Context, createRecord, updateRecord } from '../src/records/operations.ts';
import { contact } from '../src/resources/index.ts';
import { PG_ADMIN, pgAdmin } from './places.ts';
import { cpuTicks } from './processes.ts';
import {
  benchCommand,
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
import { createBody } from './scenarios.ts';

const USAGE = `npm run bench:change-log -- [options]
  --db sqlite|postgres|both   databases to measure (default both)
  --writes N                  creates, then as many patches, per side and round (default 4,000)
  --rows N                    contacts imported per side and round (default 100,000)
  --parts P                   files the rows are imported from, the sides taking turns per file (default 10)
  --rounds R                  measured rounds (default 3), after one warm-up
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).`;

const { argv, fail, command } = benchCommand('bench:change-log', USAGE, {
  db: { type: 'string', default: 'both' },
  writes: { type: 'string', default: '4000' },
  rows: { type: 'string', default: '100000' },
  parts: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '3' },
});

const dialects = dialectsOf(argv.db, fail);
const writes = Number(argv.writes);
if (!Number.isInteger(writes) || writes < 10) fail('--writes must be a whole number of at least 10');
const rows = Number(argv.rows);
if (!Number.isInteger(rows) || rows < 100) fail('--rows must be a whole number of at least 100');
const parts = Number(argv.parts);
if (!Number.isInteger(parts) || parts < 1 || parts > rows) fail('--parts must be a whole number from 1 to --rows');
const rounds = Number(argv.rounds);
if (!Number.isInteger(rounds) || rounds < 1) fail('--rounds must be a whole number of at least 1');
/** The warm-up's share of the work: enough for the JIT and the statement caches, small beside a round. */
const WARM_WRITES = Math.min(writes, 500);
const WARM_ROWS = Math.min(rows, 4000);
const SEED = 1;

/** The issue's targets: create and patch with the log ≥ 0.85 × without; the import at most 15% slower. */
const TARGET = { writeRatio: 0.85, importSlowdown: 0.15 } as const;

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** An import's time: to the hundredth, since the two sides differ by a few percent. */
const seconds = (n: number) => `${n.toFixed(2)} s`;
/** A ratio held against its target: to the thousandth, so that 0.849 is not shown as a failing 0.85. */
const ratio3 = (n: number) => `${n.toFixed(3)}×`;
const percent = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n * 100).toFixed(1)}%`;

// ------------------------------------------------------------------ databases

/** The two sides of every measurement. */
type Side = 'on' | 'off';
const SIDE_LABEL: Record<Side, string> = { on: 'log on', off: 'log off' };

/** Databases not yet dropped, for a Ctrl-C in the middle. */
const undropped = new Set<() => Promise<void>>();
let made = 0;

interface Fresh {
  database: Database;
  /** The admin, through the API, as the brief of every measurement has it. */
  ctx: Context;
  /** Closes the database and removes it. */
  drop(): Promise<void>;
}

/**
 * A fresh database, as the tests make theirs (test/helpers/database.ts): a temporary SQLite directory, or a new
 * PostgreSQL database; migrated, with one admin; its change log off for the side that measures without it.
 */
async function freshDatabase(dialect: Dialect, side: Side): Promise<Fresh> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-bench-change-log-'));
  let name: string | undefined;
  let url: string | undefined;
  if (dialect === 'postgres') {
    name = `leadbook_bench_${process.pid}_change_log_${++made}`;
    await pgAdmin(`create database ${name}`);
    const u = new URL(PG_ADMIN);
    u.pathname = `/${name}`;
    url = u.toString();
  }
  const database = openDatabase({ dataDir, databaseUrl: url });
  const drop = async () => {
    undropped.delete(drop);
    await database.close().catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (name) await pgAdmin(`drop database if exists ${name} with (force)`);
  };
  undropped.add(drop);
  try {
    if (side === 'off') database.logChanges = false;
    await migrateToLatest(database.db);
    const password = `bench admin ${randomBytes(9).toString('base64url')}`;
    const admin = await createUser(
      database,
      { name: 'Bench Admin', email: 'bench-admin@example.com', password },
      'admin',
    );
    return { database, ctx: { database, actor: { id: BigInt(admin.id), role: 'admin' }, via: 'api' }, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** The change-log entries about contacts: what the log on side must have written, and the log off side none of. */
async function contactEntries(database: Database): Promise<number> {
  const { rows } = await sql<{ n: string | number | bigint }>`
    select count(*) as n from change_log where resource = 'contacts'`.execute(database.db);
  return Number(rows[0]!.n);
}

async function countContacts(database: Database): Promise<number> {
  const { rows } = await sql<{ n: string | number | bigint }>`select count(*) as n from contacts`.execute(database.db);
  return Number(rows[0]!.n);
}

// ------------------------------------------------------------------ the work

/** The columns of the file: the contact fields an import sets (created_by left to the importer). */
const CSV_COLUMNS = contact.writable.filter((f) => !f.defaultActor).map((f) => f.name);

/** Rows to import: CSV files (a header row, then contacts), which together hold every row once. */
interface CsvFiles {
  files: string[];
  rows: number;
  /** Of the rows as one file would hold them (one header row). */
  bytes: number;
}

/** Writes `count` fake contacts, deterministic for the seed, as `parts` CSV files of (about) equal rows in `dir`. */
function writeCsv(dir: string, name: string, count: number, parts: number): CsvFiles {
  // created_by is not a column, so the agents' ids the faker picks from are never used.
  const faker = new ContactFaker(SEED, [1]);
  const header = stringify([[...CSV_COLUMNS]], { record_delimiter: 'windows' });
  const out: CsvFiles = { files: [], rows: count, bytes: Buffer.byteLength(header) };
  for (let part = 0, done = 0; part < parts; part++) {
    const file = path.join(dir, `${name}-${part + 1}.csv`);
    const fd = fs.openSync(file, 'w');
    try {
      fs.writeSync(fd, header);
      for (const end = Math.round((count * (part + 1)) / parts); done < end; ) {
        const chunk: string[][] = [];
        for (; chunk.length < 5000 && done < end; done++) {
          const row = faker.next();
          chunk.push(CSV_COLUMNS.map((c) => (row[c] === null ? '' : String(row[c]))));
        }
        const text = stringify(chunk, { record_delimiter: 'windows' });
        fs.writeSync(fd, text);
        out.bytes += Buffer.byteLength(text);
      }
    } finally {
      fs.closeSync(fd);
    }
    out.files.push(file);
  }
  return out;
}

/** Cities a patch sets: never the one every created contact has (a patch to the same value writes nothing). */
const PATCH_CITIES = CITIES.map((c) => c.city).filter((c) => c !== createBody(0).city);

/** Calls per turn of a side in the writes: a few tenths of a second, so that a burst of noise hits both sides. */
const TURN = 100;

/** Both sides, the first one first. */
const order = (first: Side): Side[] => (first === 'on' ? ['on', 'off'] : ['off', 'on']);
const other = (side: Side): Side => (side === 'on' ? 'off' : 'on');

/**
 * Calls `work(side, i)` for i from 0 to n − 1 on both sides, in turns of TURN calls, the side that goes first
 * alternating from turn to turn (on off, off on, …); answers each side's seconds spent in its own calls.
 */
async function interleaved(
  n: number,
  first: Side,
  work: (side: Side, i: number) => Promise<void>,
): Promise<Record<Side, number>> {
  const spent = { on: 0, off: 0 };
  for (let start = 0, turn = 0; start < n; start += TURN, turn++) {
    for (const side of order(turn % 2 ? other(first) : first)) {
      const began = performance.now();
      for (let i = start; i < Math.min(n, start + TURN); i++) await work(side, i);
      spent[side] += (performance.now() - began) / 1000;
    }
  }
  return spent;
}

interface Writes {
  createRps: number;
  patchRps: number;
}

/**
 * `n` creates on a fresh database of each side, then a patch of each record created, one call awaited after the
 * other, the two sides taking turns; records per second of each.
 */
async function measureWrites(dialect: Dialect, n: number, first: Side): Promise<Record<Side, Writes>> {
  const fresh: Partial<Record<Side, Fresh>> = {};
  try {
    for (const side of order(first)) fresh[side] = await freshDatabase(dialect, side);
    const { on, off } = fresh as Record<Side, Fresh>;
    const ctx = { on: on.ctx, off: off.ctx };
    const ids: Record<Side, string[]> = { on: [], off: [] };
    const creates = await interleaved(n, first, async (side, i) => {
      ids[side][i] = String((await createRecord(ctx[side], contact, createBody(i))).record.id);
    });
    const patches = await interleaved(n, first, async (side, i) => {
      await updateRecord(ctx[side], contact, ids[side][i]!, { city: PATCH_CITIES[i % PATCH_CITIES.length] });
    });
    // The switch did what it says: an entry per create and per patch with the log, none without.
    for (const side of ['on', 'off'] as const) {
      const entries = await contactEntries(fresh[side]!.database);
      const expected = side === 'on' ? 2 * n : 0;
      if (entries !== expected)
        throw new Error(`${SIDE_LABEL[side]}: ${entries} entries after the writes, not ${expected}`);
    }
    const rates = (side: Side) => ({ createRps: n / creates[side], patchRps: n / patches[side] });
    return { on: rates('on'), off: rates('off') };
  } finally {
    for (const f of Object.values(fresh)) await f.drop();
  }
}

/** The CPU ticks of the PostgreSQL server processes serving this database, by pid (none on SQLite). */
async function backendTicks(database: Database): Promise<Map<number, number>> {
  const ticks = new Map<number, number>();
  if (database.dialect !== 'postgres') return ticks;
  const { rows } = await sql<{ pid: number }>`
    select pid from pg_stat_activity where datname = current_database()`.execute(database.db);
  for (const { pid } of rows) {
    const t = cpuTicks(pid);
    if (t !== null) ticks.set(pid, t);
  }
  return ticks;
}

interface Imported {
  seconds: number;
  /**
   * CPU seconds of this process and, on PostgreSQL, of the server processes serving the database: less disturbed by
   * a busy machine than the time, and on SQLite all of the database's work (better-sqlite3 runs in this thread).
   */
  cpuSeconds: number;
}

/** One importCsv of one file into the database of one side; its time and CPU. */
async function importFile(fresh: Fresh, file: string): Promise<Imported & { created: number }> {
  const backendsBefore = await backendTicks(fresh.database);
  const cpuBefore = process.cpuUsage();
  const began = performance.now();
  const report = await importCsv(fresh.ctx, contact, fs.createReadStream(file), {
    maxBytes: Number.POSITIVE_INFINITY,
  });
  const seconds = (performance.now() - began) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  let backendSeconds = 0;
  for (const [pid, ticks] of await backendTicks(fresh.database))
    backendSeconds += (ticks - (backendsBefore.get(pid) ?? 0)) / 100;
  const failures = report.failed.length + (report.failed_truncated ?? 0);
  if (failures)
    throw new Error(`${failures} rows of ${file} failed to import: ${JSON.stringify(report.failed.slice(0, 3))}`);
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 + backendSeconds, created: report.created };
}

/**
 * Imports every file into an empty database of each side, the two sides taking turns file by file, the side that
 * goes first alternating; each side's time and CPU summed over its importCsv calls.
 */
async function measureImports(dialect: Dialect, csv: CsvFiles, first: Side): Promise<Record<Side, Imported>> {
  const fresh: Partial<Record<Side, Fresh>> = {};
  try {
    for (const side of order(first)) fresh[side] = await freshDatabase(dialect, side);
    const spent = { on: { seconds: 0, cpuSeconds: 0 }, off: { seconds: 0, cpuSeconds: 0 } };
    const created = { on: 0, off: 0 };
    for (const [i, file] of csv.files.entries()) {
      for (const side of order(i % 2 ? other(first) : first)) {
        const m = await importFile(fresh[side]!, file);
        spent[side].seconds += m.seconds;
        spent[side].cpuSeconds += m.cpuSeconds;
        created[side] += m.created;
      }
    }
    // Every row imported, with an entry each with the log and none without.
    for (const side of ['on', 'off'] as const) {
      const { database } = fresh[side]!;
      const stored = await countContacts(database);
      const entries = await contactEntries(database);
      const expected = side === 'on' ? csv.rows : 0;
      if (created[side] !== csv.rows || stored !== csv.rows || entries !== expected)
        throw new Error(
          `${SIDE_LABEL[side]}: ${created[side]} contacts imported of ${csv.rows}, ` +
            `${stored} stored, ${entries} entries`,
        );
    }
    return spent;
  } finally {
    for (const f of Object.values(fresh)) await f.drop();
  }
}

// ------------------------------------------------------------------ one database

interface Round {
  /** Which side went first in this round (and in the first turn of its writes). */
  first: Side;
  writes: Record<Side, Writes>;
  imports: Record<Side, Imported>;
}

interface Report {
  dialect: Dialect;
  started: Date;
  loadAverage: number[];
  loadAverageAfter?: number[];
  csvBytes: number;
  /** The code at the start of the run and at its end. */
  code: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  rounds: Round[];
  seconds?: number;
  error?: string;
}

async function benchDatabase(dialect: Dialect, csv: { full: CsvFiles; warm: CsvFiles }) {
  const report: Report = {
    dialect,
    started: new Date(),
    loadAverage: os.loadavg(),
    csvBytes: csv.full.bytes,
    code: codeState(),
    rounds: [],
  };
  const began = performance.now();
  try {
    log(`${dialect}: warm-up (${fmt.int(WARM_WRITES)} writes and a ${fmt.int(WARM_ROWS)}-row import each side)`);
    await measureWrites(dialect, WARM_WRITES, 'on');
    await measureImports(dialect, csv.warm, 'on');
    for (let r = 1; r <= rounds; r++) {
      const first: Side = r % 2 ? 'on' : 'off';
      const w = await measureWrites(dialect, writes, first);
      for (const side of order(first))
        log(
          `${dialect}: round ${r} ${SIDE_LABEL[side].padEnd(7)} ` +
            `create ${fmt.rps(w[side].createRps).padStart(6)}/s, patch ${fmt.rps(w[side].patchRps).padStart(6)}/s`,
        );
      const imports = await measureImports(dialect, csv.full, first);
      for (const side of order(first))
        log(
          `${dialect}: round ${r} ${SIDE_LABEL[side].padEnd(7)} import of ${fmt.int(rows)} contacts in ` +
            `${seconds(imports[side].seconds)} (CPU ${seconds(imports[side].cpuSeconds)})`,
        );
      report.rounds.push({ first, writes: w, imports });
    }
  } catch (error) {
    report.error = (error as Error).message;
    log(`${dialect}: FAILED: ${report.error}`);
  }
  report.seconds = (performance.now() - began) / 1000;
  report.loadAverageAfter = os.loadavg();
  report.codeAfter = codeState();
  return report;
}

// ------------------------------------------------------------------ the section

/** Per round: log on / log off of create and patch throughput, and the import's slowdown (on / off − 1). */
const ratios = (r: Report) => ({
  create: r.rounds.map((x) => x.writes.on.createRps / x.writes.off.createRps),
  patch: r.rounds.map((x) => x.writes.on.patchRps / x.writes.off.patchRps),
  import: r.rounds.map((x) => x.imports.on.seconds / x.imports.off.seconds - 1),
  importCpu: r.rounds.map((x) => x.imports.on.cpuSeconds / x.imports.off.cpuSeconds - 1),
});

function section(r: Report): string {
  const name = r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const loads = (l: number[]) => l.map((n) => n.toFixed(2)).join(', ');
  const cpuOf = r.dialect === 'sqlite' ? 'this process' : 'this process and its PostgreSQL backends';
  const lines = [
    `## Change log: what it costs (${name})`,
    '',
    `- Date: ${utcMinute(r.started)}${r.error ? ' — **the run failed, see the notes**' : ''}`,
    `- Machine: ${machine()}; load average at the start ${loads(r.loadAverage)}, ` +
      `at the end ${loads(r.loadAverageAfter ?? [])} (the machine is shared)`,
    `- Node ${process.version}, ${r.dialect === 'postgres' ? 'PostgreSQL on 127.0.0.1' : 'better-sqlite3'}; ` +
      'the record operations called in one process, one call awaited after the other (a single client)',
    `- Command: \`${command}\`${r.seconds ? ` (${fmt.s(r.seconds)})` : ''}`,
    `- Code: ${describeCode(r.code)}`,
    '- Log on: the default; log off: `database.logChanges = false`. Each side of each measurement on a fresh ' +
      'database (migrated, one admin, who acts through the API); one unmeasured warm-up, ' +
      `then ${rounds} rounds alternating which side goes first; a ratio compares the two sides of one round`,
    `- Create and patch, per side and round: ${fmt.int(writes)} \`createRecord\` of a contact, then an ` +
      `\`updateRecord\` setting \`city\` on each of them; the two sides take turns of ${TURN} calls ` +
      '(on off, off on, …), each side timed in its own turns',
    `- Import, per side and round: \`importCsv\` of ${fmt.int(rows)} contacts (src/cli/fake-data.ts, seed ${SEED}; ` +
      `${(r.csvBytes / 2 ** 20).toFixed(1)} MiB, the same rows every time) into an empty database, ` +
      (parts === 1
        ? 'as one file, one side after the other; '
        : `as ${parts} files of ${fmt.int(Math.round(rows / parts))} rows, the two sides taking turns file by file, ` +
          'each side timed in its own calls; ') +
      `CPU: of ${cpuOf}`,
    '',
  ];
  const q = ratios(r);
  if (r.rounds.length) {
    const med = (pick: (x: Round) => number) => median(r.rounds.map(pick));
    lines.push(
      table(
        ['measurement', 'log on, median', 'log off, median', 'on / off, each round', 'on / off, median'],
        [
          [
            'create, records/s',
            fmt.rps(med((x) => x.writes.on.createRps)),
            fmt.rps(med((x) => x.writes.off.createRps)),
            q.create.map(fmt.ratio).join(', '),
            fmt.ratio(median(q.create)),
          ],
          [
            'patch, records/s',
            fmt.rps(med((x) => x.writes.on.patchRps)),
            fmt.rps(med((x) => x.writes.off.patchRps)),
            q.patch.map(fmt.ratio).join(', '),
            fmt.ratio(median(q.patch)),
          ],
          [
            `CSV import of ${fmt.int(rows)} contacts: time (slowdown)`,
            seconds(med((x) => x.imports.on.seconds)),
            seconds(med((x) => x.imports.off.seconds)),
            q.import.map(percent).join(', '),
            percent(median(q.import)),
          ],
          [
            `CSV import of ${fmt.int(rows)} contacts: CPU (more)`,
            seconds(med((x) => x.imports.on.cpuSeconds)),
            seconds(med((x) => x.imports.off.cpuSeconds)),
            q.importCpu.map(percent).join(', '),
            percent(median(q.importCpu)),
          ],
        ],
      ),
      '',
      table(
        ['round (first side)', 'create on / off, records/s', 'patch on / off, records/s', 'import on / off (CPU)'],
        r.rounds.map((x, i) => [
          `${i + 1} (${SIDE_LABEL[x.first]})`,
          `${fmt.rps(x.writes.on.createRps)} / ${fmt.rps(x.writes.off.createRps)}`,
          `${fmt.rps(x.writes.on.patchRps)} / ${fmt.rps(x.writes.off.patchRps)}`,
          `${seconds(x.imports.on.seconds)} / ${seconds(x.imports.off.seconds)} ` +
            `(${seconds(x.imports.on.cpuSeconds)} / ${seconds(x.imports.off.cpuSeconds)})`,
        ]),
      ),
      '',
    );
  }
  const complete = r.rounds.length === rounds && !r.error;
  const verdict = (ok: boolean) => (!complete ? 'n/a' : ok ? 'pass' : '**FAIL**');
  const measured = (xs: number[], show: (n: number) => string) => (complete ? show(median(xs)) : '–');
  lines.push(
    `### Targets (change log, ${name})`,
    '',
    table(
      ['target', 'measured (median of the rounds)', 'result'],
      [
        [
          `create with the log ≥ ${TARGET.writeRatio} × its throughput without`,
          measured(q.create, ratio3),
          verdict(median(q.create) >= TARGET.writeRatio),
        ],
        [
          `patch with the log ≥ ${TARGET.writeRatio} × its throughput without`,
          measured(q.patch, ratio3),
          verdict(median(q.patch) >= TARGET.writeRatio),
        ],
        [
          `CSV import of ${fmt.int(rows)} contacts with the log ≤ ${TARGET.importSlowdown * 100}% slower than without`,
          measured(q.import, percent),
          verdict(median(q.import) <= TARGET.importSlowdown),
        ],
      ],
    ),
    '',
  );
  const notes: string[] = [];
  if (r.codeAfter && r.codeAfter.digest + r.codeAfter.head !== r.code.digest + r.code.head)
    notes.push(
      `**The code changed during the run** (src/ is edited by others): at its end, ${describeCode(r.codeAfter)}. ` +
        'The migrations are read for every fresh database: run again for numbers of one version.',
    );
  if (r.error) notes.push(`**The run failed** after ${r.rounds.length} of ${rounds} rounds: ${r.error}`);
  if (r.loadAverage[0]! > os.cpus().length + 0.5)
    notes.push(
      `The machine was busy with other work (load average ${r.loadAverage[0]!.toFixed(1)} on ` +
        `${os.cpus().length} cores) when this run started: each side's numbers are noisy; their ratios less so.`,
    );
  notes.push(
    'Checked on every side: with the log, one entry per create, per patch and per imported row; without it, ' +
      'none; every row of the file imported.',
  );
  lines.push('### Notes', '', ...notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

// ------------------------------------------------------------------ main

const onSignal = () => {
  void Promise.allSettled([...undropped].map((drop) => drop())).finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const started = performance.now();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-bench-change-log-csv-'));
let failed = false;
try {
  const csv = { full: writeCsv(scratch, 'contacts', rows, parts), warm: writeCsv(scratch, 'warm-up', WARM_ROWS, 2) };
  log(
    `bench:change-log: ${dialects.join(' and ')}; ${fmt.int(writes)} creates and patches, ` +
      `${fmt.int(rows)} contacts to import in ${parts} file(s) (${(csv.full.bytes / 2 ** 20).toFixed(1)} MiB), ` +
      `${rounds} rounds`,
  );
  for (const dialect of dialects) {
    const report = await benchDatabase(dialect, csv);
    const markdown = section(report);
    writeSection(`change-log:${dialect}`, markdown);
    failed ||= report.error !== undefined;
    console.log(`\n${markdown}`);
    log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.error ? ' (FAILED)' : ''}`);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
  await Promise.allSettled([...undropped].map((drop) => drop()));
}
log(`bench:change-log: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
