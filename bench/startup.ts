// npm run bench:startup [-- --runs N] [--idle S] [--start-runs M]
//
// What `npm start` costs, before and after the compiled build: the time from
// spawning `leadbook serve` to the first 200 from /healthz (and the CPU time
// the process spent until then, which a busy shared machine disturbs less),
// and the process's resident memory (VmRSS) S seconds (default 30) after it
// was spawned, idle. M more rounds (default 10) measure the start only.
//   tsx:      bench/tsx-bin.js serve, the old bin (src/ through tsx's loader)
//   compiled: bin/leadbook.js serve, the bin of today (its check that dist/ is
//             current, then dist/cli/main.js)
// Both run on the same Node (this process's), on SQLite, each on a database of
// its own migrated beforehand (so that start-up is loading and listening, not
// migrating). One unmeasured warm-up run each (tsx's transform cache), then N
// rounds, alternating which goes first; medians and their ratio go into the
// start-up section of bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, procStatusKb, startServer } from './processes.ts';
import { fmt, table, writeSection } from './results.ts';

const { values: argv } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    idle: { type: 'string', default: '30' },
    'start-runs': { type: 'string', default: '10' },
  },
});
const runs = Number(argv.runs);
const startRuns = Number(argv['start-runs']);
if (!Number.isInteger(startRuns) || startRuns < 0) throw new Error('--start-runs must be a whole number');
const idleSeconds = Number(argv.idle);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a whole number from 1');
if (!(idleSeconds > 0)) throw new Error('--idle must be a number of seconds');

const VARIANTS = {
  tsx: { label: 'before: tsx-run TypeScript (old bin)', entry: path.join(ROOT, 'bench/tsx-bin.js') },
  compiled: { label: 'after: compiled (bin/leadbook.js → dist/)', entry: path.join(ROOT, 'bin/leadbook.js') },
} as const;
type Variant = keyof typeof VARIANTS;

const DATA_ROOT = path.join(ROOT, 'bench/.data', `startup-${process.pid}`);
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Sample {
  readyMs: number;
  cpuMs: number;
  rssMb?: number;
}

/** The CPU time (user + system, every thread) a process has spent, in ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in ticks of 1/100 s
}

async function measure(variant: Variant, n: number, idle = true): Promise<Sample> {
  const dataDir = path.join(DATA_ROOT, `${variant}-${n}`);
  fs.mkdirSync(dataDir, { recursive: true });
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    APP_KEY: Buffer.alloc(32, 7).toString('base64'),
  };
  execFileSync(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), 'migrate'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const spawned = performance.now();
  const server = await startServer([VARIANTS[variant].entry, 'serve'], env, 120_000, 10);
  const readyMs = performance.now() - spawned;
  const cpu = cpuMs(server.pid);
  try {
    if (!idle) return { readyMs, cpuMs: cpu };
    await sleep(Math.max(0, spawned + idleSeconds * 1000 - performance.now()));
    const kb = procStatusKb(server.pid, 'VmRSS');
    if (kb === null) throw new Error(`${variant}: the server is gone:\n${server.output()}`);
    return { readyMs, cpuMs: cpu, rssMb: kb / 1024 };
  } finally {
    await server.stop();
  }
}

execFileSync(process.execPath, [path.join(ROOT, 'scripts/ensure-build.js')], { cwd: ROOT, stdio: 'inherit' });
const started = new Date();
const loadAverage = os.loadavg();
const samples: Record<Variant, Sample[]> = { tsx: [], compiled: [] };
try {
  for (const variant of ['tsx', 'compiled'] as const) {
    const warm = await measure(variant, 0);
    log(`warm-up ${variant}: ready in ${fmt.ms(warm.readyMs)} ms, ${fmt.mb(warm.rssMb)}`);
  }
  for (let i = 1; i <= runs; i++) {
    for (const variant of (i % 2 ? ['tsx', 'compiled'] : ['compiled', 'tsx']) as Variant[]) {
      const sample = await measure(variant, i);
      samples[variant].push(sample);
      log(
        `round ${i} ${variant}: ready in ${fmt.ms(sample.readyMs)} ms (CPU ${fmt.ms(sample.cpuMs)} ms), RSS ${sample.rssMb!.toFixed(1)} MB after ${idleSeconds} s`,
      );
    }
  }
  for (let i = 1; i <= startRuns; i++) {
    for (const variant of (i % 2 ? ['compiled', 'tsx'] : ['tsx', 'compiled']) as Variant[]) {
      const sample = await measure(variant, runs + i, false);
      samples[variant].push(sample);
      log(`start-only round ${i} ${variant}: ready in ${fmt.ms(sample.readyMs)} ms (CPU ${fmt.ms(sample.cpuMs)} ms)`);
    }
  }
} finally {
  fs.rmSync(DATA_ROOT, { recursive: true, force: true });
}

const med = (v: Variant, k: keyof Sample) => median(samples[v].flatMap((s) => (s[k] === undefined ? [] : [s[k]])));
const change = (before: number, after: number) =>
  `${after / before < 1 ? '−' : '+'}${Math.abs((after / before - 1) * 100).toFixed(0)}%`;
const rows = (['tsx', 'compiled'] as const).map((v) => [
  VARIANTS[v].label,
  `${fmt.ms(med(v, 'readyMs'))} ms`,
  `${fmt.ms(med(v, 'cpuMs'))} ms`,
  `${med(v, 'rssMb').toFixed(1)} MB`,
  samples[v].flatMap((s) => (s.rssMb === undefined ? [] : [s.rssMb.toFixed(1)])).join(', '),
]);
const each = (['tsx', 'compiled'] as const).map((v) => [
  VARIANTS[v].label,
  samples[v].map((s) => Math.round(s.readyMs)).join(', '),
  samples[v].map((s) => Math.round(s.cpuMs)).join(', '),
]);
const cpus = os.cpus();
const markdown = [
  '## Start-up: compiled against tsx',
  '',
  `- Date: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  `- Machine: ${cpus.length} cores, ${cpus[0]?.model.trim() ?? 'unknown CPU'}; load average at the start ${loadAverage.map((n) => n.toFixed(2)).join(', ')} (the machine is shared)`,
  `- Node ${process.version}, SQLite (a migrated database of its own per run), LOG_LEVEL=warn`,
  `- Command: \`npm run bench:startup${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`: one warm-up each, then ${runs} rounds measuring start and idle memory and ${startRuns} measuring the start only, alternating which goes first`,
  "- Start: from spawning `node BIN serve` (what `npm start` runs, without npm's own start-up) to the first 200 from `/healthz`, polled every 10 ms; CPU: user + system time of that process until then",
  `- Idle RSS: VmRSS of that process ${idleSeconds} s after it was spawned, no request after /healthz`,
  '',
  table(['entry', 'start, median', 'CPU to start, median', 'idle RSS, median', 'idle RSS, each run (MB)'], rows),
  '',
  table(['entry', 'start, each run (ms)', 'CPU to start, each run (ms)'], each),
  '',
  table(
    ['after / before', 'ratio', 'change'],
    [
      [
        'start to /healthz',
        fmt.ratio(med('compiled', 'readyMs') / med('tsx', 'readyMs')),
        change(med('tsx', 'readyMs'), med('compiled', 'readyMs')),
      ],
      [
        'CPU time to /healthz',
        fmt.ratio(med('compiled', 'cpuMs') / med('tsx', 'cpuMs')),
        change(med('tsx', 'cpuMs'), med('compiled', 'cpuMs')),
      ],
      [
        'idle RSS',
        fmt.ratio(med('compiled', 'rssMb') / med('tsx', 'rssMb')),
        change(med('tsx', 'rssMb'), med('compiled', 'rssMb')),
      ],
    ],
  ),
].join('\n');
writeSection('startup', markdown);
console.log(`\n${markdown}\n\nWritten to bench/RESULTS.md.`);
