// Child processes of the bench: the `leadbook` command, the app and the floor
// as servers, and the load generator. Each is ended by its own pid.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../test/helpers/process.ts';
import type { LoadJob, LoadResult } from './load.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/leadbook.js');
/** The Node flags the `leadbook` command runs with (its shebang, and package.json's start). */
const NODE_FLAGS = fs
  .readFileSync(BIN, 'utf8')
  .split('\n')[0]!
  .split(' ')
  .filter((word) => word.startsWith('--'));

/** A number from /proc/<pid>/status in kB (VmRSS: resident now; VmHWM: the peak), or null when the process is gone. */
export function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** A process's resident memory in MB, or null when it is gone. */
export const rssMb = (pid: number) => {
  const kb = procStatusKb(pid, 'VmRSS');
  return kb === null ? null : kb / 1024;
};

/** CPU ticks (1/100 s, user + system) a process has spent, or null when it is gone or cannot be read. */
export function cpuTicks(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
  } catch {
    return null;
  }
}

export interface CommandResult {
  code: number;
  /** The signal that ended it, if one did (then `code` is 1). */
  signal?: NodeJS.Signals;
  stdout: string;
  stderr: string;
  seconds: number;
  /** The peak resident memory seen while it ran, in MB (when asked for). */
  peakRssMb?: number;
}

/**
 * Runs `leadbook ARGS` to its end. `showProgress` passes its standard error
 * through (progress bars); `watchMemory` polls its peak RSS (VmHWM).
 */
export function leadbook(
  args: string[],
  env: Record<string, string>,
  options: { input?: string; showProgress?: boolean; watchMemory?: boolean } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...NODE_FLAGS, BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      if (options.showProgress) process.stderr.write(d);
    });
    let peakKb = 0;
    const poll = options.watchMemory
      ? setInterval(() => {
          peakKb = Math.max(peakKb, procStatusKb(child.pid!, 'VmHWM') ?? 0);
        }, 50)
      : undefined;
    child.stdin.end(options.input ?? '');
    child.on('close', (code, signal) => {
      if (poll) clearInterval(poll);
      resolve({
        code: code ?? 1,
        ...(signal ? { signal } : {}),
        stdout,
        stderr,
        seconds: (performance.now() - started) / 1000,
        ...(options.watchMemory ? { peakRssMb: peakKb / 1024 } : {}),
      });
    });
  });
}

export interface Server {
  url: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Ends every child still running (on the way out, or on Ctrl-C). */
export function stopAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
}

/** Starts a server process and resolves once GET /healthz answers 200 (asked every `pollMs`). */
export async function startServer(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
  pollMs = 100,
): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, pid: child.pid!, output: () => output, stop };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  await stop();
  throw new Error(`${args.join(' ')} did not answer /healthz within ${timeoutMs / 1000} s:\n${output}`);
}

export const appServer = (env: Record<string, string>, extra: string[] = []) =>
  startServer([...NODE_FLAGS, BIN, 'serve', ...extra], env);
export const floorServer = (env: Record<string, string>) =>
  startServer(['--import', 'tsx', path.join(ROOT, 'bench/floor.ts')], env);

/** A load-generator process (bench/load.ts) that runs one autocannon job at a time. */
export class LoadClient {
  private readonly child: ChildProcess;
  private next = 0;
  private readonly waiting = new Map<number, { resolve(r: LoadResult): void; reject(e: Error): void }>();

  constructor() {
    this.child = fork(path.join(ROOT, 'bench/load.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    running.add(this.child);
    this.child.on('message', (m: { id: number; result?: LoadResult; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.result!);
    });
    this.child.on('exit', (code) => {
      running.delete(this.child);
      for (const w of this.waiting.values()) w.reject(new Error(`the load generator exited with ${code}`));
      this.waiting.clear();
    });
  }

  run(job: LoadJob): Promise<LoadResult> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, job });
    });
  }

  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}
