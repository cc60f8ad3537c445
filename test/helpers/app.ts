// Starts the real app on a fresh database, listening on a loopback port, and
// talks to it over HTTP. Response bodies are parsed so that 64-bit integers
// stay exact (as BigInt when beyond 2^53).
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { isSafeNumber, parse } from 'lossless-json';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { type Database, openDatabase } from '../../src/db/connection.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Dialect } from '../../src/schema/kinds.ts';
import { freshDatabase } from './database.ts';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface TestApp {
  url: string;
  dialect: Dialect;
  database: Database;
  /** Everything the app logged. */
  logs: string[];
  request(method: string, path: string, options?: { json?: unknown; body?: string | Buffer; headers?: Record<string, string> }): Promise<Reply>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, json?: unknown, headers?: Record<string, string>): Promise<Reply>;
  patch(path: string, json?: unknown, headers?: Record<string, string>): Promise<Reply>;
  delete(path: string, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

const exactNumber = (text: string) => (isSafeNumber(text) ? Number(text) : /^-?\d+$/.test(text) ? BigInt(text) : Number(text));

/** JSON text for a request, writing BigInt values as exact numbers. */
export function toJson(value: unknown): string {
  // A printable marker: JSON.stringify escapes control characters, so a
  // control-character marker would never be found again in its output.
  const marker = `big-${randomUUID()}:`;
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${marker}${v}` : v)).replace(
    new RegExp(`"${marker}(-?\\d+)"`, 'g'),
    '$1',
  );
}

export async function startApp(dialect: Dialect): Promise<TestApp> {
  const fresh = await freshDatabase(dialect);
  const database = openDatabase(fresh.options);
  await migrateToLatest(database.db);
  const logs: string[] = [];
  const logStream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done(); } });
  const app: FastifyInstance = await buildApp({ database, logLevel: 'info', logStream });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | Buffer | undefined = options.body;
    if (options.json !== undefined) {
      body = toJson(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = parse(text, null, exactNumber);
    return { status: res.status, headers: res.headers, text, body: parsed };
  };

  return {
    url,
    dialect,
    database,
    logs,
    request,
    get: (path, headers) => request('GET', path, { headers }),
    post: (path, json, headers) => request('POST', path, { json: json ?? {}, headers }),
    patch: (path, json, headers) => request('PATCH', path, { json: json ?? {}, headers }),
    delete: (path, headers) => request('DELETE', path, { headers }),
    async close() {
      await app.close();
      await database.close();
      await fresh.drop();
    },
  };
}
