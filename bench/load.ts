// The load generator, a child process of the runner so that driving the load
// does not share an event loop with the runner's bookkeeping. It takes jobs
// over IPC ({id, job}), runs each with autocannon, and answers {id, result}.
// Latencies are kept from autocannon's per-response event at full precision
// (its own histogram keeps whole milliseconds, too coarse for ~1 ms requests).
import autocannon from 'autocannon';
import { prng } from '../src/cli/fake-data.ts';

export interface LoadJob {
  url: string;
  method?: string;
  /**
   * May hold `{id}` (a random id from idMin to idMax), `{n}` (a number unique to the request) and `{ip}` (an IPv4
   * address unique to the request, in 10.0.0.0/8: one client address each, e.g. for `x-forwarded-for`).
   */
  path: string;
  /** Values may hold `{n}` and `{ip}`. */
  headers?: Record<string, string>;
  /** May hold `{n}` and `{ip}`. */
  body?: string;
  connections: number;
  /** Seconds (unless `amount` is given). */
  duration: number;
  /** A number of requests to send instead of a duration: the run ends when all of them are answered. */
  amount?: number;
  idMin?: number;
  idMax?: number;
}

export interface LoadResult {
  /** Answers with a 2xx status. */
  ok: number;
  /** 2xx answers per second. */
  rps: number;
  /** Milliseconds, 2xx answers only. */
  p50: number;
  p975: number;
  p99: number;
  mean: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

let counter = 0;

function run(job: LoadJob): Promise<LoadResult> {
  const random = prng(process.pid ^ Date.now());
  const unique = `${process.pid}-${Date.now().toString(36)}`;
  const headers = { ...(job.body ? { 'content-type': 'application/json' } : {}), ...job.headers };
  const dynamic = [job.path, job.body ?? '', ...Object.values(headers)].some((text) => text.includes('{'));
  const setupRequest = (request: { path?: string; body?: string; headers?: Record<string, string> }) => {
    const i = ++counter;
    const n = `${unique}-${i}`;
    const ip = `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
    const fill = (text: string) => text.replaceAll('{n}', n).replaceAll('{ip}', ip);
    const id = String((job.idMin ?? 1) + Math.floor(random() * ((job.idMax ?? 1) - (job.idMin ?? 1) + 1)));
    request.path = fill(job.path.replace('{id}', id));
    if (job.body) request.body = fill(job.body);
    request.headers = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, fill(value)]));
    return request;
  };
  const latencies: number[] = [];
  // autocannon notices that its time is up, or that `amount` requests were answered, only when it next counts the
  // requests of the last interval (`sampleInt`, 1 s unless told): counted every 0.1 s, a run asked for 0.5 s takes
  // 0.5 s, not 1. With `amount`, the time is taken here, from the start to the last answer.
  const began = performance.now();
  let lastAnswer = began;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        sampleInt: 100,
        ...(job.amount ? { amount: job.amount } : { duration: job.duration }),
        timeout: 30,
        requests: [
          {
            method: job.method ?? 'GET',
            path: job.path,
            headers,
            ...(job.body ? { body: job.body } : {}),
            ...(dynamic ? { setupRequest } : {}),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = Float64Array.from(latencies).sort();
        const seconds = job.amount ? (lastAnswer - began) / 1000 : result.duration || job.duration;
        resolve({
          ok: latencies.length,
          rps: latencies.length / seconds,
          p50: percentile(sorted, 0.5),
          p975: percentile(sorted, 0.975),
          p99: percentile(sorted, 0.99),
          mean: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1),
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, milliseconds: number) => {
      lastAnswer = performance.now();
      if (status >= 200 && status < 300) latencies.push(milliseconds);
    });
  });
}

process.on('message', (message: { id: number; job: LoadJob }) => {
  run(message.job).then(
    (result) => process.send!({ id: message.id, result }),
    (error: Error) => process.send!({ id: message.id, error: error.message }),
  );
});
process.on('disconnect', () => process.exit(0));
