// The load suite's parts: the resident memory of a served process (and of any
// worker processes it started), and a closed-loop mixed workload: N workers,
// each sending its next request as soon as the last one answered, until a
// deadline, counting every answer that is not the one expected.
import fs from 'node:fs';

/** VmRSS of one process, in bytes (0 when it is gone). */
function rssOfProcess(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The ids of a process's children (every thread's), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

/** VmRSS of a process and all its descendants (a served app with workers is several processes), in bytes. */
export function treeRss(pid: number): number {
  let total = 0;
  const seen = new Set<number>();
  const queue = [pid];
  while (queue.length) {
    const next = queue.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    total += rssOfProcess(next);
    queue.push(...childrenOf(next));
  }
  return total;
}

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export interface Outcome {
  op: string;
  ok: boolean;
  ms: number;
  /** What went wrong, when not ok. */
  detail?: string;
}

export interface Tally {
  requests: number;
  errors: number;
  byOp: Map<string, { count: number; errors: number; latencies: number[] }>;
  /** The first few failures, for the report. */
  samples: string[];
  seconds: number;
}

/** Runs `concurrency` closed loops of `next()` until `durationMs` has passed; `next` sends one request and says how it went. */
export async function runClosedLoop(
  concurrency: number,
  durationMs: number,
  next: () => Promise<Outcome>,
): Promise<Tally> {
  const tally: Tally = { requests: 0, errors: 0, byOp: new Map(), samples: [], seconds: 0 };
  const started = Date.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (Date.now() < deadline) {
      const outcome = await next();
      tally.requests++;
      const op = tally.byOp.get(outcome.op) ?? { count: 0, errors: 0, latencies: [] };
      op.count++;
      op.latencies.push(outcome.ms);
      if (!outcome.ok) {
        tally.errors++;
        op.errors++;
        if (tally.samples.length < 10) tally.samples.push(`${outcome.op}: ${outcome.detail}`);
      }
      tally.byOp.set(outcome.op, op);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  tally.seconds = (Date.now() - started) / 1000;
  return tally;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One line per operation: count, errors, p50 and p99 latency. */
export function summary(tally: Tally): string {
  const lines = [...tally.byOp]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([op, s]) =>
        `${op.padEnd(8)} ${String(s.count).padStart(7)} (${((100 * s.count) / tally.requests).toFixed(1)}%)  errors ${s.errors}  p50 ${percentile(s.latencies, 50).toFixed(1)} ms  p99 ${percentile(s.latencies, 99).toFixed(1)} ms`,
    );
  return [
    `${tally.requests} requests in ${tally.seconds.toFixed(1)} s (${(tally.requests / tally.seconds).toFixed(0)}/s), ${tally.errors} errors`,
    ...lines,
  ].join('\n');
}
