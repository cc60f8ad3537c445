// bench/RESULTS.md: one section per database, between markers, so that a run
// on one database replaces its own section and leaves the other's alone; the
// section holds the measurements and the issue's targets with pass or fail.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { Dialect } from '../src/db/dialect.ts';
import type { LoadResult } from './load.ts';
import { LABELS, SCENARIOS, type ScenarioName } from './scenarios.ts';

export const RESULTS_FILE = path.resolve(import.meta.dirname, 'RESULTS.md');
const ROOT_DIR = path.resolve(import.meta.dirname, '..');

/**
 * The sections: one per database, the start-up comparison (bench/startup.ts), the change log's cost on each
 * database (bench/change-log.ts), the pipeline's pages, search and bulk update on each (bench/pipeline.ts), and the
 * public intake's submissions against the signed-in create on each (bench/intake.ts), the import's preview against
 * its parse and validation alone on each (bench/import-preview.ts), and record writes under a hanging webhook
 * receiver on each (bench/webhooks.ts), and how cost grows with the data on each (bench/growth.ts). A section not listed here
 * would be dropped when another is written.
 */
export type Section =
  | Dialect
  | 'startup'
  | `change-log:${Dialect}`
  | `pipeline:${Dialect}`
  | `intake:${Dialect}`
  | `import-preview:${Dialect}`
  | `webhooks:${Dialect}`
  | `growth:${Dialect}`;
const ORDER: Section[] = [
  'sqlite',
  'postgres',
  'mysql',
  'startup',
  'change-log:sqlite',
  'change-log:postgres',
  'pipeline:sqlite',
  'pipeline:postgres',
  'intake:sqlite',
  'intake:postgres',
  'import-preview:sqlite',
  'import-preview:postgres',
  'webhooks:sqlite',
  'webhooks:postgres',
  'growth:sqlite',
  'growth:postgres',
];
const HEADER = `# Bench results

Written by \`npm run bench\` (bench/run.ts); each database's section is replaced
when the bench runs on it again. The floor is a bare Fastify server running the
app's SQL for the same scenario (bench/floor.ts, bench/floor-sql.ts). Throughput
is measured at 10 connections, service time (p50, p99) at 1 connection, each
scenario driven by autocannon from a separate process. The start-up section is
written by \`npm run bench:startup\` (bench/startup.ts), the change log's cost on
each database by \`npm run bench:change-log\` (bench/change-log.ts), the
pipeline's board, search and bulk update by \`npm run bench:pipeline\`
(bench/pipeline.ts), the public intake against the signed-in create by
\`npm run bench:intake\` (bench/intake.ts), the import's preview of a large file
against its parse and validation alone by \`npm run bench:import-preview\`
(bench/import-preview.ts), record writes under a hanging webhook receiver by
\`npm run bench:webhooks\` (bench/webhooks.ts), and how each operation's cost
grows from 10,000 to 1,000,000 contacts (10,000,000 with \`--huge\`) by
\`npm run bench:growth\` (bench/growth.ts).
`;

const start = (d: Section) => `<!-- bench:${d}:start -->`;
const end = (d: Section) => `<!-- bench:${d}:end -->`;

/** Replaces (or adds) the section of one database (or the start-up one). */
export function writeSection(dialect: Section, markdown: string, file = RESULTS_FILE): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const sections = new Map<Section, string>();
  for (const d of ORDER) {
    const i = old.indexOf(start(d));
    const j = old.indexOf(end(d));
    if (i >= 0 && j > i) sections.set(d, old.slice(i, j + end(d).length));
  }
  sections.set(dialect, `${start(dialect)}\n${markdown.trim()}\n${end(dialect)}`);
  const body = ORDER.filter((d) => sections.has(d))
    .map((d) => sections.get(d))
    .join('\n\n');
  fs.writeFileSync(file, `${HEADER}\n${body}\n`);
}

/** When a run started, as the sections say it: `2026-11-22 07:42 UTC`. */
export const utcMinute = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The machine, as the sections describe it: `2 cores, AMD EPYC, 23.5 GB RAM`. */
export function machine(): string {
  const cpus = os.cpus();
  const ram = (os.totalmem() / 2 ** 30).toFixed(1);
  return `${cpus.length} cores, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${ram} GB RAM`;
}

/**
 * The code a run measures: the commit, and the files of src/ that differ from it. Others edit src/ while a bench
 * runs, and the migrations are read again for every fresh database, so a run compares this at its start and end.
 * Read-only git commands (no optional locks: not even the index's stat cache is written).
 */
export function codeState(): { head: string; dirty: string[]; digest: string } {
  const git = (...args: string[]) =>
    execFileSync('git', ['--no-optional-locks', ...args], { cwd: ROOT_DIR, encoding: 'utf8', maxBuffer: 1 << 28 });
  try {
    const head = git('rev-parse', '--short', 'HEAD').trim();
    const changed = git('diff', '--name-only', 'HEAD', '--', 'src').split('\n').filter(Boolean);
    const untracked = git('ls-files', '--others', '--exclude-standard', '--', 'src').split('\n').filter(Boolean);
    const digest = createHash('sha1')
      .update(git('diff', 'HEAD', '--', 'src'))
      .update(untracked.map((f) => fs.readFileSync(path.join(ROOT_DIR, f))).join('\0'))
      .digest('hex');
    return { head, dirty: [...changed, ...untracked], digest };
  } catch {
    return { head: 'unknown (no git)', dirty: [], digest: '' };
  }
}

/** A section's note when the machine was busier than its cores when the run began (it is shared), if it was. */
export function busyNote(loadAverage: readonly number[]): string | undefined {
  const cores = os.cpus().length;
  return loadAverage[0]! > cores + 0.5
    ? `The machine was busy with other work (load average ${loadAverage[0]!.toFixed(1)} on ${cores} cores) when ` +
        'this run started: its numbers are noisy.'
    : undefined;
}

/** A section's note when the code changed while it ran (others edit src/ at the same time), if it did. */
export function codeChangedNote(r: { code: ReturnType<typeof codeState>; codeAfter?: ReturnType<typeof codeState> }) {
  return r.codeAfter && r.codeAfter.digest + r.codeAfter.head !== r.code.digest + r.code.head
    ? `**The code changed during the run** (src/ is edited by others): at its end, ${describeCode(r.codeAfter)}.`
    : undefined;
}

/** The code, as a section says it: the commit, and the files changed since (how many, when they are many). */
export const describeCode = (c: ReturnType<typeof codeState>) =>
  `commit ${c.head}${
    c.dirty.length === 0
      ? ''
      : c.dirty.length <= 8
        ? ` with uncommitted changes to ${c.dirty.join(', ')}`
        : ` with uncommitted changes to ${c.dirty.length} files of src/ (diff ${c.digest.slice(0, 10)})`
  }`;

/**
 * A bench's command line (`npm run <script> -- …`): its options (a boolean also as --no-…) and --help, which prints
 * `usage`; how it refuses a bad value (exit 2, saying why, then the usage); and the command as typed, for the results.
 */
export function benchCommand<const O extends ParseArgsOptionsConfig>(script: string, usage: string, options: O) {
  const { values } = parseArgs({
    allowNegative: true,
    options: { ...options, help: { type: 'boolean', default: false } },
  });
  if ((values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  const fail = (message: string): never => {
    console.error(`${script}: ${message}\n\n${usage}`);
    process.exit(2);
  };
  const typed = process.argv.slice(2);
  return { argv: values, fail, command: `npm run ${script}${typed.length ? ` -- ${typed.join(' ')}` : ''}` };
}

/**
 * The databases `--db` names: one of those the bench measures (`supported`; by default SQLite and PostgreSQL, which
 * every bench measures), `both` (SQLite and PostgreSQL) or `all` (every supported one); anything else fails.
 */
export function dialectsOf(
  db: string | undefined,
  fail: (message: string) => never,
  supported: readonly Dialect[] = ['sqlite', 'postgres'],
): Dialect[] {
  if (db === 'both') return ['sqlite', 'postgres'];
  if (db === 'all') return [...supported];
  if (supported.includes(db as Dialect)) return [db as Dialect];
  return fail(`--db must be ${supported.join(', ')}, both or all, not ${db}`);
}

/** A database's name as the sections say it. */
export const DATABASE_NAMES: Record<Dialect, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB' };

/** A markdown table; numbers already formatted. */
export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** Numbers the way the tables show them. */
export const fmt = {
  rps: (n: number | undefined) =>
    n === undefined || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US'),
  ms: (n: number | undefined) =>
    n === undefined || !Number.isFinite(n)
      ? '–'
      : n < 10
        ? n.toFixed(2)
        : n < 100
          ? n.toFixed(1)
          : Math.round(n).toLocaleString('en-US'),
  ratio: (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2)),
  mb: (n: number | undefined | null) =>
    n === undefined || n === null || !Number.isFinite(n) ? '–' : `${Math.round(n)} MB`,
  s: (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '–' : `${n.toFixed(1)} s`),
  int: (n: number) => n.toLocaleString('en-US'),
};

/** One scenario's four measurements: at 10 connections and at 1, on the app and on the floor. */
export interface Measured {
  app10?: LoadResult;
  floor10?: LoadResult;
  app1?: LoadResult;
  floor1?: LoadResult;
}

/** Everything one database's run measured. */
export interface Report {
  dialect: Dialect;
  started: Date;
  loadAverage: number[];
  seed?: { rows: number; seconds: number; rate: number };
  measured: Partial<Record<ScenarioName, Measured>>;
  storm?: { loginsPerSecond: number; idleP99?: number; stormP99: number; non2xx: number };
  /** The code the run measured, at its start and at its end (others edit src/ meanwhile). */
  code?: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  /** The database server, its version and where it runs: `MariaDB 10.11.19 on 127.0.0.1:3306`. */
  server?: string;
  rss: { idle?: number | null; warm?: number | null; after?: number | null };
  /** What the run switched on beyond what every write does, and the webhook deliveries that arrived during it. */
  desk?: { said: string; deliveries?: number };
  /** The app's RSS after each scenario. */
  rssTrail: string[];
  workers?: { scenario: string; one: number; two: number }[];
  workersNote?: string;
  csv?: {
    exportSeconds?: number;
    exportPeakMb?: number;
    exportRows?: number;
    importSeconds?: number;
    importedRows?: number;
    /**
     * SQLite: the same rows (--quick: the first of them) inserted by bare better-sqlite3 into the same schema
     * (bench/floor-bulk.ts).
     */
    floorImportSeconds?: number;
    floorImportRows?: number;
    /** In one transaction, or in several (the faster: bench/floor-bulk.ts). */
    floorImportHow?: string;
    /** An import that changes a searchable field of the first imported contacts (`--upsert-by id`). */
    updateSeconds?: number;
    updatedRows?: number;
    note?: string;
  };
  notes: string[];
  failed: boolean;
}

/** The settings of the run, as the section reports them. */
export interface RunInfo {
  rows: number;
  inquiries: number;
  seed: number;
  duration: number;
  command: string;
  only: Set<string> | null;
  /** What a --quick run does not measure. */
  leftOut: readonly string[];
}

type Verdict = 'pass' | '**FAIL**' | 'n/a';
const verdict = (ok: boolean | undefined): Verdict => (ok === undefined ? 'n/a' : ok ? 'pass' : '**FAIL**');
const finite = (n: number | undefined | null): n is number => typeof n === 'number' && Number.isFinite(n);

/**
 * The scenarios whose target is a ratio to the floor: their throughput is the median of ROUNDS rounds, the app's and
 * the floor's alternating, as one measurement of a second on a shared machine may be off by a third.
 */
export const RATIO_SCENARIOS = ['get', 'create', 'patch'] as const;
export const ROUNDS = 3;

function targets(r: Report, run: RunInfo): string[][] {
  const m = r.measured;
  const out: string[][] = [];
  for (const s of RATIO_SCENARIOS) {
    const ratio = m[s]?.app10 && m[s]?.floor10 ? m[s]!.app10!.rps / m[s]!.floor10!.rps : undefined;
    out.push([
      `${LABELS[s]}: app ≥ 0.6 × floor req/s (10 connections)`,
      fmt.ratio(ratio),
      verdict(finite(ratio) ? ratio >= 0.6 : undefined),
    ]);
  }
  const p50 = (s: ScenarioName) => m[s]?.app1?.p50;
  const p99 = (s: ScenarioName) => m[s]?.app1?.p99;
  const within = (v: number | undefined, limit: number) => (finite(v) ? v <= limit : undefined);
  out.push(['list page 1 with total: p50 ≤ 3 ms', `${fmt.ms(p50('page1'))} ms`, verdict(within(p50('page1'), 3))]);
  out.push([
    'equality filter with total: p50 ≤ 5 ms',
    `${fmt.ms(p50('filter-eq'))} ms`,
    verdict(within(p50('filter-eq'), 5)),
  ]);
  for (const s of ['search1', 'search2'] as const) {
    const ok = finite(p50(s)) && finite(p99(s)) ? p50(s)! <= 25 && p99(s)! <= 60 : undefined;
    out.push([`${LABELS[s]}: p50 ≤ 25 ms, p99 ≤ 60 ms`, `${fmt.ms(p50(s))} / ${fmt.ms(p99(s))} ms`, verdict(ok)]);
  }
  const deep = p50('deep-cursor');
  const page1 = p50('page1');
  out.push([
    'deep page by cursor: p50 ≤ 2 × page 1 p50',
    `${fmt.ms(deep)} vs ${fmt.ms(page1)} ms`,
    verdict(finite(deep) && finite(page1) ? deep <= 2 * page1 : undefined),
  ]);
  const csv = r.csv;
  // Issue 18's limits, set for 1,000,000 rows (scaled to the rows measured).
  const perMillion = { sqlite: 60, postgres: 60, mysql: 90 }[r.dialect];
  const importLimit = perMillion * (run.rows / 1_000_000);
  out.push([
    `CSV import ≤ ${perMillion} s per 1,000,000 rows${run.rows !== 1_000_000 ? ` (${fmt.s(importLimit)} here)` : ''}`,
    fmt.s(csv?.importSeconds),
    verdict(finite(csv?.importSeconds) ? csv!.importSeconds! <= importLimit : undefined),
  ]);
  if (r.dialect === 'sqlite') {
    // Rates, as --quick's floor inserts the first rows only (bench/floor-bulk.ts).
    const ratio =
      finite(csv?.importSeconds) && finite(csv?.floorImportSeconds) && csv?.importedRows && csv.floorImportRows
        ? csv.importedRows / csv.importSeconds! / (csv.floorImportRows / csv.floorImportSeconds!)
        : undefined;
    out.push([
      'CSV import ≥ 0.75 × the floor’s bulk insert of the same rows (rows/s)',
      ratio === undefined
        ? '–'
        : `${fmt.ratio(ratio)} (${fmt.rps(csv!.importedRows! / csv!.importSeconds!)} vs ${fmt.rps(csv!.floorImportRows! / csv!.floorImportSeconds!)} rows/s)`,
      verdict(ratio === undefined ? undefined : ratio >= 0.75),
    ]);
  }
  const seedFloor = r.dialect === 'mysql' ? 20_000 : 30_000;
  out.push([
    `seed ≥ ${fmt.int(seedFloor)} rows/s`,
    r.seed ? `${fmt.int(r.seed.rate)} rows/s` : '–',
    verdict(r.seed ? r.seed.rate >= seedFloor : undefined),
  ]);
  out.push([
    'CSV export: peak RSS ≤ 250 MB',
    fmt.mb(csv?.exportPeakMb),
    verdict(finite(csv?.exportPeakMb) ? csv!.exportPeakMb! <= 250 : undefined),
  ]);
  const storm = r.storm;
  out.push([
    'read p99 during a sign-in storm ≤ 3 × idle p99',
    storm
      ? `${fmt.ms(storm.stormP99)} vs ${fmt.ms(storm.idleP99)} ms (${fmt.ratio(storm.stormP99 / storm.idleP99!)}×)`
      : '–',
    verdict(storm && finite(storm.idleP99) ? storm.stormP99 <= 3 * storm.idleP99 : undefined),
  ]);
  out.push(['idle RSS ≤ 100 MB', fmt.mb(r.rss.idle), verdict(finite(r.rss.idle) ? r.rss.idle <= 100 : undefined)]);
  const growth = finite(r.rss.after) && finite(r.rss.warm) ? r.rss.after / r.rss.warm - 1 : undefined;
  out.push([
    'RSS after the bench within 20% of after warm-up',
    `${fmt.mb(r.rss.after)} vs ${fmt.mb(r.rss.warm)} (${finite(growth) ? `${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(0)}%` : '–'})`,
    verdict(finite(growth) ? Math.abs(growth) <= 0.2 : undefined),
  ]);
  return out;
}

/** The markdown section of one database. */
export function section(r: Report, run: RunInfo): string {
  const name = DATABASE_NAMES[r.dialect];
  const driver = { sqlite: 'better-sqlite3', postgres: 'pg', mysql: 'mysql2' }[r.dialect];
  const database = r.dialect === 'sqlite' ? driver : `${r.server ?? `${name} on 127.0.0.1`} (${driver})`;
  const lines: string[] = [
    `## ${name}`,
    '',
    `- Date: ${utcMinute(r.started)}${r.failed ? ' — **the run failed, see the notes**' : ''}${run.only ? ` — partial run (--only ${[...run.only].join(',')})` : ''}`,
    `- Machine: ${machine()}; load average at the start ${r.loadAverage.map((n) => n.toFixed(2)).join(', ')} (the machine is shared)`,
    `- Node ${process.version}, ${database}`,
    ...(r.code ? [`- Code: ${describeCode(r.code)}`] : []),
    `- Rows: ${fmt.int(run.rows)} contacts and ${fmt.int(run.inquiries)} inquiries (seed ${run.seed})`,
    `- Command: \`${run.command}\` (${run.duration} s per measurement; ` +
      `${RATIO_SCENARIOS.map((s) => LABELS[s]).join(', ')} at 10 connections: the median of ${ROUNDS} rounds, ` +
      'the app and the floor in turn)',
    ...(run.leftOut.length ? [`- Not measured by \`--quick\`, as no target needs it: ${run.leftOut.join('; ')}`] : []),
    `- Seed: ${r.seed ? `${fmt.int(r.seed.rows)} rows in ${fmt.s(r.seed.seconds)}, ${fmt.rps(r.seed.rate)} rows/s` : '–'}`,
    ...(r.desk
      ? [
          `- The desk: the change log, contact matching and the declared rules on every write; ${r.desk.said}` +
            `${r.desk.deliveries === undefined ? '' : ` (${fmt.int(r.desk.deliveries)} deliveries arrived during the run)`}`,
        ]
      : []),
    '',
  ];
  const rowsOut = SCENARIOS.filter((s) => r.measured[s]).map((s) => {
    const m = r.measured[s]!;
    return [
      LABELS[s],
      fmt.rps(m.app10?.rps),
      fmt.rps(m.floor10?.rps),
      m.app10 && m.floor10 ? fmt.ratio(m.app10.rps / m.floor10.rps) : '–',
      fmt.ms(m.app1?.p50),
      fmt.ms(m.app1?.p99),
      fmt.ms(m.floor1?.p50),
    ];
  });
  if (rowsOut.length)
    lines.push(
      table(['scenario', 'app req/s', 'floor req/s', 'ratio', 'p50 ms', 'p99 ms', 'floor p50 ms'], rowsOut),
      '',
    );
  const other: string[][] = [
    [
      'app RSS: idle after start / after warm-up / after the bench',
      `${fmt.mb(r.rss.idle)} / ${fmt.mb(r.rss.warm)} / ${fmt.mb(r.rss.after)}`,
    ],
  ];
  if (r.rssTrail.length) other.push(['app RSS after each scenario', r.rssTrail.join(', ')]);
  if (r.storm)
    other.push([
      'sign-in storm (10 clients signing in)',
      `${fmt.rps(r.storm.loginsPerSecond)} sign-ins/s; get by id p99 ${fmt.ms(r.storm.stormP99)} ms (idle ${fmt.ms(r.storm.idleP99)} ms)`,
    ]);
  if (r.csv) {
    if (finite(r.csv.exportSeconds))
      other.push([
        `CSV export of ${fmt.int(r.csv.exportRows ?? 0)} contacts (\`leadbook export\`)`,
        `${fmt.s(r.csv.exportSeconds)}, peak RSS ${fmt.mb(r.csv.exportPeakMb)}`,
      ]);
    if (finite(r.csv.importSeconds))
      other.push([
        `CSV import into a fresh database (\`leadbook import\`)`,
        `${fmt.s(r.csv.importSeconds)} for ${fmt.int(r.csv.importedRows ?? 0)} rows (${fmt.rps((r.csv.importedRows ?? 0) / r.csv.importSeconds!)} rows/s)`,
      ]);
    if (finite(r.csv.floorImportSeconds))
      other.push([
        `${r.csv.floorImportRows === r.csv.importedRows ? 'the same rows' : `the first ${fmt.int(r.csv.floorImportRows ?? 0)} of the same rows`} inserted by the floor (bare better-sqlite3, same schema)`,
        `${fmt.s(r.csv.floorImportSeconds)} (${fmt.rps((r.csv.floorImportRows ?? 0) / r.csv.floorImportSeconds!)} rows/s, ${r.csv.floorImportHow})`,
      ]);
    if (finite(r.csv.updateSeconds))
      other.push([
        `CSV import that updates ${fmt.int(r.csv.updatedRows ?? 0)} of them, a searchable field each (\`--upsert-by id\`)`,
        `${fmt.s(r.csv.updateSeconds)} (${fmt.rps((r.csv.updatedRows ?? 0) / r.csv.updateSeconds!)} rows/s)`,
      ]);
    if (r.csv.note) other.push(['CSV', r.csv.note]);
  }
  lines.push(table(['measurement', 'value'], other), '');
  if (r.workers) {
    lines.push('Reads with `serve --workers 2` against 1 worker (10 connections):', '');
    lines.push(
      table(
        ['scenario', '1 worker req/s', '2 workers req/s', 'ratio'],
        r.workers.map((w) => [w.scenario, fmt.rps(w.one), fmt.rps(w.two), fmt.ratio(w.two / w.one)]),
      ),
      '',
    );
  }
  if (r.workersNote) lines.push(`Workers: ${r.workersNote}`, '');
  lines.push(
    `### Targets (${name}${run.rows !== 1_000_000 ? `; set for 1,000,000 rows, measured at ${fmt.int(run.rows)}` : ''})`,
    '',
  );
  lines.push(table(['target', 'measured', 'result'], targets(r, run)), '');
  const notes = [...r.notes];
  const changed = r.code ? codeChangedNote({ code: r.code, codeAfter: r.codeAfter }) : undefined;
  if (changed) notes.push(changed);
  if (notes.length) lines.push('### Notes', '', ...notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}
