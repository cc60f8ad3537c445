// Runs the `leadbook` command as a user would, as a child process.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { WEBHOOKS_STAY_HOME } from './loopback-dns.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/leadbook.js');

/** Runs `leadbook ARGS`, writing `input` to its standard input. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, cwd: ROOT },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Served {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts `leadbook serve [args]` and resolves once /healthz answers (or rejects after `timeoutMs`). */
export async function serveCli(env: Record<string, string>, timeoutMs = 15_000, args: string[] = []): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, ...WEBHOOKS_STAY_HOME, ...env, PORT: String(port), HOST: '127.0.0.1' },
    cwd: ROOT,
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`leadbook serve exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return { url, child, output: () => output, stop };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`leadbook serve did not answer /healthz within ${timeoutMs} ms:\n${output}`);
}

/** A JSON request to a served app (`base`), with a bearer token when given; the answer's status, text and JSON. */
export async function call(base: string, method: string, url: string, token: string | null, json?: unknown) {
  const res = await fetch(base + url, {
    method,
    headers: {
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : null };
}

/** Kills a process at once, as a crash would, and waits until it is gone. */
export async function crash(served: Served): Promise<void> {
  const exited = new Promise((resolve) => served.child.once('exit', resolve));
  served.child.kill('SIGKILL');
  await exited;
}
