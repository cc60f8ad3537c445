// `leadbook serve` as a child process for the reliability suites: started
// through bin/leadbook.js like an operator would, on a database of its own,
// with a small HTTP client that parses 64-bit integers exactly.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { isSafeNumber, parse, stringify } from 'lossless-json';
import { resources } from '../../../src/resources/index.ts';
import type { FreshDatabase } from '../../helpers/database.ts';
import { freePort, ROOT } from '../../helpers/process.ts';
import { compiledMain } from './compiled.ts';
import type { Json } from '../../helpers/json.ts';
import { WEBHOOKS_STAY_HOME } from '../../helpers/loopback-dns.ts';

const BIN = path.join(ROOT, 'bin/leadbook.js');
const WARM = path.join(import.meta.dirname, 'warm-start.mjs');

/**
 * How to run `leadbook`: `bin` is bin/leadbook.js, exactly as an operator
 * runs it (it checks that dist/ is current, then runs it); `compiled` is
 * dist/cli/main.js itself (see compiled.ts), for suites that start many processes.
 */
export type Launcher = 'bin' | 'compiled';

function command(launcher: Launcher): { entry: string; warm: Record<string, string> } {
  const main = compiledMain();
  const dist = path.dirname(path.dirname(main));
  // The modules the commands load on demand (src/cli/main.ts), loaded ahead.
  const modules = ['server.js', 'cli/user-create.js', 'cli/backup.js'].map((f) => path.join(dist, f));
  return { entry: launcher === 'bin' ? BIN : main, warm: { LEADBOOK_WARM_MODULES: modules.join(path.delimiter) } };
}

/** LEADBOOK_SOAK=1 (npm run test:soak) runs the long versions. */
export const SOAK = ['1', 'true', 'yes'].includes((process.env.LEADBOOK_SOAK ?? '').toLowerCase());

/** The environment that points `leadbook` at a fresh database (and nothing from the caller's shell). */
export function envOf(fresh: FreshDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: fresh.options.dataDir,
    DATABASE_URL: fresh.options.databaseUrl ?? '',
    LOG_LEVEL: 'warn',
    ...WEBHOOKS_STAY_HOME,
    ...extra,
  };
}

export interface Running {
  url: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Warm {
  /** Opens the gate: `serve` starts now; resolves once /healthz answers. */
  start(timeoutMs?: number): Promise<Running>;
  /** Ends the process if it was never started. */
  discard(): Promise<void>;
}

interface Loaded {
  child: ChildProcessWithoutNullStreams;
  /** stdout and stderr as they came, and each alone (stdout without the preload's "warm" line). */
  output(): string;
  stdout(): string;
  stderr(): string;
  exited: Running['exited'];
  kill: Running['kill'];
  /** Opens the gate (once). */
  go(): void;
  discard(): Promise<void>;
}

/**
 * Spawns `leadbook ARGS` with the app's modules loaded but held before it
 * does anything (see warm-start.mjs); resolves once loaded.
 */
async function loaded(
  args: string[],
  env: Record<string, string>,
  launcher: Launcher,
  loadTimeoutMs = 60_000,
): Promise<Loaded> {
  const { entry, warm } = command(launcher);
  const child = spawn(process.execPath, ['--import', WARM, entry, ...args], {
    env: { ...process.env, ...env, ...warm },
    cwd: ROOT,
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    output += d;
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  const deadline = Date.now() + loadTimeoutMs;
  while (!stdout.startsWith('warm\n')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await kill();
      throw new Error(`leadbook ${args[0]} did not load:\n${output}`);
    }
    await sleep(20);
  }
  let gone = false;
  return {
    child,
    exited,
    kill,
    output: () => output,
    stdout: () => stdout.slice('warm\n'.length),
    stderr: () => stderr,
    go() {
      if (!gone) child.stdin.write('go\n');
      gone = true;
    },
    async discard() {
      if (!gone) child.stdin.end();
      await kill();
    },
  };
}

/**
 * Spawns `leadbook serve` with its modules loaded but held before it opens the
 * database; `start()` lets it go. Resolves once loaded.
 */
export async function warmServer(env: Record<string, string>, launcher: Launcher = 'compiled'): Promise<Warm> {
  const port = Number(env.PORT) || (await freePort());
  const process_ = await loaded(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1' }, launcher);
  const url = `http://127.0.0.1:${port}`;
  return {
    async start(timeoutMs = 20_000) {
      process_.go();
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (process_.child.exitCode !== null)
          throw new Error(`leadbook serve exited with ${process_.child.exitCode}:\n${process_.output()}`);
        try {
          const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
          if (res.ok)
            return {
              url,
              port,
              child: process_.child,
              output: process_.output,
              exited: process_.exited,
              kill: process_.kill,
            };
        } catch {
          /* not listening yet */
        }
        await sleep(20);
      }
      await process_.kill();
      throw new Error(`leadbook serve did not answer /healthz within ${timeoutMs} ms:\n${process_.output()}`);
    },
    discard: process_.discard,
  };
}

export interface WarmCommand {
  /** Opens the gate and resolves when the command has ended. */
  run(timeoutMs?: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
  discard(): Promise<void>;
}

/** `leadbook ARGS` (e.g. backup FILE), loaded and held until `run()`. */
export async function warmCommand(
  args: string[],
  env: Record<string, string>,
  launcher: Launcher = 'compiled',
): Promise<WarmCommand> {
  const process_ = await loaded(args, env, launcher);
  return {
    async run(timeoutMs = 60_000) {
      process_.go();
      const exit = await within(process_.exited, timeoutMs, null);
      if (!exit) {
        await process_.kill();
        throw new Error(`leadbook ${args.join(' ')} did not end within ${timeoutMs} ms:\n${process_.output()}`);
      }
      return { code: exit.code, stdout: process_.stdout(), stderr: process_.stderr() };
    },
    discard: process_.discard,
  };
}

/** Starts `leadbook serve` and waits for /healthz. */
export async function serve(env: Record<string, string>, launcher: Launcher = 'compiled'): Promise<Running> {
  return (await warmServer(env, launcher)).start();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The promise's value, or `fallback` after `ms` (the timer never keeps the process alive). */
export function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const exactNumber = (text: string) =>
  isSafeNumber(text) ? Number(text) : /^-?\d+$/.test(text) ? BigInt(text) : Number(text);

/** JSON text that writes BigInt values as exact numbers. */
export const toJson = (value: unknown): string => stringify(value) ?? 'null';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

export interface Api {
  url: string;
  request(
    method: string,
    path: string,
    options?: { json?: unknown; headers?: Record<string, string>; timeoutMs?: number },
  ): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
}

/** A client sending the bearer token; every request is bounded by a timeout (10 s unless told). */
export function api(url: string, token?: string): Api {
  const request: Api['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      body = toJson(options.json);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    const body_ =
      /json/.test(res.headers.get('content-type') ?? '') && text ? parse(text, null, exactNumber) : undefined;
    return { status: res.status, headers: res.headers, text, body: body_ };
  };
  return { url, request, get: (path, headers) => request('GET', path, { headers }) };
}

/** Registers the first account (an admin) and answers a bearer token for it. */
export async function signUpAdmin(url: string): Promise<{ token: string; id: number | bigint }> {
  const anonymous = api(url);
  const credentials = { email: 'admin@example.com', password: 'a reliable pass phrase' };
  const registered = await anonymous.request('POST', '/api/v1/auth/register', {
    json: { name: 'Admin', ...credentials },
  });
  if (registered.status !== 201)
    throw new Error(`registering the admin failed: ${registered.status} ${registered.text}`);
  const issued = await anonymous.request('POST', '/api/v1/auth/token', {
    json: { ...credentials, device_name: 'reliability' },
  });
  if (issued.status !== 201) throw new Error(`issuing a token failed: ${issued.status} ${issued.text}`);
  return { token: issued.body.token, id: registered.body.data.id };
}

/** Every record of a resource whose id is in `ids`, by id (100 per request). */
/** The counts a record read or written on its own carries besides its fields (a contact's inquiries_count). */
const COUNTS = new Set(resources.flatMap((r) => r.fields.flatMap((f) => (f.countAs ? [f.countAs] : []))));

/** A record as a list answers it (recordsById): without the counts of the records that name it. */
export function asListed<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([name]) => !COUNTS.has(name))) as T;
}

export async function recordsById(
  client: Api,
  resource: string,
  ids: Iterable<bigint | number>,
): Promise<Map<string, Json>> {
  const all = [...ids].map(String);
  const found = new Map<string, Json>();
  for (let i = 0; i < all.length; i += 100) {
    const chunk = all.slice(i, i + 100);
    const page = await client.get(`/api/v1/${resource}?per_page=100&filter[id][in]=${chunk.join(',')}`);
    if (page.status !== 200) throw new Error(`listing ${resource} failed: ${page.status} ${page.text}`);
    for (const record of page.body.data) found.set(String(record.id), record);
  }
  return found;
}

/** How many records a resource holds. */
export async function countOf(client: Api, resource: string): Promise<number> {
  const page = await client.get(`/api/v1/${resource}?per_page=1`);
  if (page.status !== 200) throw new Error(`counting ${resource} failed: ${page.status} ${page.text}`);
  return page.body.meta.total;
}

/** A small seeded generator, so that a failing run can be repeated with LEADBOOK_SEED. */
export { prng as random } from '../../../src/cli/fake-data.ts';

export const seedOf = () => Number(process.env.LEADBOOK_SEED) || Math.floor(Math.random() * 2 ** 31);
