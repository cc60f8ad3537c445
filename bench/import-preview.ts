// npm run bench:import-preview [-- --db sqlite|postgres|both] [--rows N] [--existing N] [--rounds R]
//
// Issue 15's line: "Preview of a 1,000,000-row file writes nothing and finishes within 1.5 × the time of the
// import's parse and validation alone." One file of N contacts (src/cli/fake-data.ts, seed 1; references written
// by name, as the export writes them) is read, in this process, on one fresh database holding E contacts (seeded
// from the same generator and seed, so the file's first E rows are those contacts, unchanged), R rounds of:
//   (A) parse and validation alone: the import's own pieces composed without the database — openCsv (the file
//       read, its encoding and separator found, decoded, parsed by csv-parse), mapColumns, each row's cells read
//       as the import reads them (importCell, the engine's rowInput) with reference names resolved from a map
//       loaded once before the clock starts, then prepareCreate (the create's checks, defaults, derived keys) on
//       every row; no lookup, no match, no write;
//   (B) the preview as users run it: importCsv with dryRun and upsertBy email (`leadbook import contacts FILE
//       --upsert-by email --dry-run`, POST …/import?dry_run=true&upsert_by=email), which also looks each batch's
//       emails up among the E contacts and checks the references against the database;
// alternating which goes first. The target: B / A ≤ 1.5 (judged on the median of the rounds' ratios; the machine is
// shared), and the row counts of every table the import writes the same before and after every preview.
// Writes the database's import-preview section of bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { sql } from 'kysely';
import { createUser } from '../src/accounts/register.ts';
import { ContactFaker, SERVICES, SOURCES } from '../src/cli/fake-data.ts';
import { seed } from '../src/cli/seed.ts';
import { type Database, openDatabase } from '../src/db/connection.ts';
import type { Dialect } from '../src/db/dialect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { AppError } from '../src/errors.ts';
import { importCell, namesOf } from '../src/records/csv.ts';
import { malformedCsv, openCsv, startLine } from '../src/records/csv-file.ts';
import { importCsv } from '../src/records/import.ts';
import { rowInput } from '../src/records/import-rows.ts';
import { mapColumns } from '../src/records/import-columns.ts';
import { type Context, prepareCreate } from '../src/records/operations.ts';
import { contact } from '../src/resources/index.ts';
import type { Field, Resource } from '../src/schema/resource.ts';
import { DATA_ROOT, PG_ADMIN, pgAdmin } from './places.ts';
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

const USAGE = `npm run bench:import-preview -- [options]
  --db sqlite|postgres|both   databases to measure (default both; --postgres is the same as --db both)
  --rows N                    rows of the file (default 1,000,000)
  --existing N                contacts in the database the preview matches against (default 100,000)
  --rounds R                  measured rounds of both (default 3)
Writes bench/RESULTS.md. PostgreSQL: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).`;

const { argv, fail, command } = benchCommand('bench:import-preview', USAGE, {
  db: { type: 'string' },
  postgres: { type: 'boolean', default: false },
  rows: { type: 'string', default: '1000000' },
  existing: { type: 'string', default: '100000' },
  rounds: { type: 'string', default: '3' },
});

const dialects = dialectsOf(argv.postgres ? 'both' : (argv.db ?? 'both'), fail);
const rows = Number(argv.rows);
if (!Number.isInteger(rows) || rows < 1000) fail('--rows must be a whole number of at least 1,000');
const existing = Number(argv.existing);
if (!Number.isInteger(existing) || existing < 0 || existing > rows) fail('--existing must be from 0 to --rows');
const rounds = Number(argv.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail('--rounds must be a whole number from 1 to 20');
const SEED = 1;
const TARGET = 1.5;
/** The tables an import writes; a preview must leave every one as it was. */
const TABLES = ['contacts', 'change_log', 'imports', 'import_failures', 'import_mappings'] as const;

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// ------------------------------------------------------------------ the file

/** The file's columns: what an export of contacts holds but the read-only ones, the references by name. */
const COLUMNS = contact.writable.filter((f) => !f.defaultActor).map((f) => f.name);

/** Writes the file (once per run; both databases read the same one); answers its size in bytes. */
function writeFile(file: string): number {
  const faker = new ContactFaker(SEED, [1]);
  const named: Record<string, readonly string[]> = { service_id: SERVICES, source_id: SOURCES };
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  try {
    const put = (text: string) => {
      fs.writeSync(fd, text);
      bytes += Buffer.byteLength(text);
    };
    put(stringify([COLUMNS], { record_delimiter: 'windows' }));
    for (let done = 0; done < rows; ) {
      const chunk: string[][] = [];
      for (; chunk.length < 5000 && done < rows; done++) {
        const row = faker.next();
        chunk.push(
          COLUMNS.map((c) => {
            const v = row[c];
            if (v === null || v === undefined) return '';
            // The fresh database gives the lookups ids 1, 2, … in the order of SOURCES and SERVICES.
            return named[c] ? named[c][Number(v) - 1]! : String(v);
          }),
        );
      }
      put(stringify(chunk, { record_delimiter: 'windows' }));
    }
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

// ------------------------------------------------------------------ the database

interface Fresh {
  database: Database;
  ctx: Context;
  drop(): Promise<void>;
}

const undropped = new Set<() => Promise<void>>();

async function freshDatabase(dialect: Dialect): Promise<Fresh> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-bench-import-preview-'));
  let name: string | undefined;
  let url: string | undefined;
  if (dialect === 'postgres') {
    name = `leadbook_bench_${process.pid}_import_preview`;
    await pgAdmin(`drop database if exists ${name} with (force)`);
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
    await migrateToLatest(database.db);
    const password = `bench admin ${randomBytes(9).toString('base64url')}`;
    const admin = await createUser(
      database,
      { name: 'Bench Admin', email: 'bench-admin@example.com', password },
      'admin',
    );
    return { database, ctx: { database, actor: { id: BigInt(admin.id), role: 'admin' }, via: 'cli' }, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

async function tableCounts(database: Database): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES) {
    const { rows: r } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(t)}`.execute(database.db);
    out[t] = Number(r[0]!.n);
  }
  return out;
}

/** Every name a reference cell may give (namesOf: a source's name, a user's email), by target and folded name. */
async function referenceNames(database: Database, resource: Resource): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const field of resource.fields) {
    const target = field.target;
    if (!target) continue;
    const by = namesOf(target);
    const pk = target.primaryKey.name;
    const { rows: found } = await sql<Record<string, unknown>>`select * from ${sql.table(target.table)}`.execute(
      database.db,
    );
    for (const f of [...by].reverse())
      for (const r of found)
        if (r[f.name] !== null) out.set(`${target.name}\u0000${String(r[f.name]).toLowerCase()}`, String(r[pk]));
  }
  return out;
}

// ------------------------------------------------------------------ (A) and (B)

interface Outcome {
  seconds: number;
  /** CPU of this process (user + system), seconds. */
  cpu: number;
  valid: number;
  failed: number;
  /** (B) only: what the preview answered. */
  unchanged?: number;
  updated?: number;
}

/** (A): the file read, parsed, mapped and every row validated as a create; no database. */
async function parseAndValidate(ctx: Context, file: string, names: Map<string, string>): Promise<Outcome> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const writer: Context = { ...ctx, via: 'cli', exact: true };
  const now = new Date().toISOString();
  const csv = await openCsv(fs.createReadStream(file), { maxBytes: Number.POSITIVE_INFINITY });
  let fields: (Field | undefined)[] | undefined;
  let width = 0;
  let valid = 0;
  let failed = 0;
  let lines = 0;
  for await (const item of csv.rows) {
    if (item.malformed) throw malformedCsv(item.malformed);
    const cells = item.record!;
    if (!fields) {
      const columns = mapColumns(contact, cells, {}, new Map());
      fields = columns.map((c) => (c.field ? contact.field(c.field) : undefined));
      width = columns.length;
      continue;
    }
    lines = startLine(item.info!.lines, cells);
    if (cells.every((c) => c.trim() === '')) continue;
    if (cells.length !== width) {
      failed++;
      continue;
    }
    const resolved = cells.map((cell, i) => {
      const field = fields![i];
      if (!field?.target) return cell;
      const text = importCell(field, cell, true).trim();
      if (text === '' || /^\d+$/.test(text)) return cell;
      return names.get(`${field.target.name}\u0000${text.toLowerCase()}`) ?? '';
    });
    try {
      await prepareCreate(writer, contact, rowInput(contact, fields, resolved), now);
      valid++;
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 422) throw error;
      failed++;
    }
  }
  if (lines === 0) throw new Error('the file had no rows');
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, valid, failed };
}

/** (B): the preview, as `leadbook import contacts FILE --upsert-by email --dry-run` runs it. */
async function preview(ctx: Context, file: string): Promise<Outcome> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const report = await importCsv(ctx, contact, fs.createReadStream(file), {
    maxBytes: Number.POSITIVE_INFINITY,
    dryRun: true,
    upsertBy: 'email',
    filename: path.basename(file),
  });
  const used = process.cpuUsage(cpu);
  if (report.import_id !== undefined) throw new Error('the preview made an import');
  return {
    seconds: (performance.now() - started) / 1000,
    cpu: (used.user + used.system) / 1e6,
    valid: report.created + report.updated + report.unchanged,
    failed: report.failed.length + (report.failed_truncated ?? 0),
    unchanged: report.unchanged,
    updated: report.updated,
  };
}

// ------------------------------------------------------------------ one database

type Side = 'A' | 'B';
const LABEL: Record<Side, string> = {
  A: '(A) parse and validation alone',
  B: '(B) preview: dry run, upsert_by=email',
};

interface Measure {
  side: Side;
  round: number;
  outcome: Outcome;
}

interface Report {
  dialect: Dialect;
  started: Date;
  loadAverage: number[];
  code: ReturnType<typeof codeState>;
  codeAfter?: ReturnType<typeof codeState>;
  seedSeconds?: number;
  warmUp: Measure[];
  measures: Measure[];
  counts: { before?: Record<string, number>; after: Record<string, number>[] };
  notes: string[];
  failed: boolean;
}

async function benchDatabase(dialect: Dialect, file: string): Promise<Report> {
  const report: Report = {
    dialect,
    started: new Date(),
    loadAverage: os.loadavg(),
    code: codeState(),
    warmUp: [],
    measures: [],
    counts: { after: [] },
    notes: [],
    failed: false,
  };
  const busy = busyNote(report.loadAverage);
  if (busy) {
    report.notes.push(busy);
    log(`${dialect}: WARNING: ${busy}`);
  }
  let fresh: Fresh | undefined;
  try {
    fresh = await freshDatabase(dialect);
    const seeding = performance.now();
    await seed(fresh.database, { contacts: existing, inquiries: 0, seed: SEED });
    if (dialect === 'postgres') await sql`vacuum (analyze)`.execute(fresh.database.db);
    report.seedSeconds = (performance.now() - seeding) / 1000;
    log(`${dialect}: ${fmt.int(existing)} contacts seeded in ${fmt.s(report.seedSeconds)}`);
    const names = await referenceNames(fresh.database, contact);
    report.counts.before = await tableCounts(fresh.database);

    const run = async (side: Side, round: number): Promise<Measure> => {
      const outcome = side === 'A' ? await parseAndValidate(fresh!.ctx, file, names) : await preview(fresh!.ctx, file);
      if (side === 'B') report.counts.after.push(await tableCounts(fresh!.database));
      const m = { side, round, outcome };
      log(
        `${dialect}: ${round ? `round ${round}` : 'warm-up'} ${LABEL[side].padEnd(40)} ${fmt.s(outcome.seconds)} ` +
          `(CPU ${fmt.s(outcome.cpu)}); ${fmt.int(outcome.valid)} rows valid, ${fmt.int(outcome.failed)} failed` +
          (side === 'B' ? `, ${fmt.int(outcome.unchanged!)} unchanged, ${fmt.int(outcome.updated!)} to update` : ''),
      );
      return m;
    };
    // A warm-up of each on the whole file (the JIT, the page cache, the database's caches).
    report.warmUp.push(await run('A', 0), await run('B', 0));
    for (let round = 1; round <= rounds; round++) {
      const order: Side[] = round % 2 ? ['A', 'B'] : ['B', 'A'];
      for (const side of order) report.measures.push(await run(side, round));
      const r = ratioOf(report.measures, round);
      if (r !== undefined) log(`${dialect}: round ${round}: B / A ${fmt.ratio(r)}`);
    }
    const before = JSON.stringify(report.counts.before);
    if (report.counts.after.some((c) => JSON.stringify(c) !== before)) {
      report.failed = true;
      report.notes.push('**A preview wrote to the database** (see the table counts).');
    }
    const valid = new Set([...report.warmUp, ...report.measures].map((m) => m.outcome.valid + m.outcome.failed));
    if (valid.size !== 1) report.notes.push('The two sides did not read the same number of rows: see the table.');
    return report;
  } catch (error) {
    report.failed = true;
    report.notes.push(`**The run failed:** ${(error as Error).message}`);
    log(`${dialect}: FAILED: ${(error as Error).stack}`);
    return report;
  } finally {
    report.codeAfter = codeState();
    await fresh?.drop().catch((e: Error) => log(`cleanup: ${e.message}`));
  }
}

function ratioOf(measures: readonly Measure[], round: number): number | undefined {
  const a = measures.find((m) => m.round === round && m.side === 'A');
  const b = measures.find((m) => m.round === round && m.side === 'B');
  return a && b ? b.outcome.seconds / a.outcome.seconds : undefined;
}

// ------------------------------------------------------------------ markdown

function section(r: Report, bytes: number): string {
  const name = r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const ratios = [...new Set(r.measures.map((m) => m.round))]
    .map((round) => ratioOf(r.measures, round))
    .filter((x): x is number => x !== undefined);
  const mid = ratios.length ? median(ratios) : undefined;
  const lines = [
    `## Import preview (issue 15): ${name}`,
    '',
    `- Date: ${utcMinute(r.started)}${r.failed ? ' — **the run failed, see the notes**' : ''}`,
    `- Machine: ${machine()}; load average at the start ${r.loadAverage.map((n) => n.toFixed(2)).join(', ')} ` +
      '(the machine is shared)',
    `- Node ${process.version}${r.dialect === 'postgres' ? ', PostgreSQL on 127.0.0.1' : ', better-sqlite3'}`,
    `- Code: ${describeCode(r.code)}`,
    `- Command: \`${command}\``,
    `- The file: ${fmt.int(rows)} contacts (src/cli/fake-data.ts, seed ${SEED}), ${(bytes / 2 ** 20).toFixed(0)} MiB ` +
      'of UTF-8 CSV, comma-separated; the columns of an export but the read-only ones (service and source by name)',
    `- The database: fresh, ${fmt.int(existing)} contacts seeded from the same generator and seed ` +
      `(${fmt.s(r.seedSeconds)}), so the file's first ${fmt.int(existing)} rows match them by email, unchanged`,
    '- (A) parse and validation alone: openCsv (encoding and separator found, decoded, csv-parse), mapColumns, each ' +
      "row's cells read as the import reads them, references resolved from names loaded before the clock starts, " +
      'then prepareCreate on every row; no database. (B) the preview as users run it: `importCsv(…, {dryRun: true, ' +
      "upsertBy: 'email'})`, as `leadbook import contacts FILE --upsert-by email --dry-run` and " +
      '`POST /api/v1/contacts/import?dry_run=true&upsert_by=email` do; in this process, one call awaited at a time',
    `- One warm-up of each, then ${rounds} round(s) of both, alternating which goes first; wall time and this ` +
      "process's CPU",
    '',
  ];
  const all = [...r.warmUp, ...r.measures];
  if (all.length)
    lines.push(
      table(
        ['measurement', 'what', 'time', 'CPU', 'rows valid', 'failed', 'of which unchanged', 'rows/s'],
        all.map((m) => [
          m.round ? `round ${m.round}` : 'warm-up',
          LABEL[m.side],
          fmt.s(m.outcome.seconds),
          fmt.s(m.outcome.cpu),
          fmt.int(m.outcome.valid),
          fmt.int(m.outcome.failed),
          m.outcome.unchanged === undefined ? '–' : fmt.int(m.outcome.unchanged),
          fmt.int(Math.round((m.outcome.valid + m.outcome.failed) / m.outcome.seconds)),
        ]),
      ),
      '',
    );
  if (ratios.length)
    lines.push(`B / A within each round: ${ratios.map(fmt.ratio).join(', ')} (median ${fmt.ratio(mid)}).`, '');
  if (r.counts.before) {
    const same = r.counts.after.every((c) => JSON.stringify(c) === JSON.stringify(r.counts.before));
    lines.push(
      table(
        ['table', 'rows before the previews', `after each of the ${r.counts.after.length} previews`],
        TABLES.map((t) => [
          t,
          fmt.int(r.counts.before![t]!),
          [...new Set(r.counts.after.map((c) => fmt.int(c[t]!)))].join(', '),
        ]),
      ),
      '',
      same ? 'Nothing was written: every table holds the same rows after each preview.' : '**A preview wrote rows.**',
      '',
    );
  }
  const verdict = (ok: boolean | undefined) => (ok === undefined || r.failed ? 'n/a' : ok ? 'pass' : '**FAIL**');
  lines.push(
    `### Target (import preview, ${name})`,
    '',
    table(
      ['target', 'measured', 'result'],
      [
        [
          `the preview of a ${fmt.int(rows)}-row file ≤ ${TARGET} × its parse and validation alone (median of rounds)`,
          mid === undefined ? '–' : `${fmt.ratio(mid)}×`,
          verdict(mid === undefined ? undefined : mid <= TARGET),
        ],
        [
          'the preview writes nothing',
          r.counts.after.length ? `${r.counts.after.length} previews, table counts compared` : '–',
          verdict(
            r.counts.after.length
              ? r.counts.after.every((c) => JSON.stringify(c) === JSON.stringify(r.counts.before))
              : undefined,
          ),
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

const onSignal = () => {
  void Promise.allSettled([...undropped].map((drop) => drop())).finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const started = performance.now();
const dir = path.join(DATA_ROOT, 'import-preview');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `contacts-${rows}.csv`);
log(`bench:import-preview: writing ${fmt.int(rows)} contacts to ${path.relative(process.cwd(), file)}`);
const bytes = writeFile(file);
log(`bench:import-preview: ${(bytes / 2 ** 20).toFixed(0)} MiB; ${dialects.join(' and ')}, ${rounds} round(s)`);
let failed = false;
try {
  for (const dialect of dialects) {
    const report = await benchDatabase(dialect, file);
    const markdown = section(report, bytes);
    writeSection(`import-preview:${dialect}`, markdown);
    failed ||= report.failed;
    console.log(`\n${markdown}`);
    log(`${dialect}: written to ${path.relative(process.cwd(), RESULTS_FILE)}${report.failed ? ' (FAILED)' : ''}`);
  }
} finally {
  fs.rmSync(file, { force: true });
}
log(`bench:import-preview: done in ${fmt.s((performance.now() - started) / 1000)}${failed ? ' — FAILED' : ''}`);
process.exit(failed ? 1 : 0);
