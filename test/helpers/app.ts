// Starts the real app on a fresh database, listening on a loopback port, and
// talks to it over HTTP. By default the first account (an admin) is registered
// and requests carry its bearer token; `client()` gives a cookie-keeping
// browser-like client instead. Response bodies are parsed so that 64-bit
// integers stay exact (as BigInt when beyond 2^53). Every response and log
// line is kept, for the secrets scan.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { isSafeNumber, parse } from 'lossless-json';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { type DeclaredRoute, declaredRoutes } from '../../src/http/access.ts';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/connection.ts';
import type { Dialect } from '../../src/db/dialect.ts';
import { WEBHOOKS_STAY_HOME } from './loopback-dns.ts';
import { migratedDatabase } from './database.ts';
import type { Json } from './json.ts';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

export interface RequestOptions {
  json?: unknown;
  body?: string | Buffer | FormData;
  headers?: Record<string, string>;
  /** The bearer token to send: the admin's when left out, none when null. */
  token?: string | null;
}

export interface Client {
  cookies: Map<string, string>;
  request(method: string, path: string, options?: Omit<RequestOptions, 'token'>): Promise<Reply>;
  get(path: string): Promise<Reply>;
  post(path: string, json?: unknown): Promise<Reply>;
}

export interface TestApp {
  url: string;
  dialect: Dialect;
  database: Database;
  dataDir: string;
  /** The database's URL (none for SQLite, whose file is in dataDir). */
  databaseUrl?: string;
  /** Every route with the rule of who may call it (src/http/access.ts). */
  routes: readonly DeclaredRoute[];
  /** Everything the app logged. */
  logs: string[];
  /** Every response: status line, headers and body. */
  responses: string[];
  /** The first admin's credentials and bearer token (when `admin` was not false). */
  admin: { email: string; password: string; token: string; id: bigint | number };
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, json?: unknown, headers?: Record<string, string>): Promise<Reply>;
  patch(path: string, json?: unknown, headers?: Record<string, string>): Promise<Reply>;
  delete(path: string, headers?: Record<string, string>): Promise<Reply>;
  /** A browser-like client that keeps cookies and sends no token. */
  client(): Client;
  close(): Promise<void>;
}

const exactNumber = (text: string) =>
  isSafeNumber(text) ? Number(text) : /^-?\d+$/.test(text) ? BigInt(text) : Number(text);

/** JSON text for a request, writing BigInt values as exact numbers. */
export function toJson(value: unknown): string {
  // A printable marker: JSON.stringify would escape a control character, and the marker would never be found again.
  const marker = `__bigint_${randomBytes(6).toString('hex')}__`;
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${marker}${v}` : v)).replace(
    new RegExp(`"${marker}(-?\\d+)"`, 'g'),
    '$1',
  );
}

export async function startApp(
  dialect: Dialect,
  options: { env?: Record<string, string>; admin?: boolean } = {},
): Promise<TestApp> {
  const fresh = await migratedDatabase(dialect);
  const database = openDatabase(fresh.options);
  const logs: string[] = [];
  const responses: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({
    DATA_DIR: fresh.options.dataDir,
    LOG_LEVEL: 'info',
    ...WEBHOOKS_STAY_HOME,
    ...options.env,
  });
  const app: FastifyInstance = await buildApp({
    database,
    config: { ...config, databaseUrl: fresh.options.databaseUrl },
    logStream,
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const admin = {
    email: 'admin@example.com',
    password: `admin pass ${randomBytes(6).toString('hex')}`,
    token: '',
    id: 0 as bigint | number,
  };

  const send = async (
    method: string,
    path: string,
    options: RequestOptions,
    cookies?: Map<string, string>,
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      body = toJson(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const token = options.token === undefined ? admin.token : options.token;
    if (token && !headers.authorization) headers.authorization = `Bearer ${token}`;
    if (cookies?.size) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url + path, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
    const text = await res.text();
    responses.push(`${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${text}`);
    if (cookies) {
      for (const line of res.headers.getSetCookie()) {
        const [pair, ...attributes] = line.split(';');
        const [name, ...value] = pair!.split('=');
        const expired = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
        if (expired) cookies.delete(name!.trim());
        else cookies.set(name!.trim(), value.join('='));
      }
    }
    let parsed: unknown;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = parse(text, null, exactNumber);
    return { status: res.status, headers: res.headers, text, body: parsed };
  };

  const request: TestApp['request'] = (method, path, opts = {}) => send(method, path, opts);

  if (options.admin !== false) {
    const registered = await request('POST', '/api/v1/auth/register', {
      json: { name: 'Admin', email: admin.email, password: admin.password },
      token: null,
    });
    if (registered.status !== 201) throw new Error(`registering the first admin failed: ${registered.text}`);
    admin.id = registered.body.data.id;
    const issued = await request('POST', '/api/v1/auth/token', {
      json: { email: admin.email, password: admin.password, device_name: 'tests' },
      token: null,
    });
    if (issued.status !== 201) throw new Error(`creating the admin's token failed: ${issued.text}`);
    admin.token = issued.body.token;
  }

  return {
    url,
    dialect,
    database,
    routes: declaredRoutes(app),
    dataDir: fresh.options.dataDir,
    databaseUrl: fresh.options.databaseUrl,
    logs,
    responses,
    admin,
    request,
    get: (path, headers) => request('GET', path, { headers }),
    post: (path, json, headers) => request('POST', path, { json: json ?? {}, headers }),
    patch: (path, json, headers) => request('PATCH', path, { json: json ?? {}, headers }),
    delete: (path, headers) => request('DELETE', path, { headers }),
    client() {
      const cookies = new Map<string, string>();
      const c: Client = {
        cookies,
        request: (method, path, opts = {}) => send(method, path, { ...opts, token: null }, cookies),
        get: (path) => c.request('GET', path),
        post: (path, json) => c.request('POST', path, { json: json ?? {} }),
      };
      return c;
    },
    async close() {
      await app.close();
      await database.close();
      await fresh.drop();
    },
  };
}
