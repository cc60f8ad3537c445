// The security suite's parts: problem and cookie checks, TOTP codes from
// Debian's oathtool (an implementation independent of the app's), forms with
// their CSRF token, mails the app wrote to DATA_DIR/mail, a ledger of the
// secrets a session used and where each may show, and the security headers
// every answer must carry.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client, Reply, TestApp } from '../../helpers/app.ts';

export const SESSION = 'leadbook_session';
export const REMEMBER = 'leadbook_remember';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The reply is problem+json with this status and code (and names `field`). */
export function assertProblem(reply: Reply, status: number, code: string, field?: string): void {
  assert.equal(reply.status, status, reply.text.slice(0, 500));
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/, reply.text.slice(0, 200));
  assert.equal(reply.body.status, status, 'the problem repeats the status');
  assert.equal(reply.body.code, code, reply.text.slice(0, 500));
  if (field !== undefined)
    assert.ok(
      Array.isArray(reply.body.errors?.[field]) && reply.body.errors[field].length > 0,
      `errors name ${field}: ${reply.text}`,
    );
}

/** The Set-Cookie line for a cookie name in a reply, if any. */
export function setCookie(reply: Reply, name: string): { value: string; attributes: string } | undefined {
  for (const line of reply.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';');
    const eq = pair!.indexOf('=');
    if (pair!.slice(0, eq).trim() === name) return { value: pair!.slice(eq + 1), attributes: attributes.join(';') };
  }
  return undefined;
}

// ---------------------------------------------------------------- TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps)

export const STEP_MS = 30_000;

/** The code oathtool computes for a base32 `secret` at the time `at` (ms). */
export function oathtool(secret: string, at: number): string {
  const when = new Date(Math.floor(at / 1000) * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
  return execFileSync('/usr/bin/oathtool', ['--totp', '-b', '--now', when, secret], { encoding: 'utf8' }).trim();
}

/** Waits, if needed, so that at least `seconds` remain in the current 30-second step. */
export async function waitForRoom(seconds = 5): Promise<void> {
  const left = STEP_MS - (Date.now() % STEP_MS);
  if (left < seconds * 1000) await sleep(left + 100);
}

/** A six-digit code that is valid for none of the steps around now. */
export function wrongCode(secret: string): string {
  const now = Date.now();
  const valid = new Set([-2, -1, 0, 1, 2].map((k) => oathtool(secret, now + k * STEP_MS)));
  for (const candidate of ['000000', '123456', '999999', '424242', '314159'])
    if (!valid.has(candidate)) return candidate;
  throw new Error('every candidate is a valid code');
}

// ---------------------------------------------------------------- pages and forms

/** The CSRF token of a page's first form. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  assert.ok(match, 'the page has a CSRF token');
  return match[1]!;
}

/** A urlencoded form body, as a browser posts it. */
export const form = (values: Record<string, string>) => ({
  body: new URLSearchParams(values).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** GETs `page` for a fresh token, then posts `values` with it to `action`. */
export async function submit(
  client: Client,
  page: string,
  action: string,
  values: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const shown = await client.get(page);
  assert.equal(shown.status, 200, `${page}: ${shown.text.slice(0, 300)}`);
  const f = form({ ...values, _csrf: csrfOf(shown.text) });
  return client.request('POST', action, { body: f.body, headers: { ...f.headers, ...headers } });
}

/** A browser signed in through the sign-in page. */
export async function pageSignIn(
  app: TestApp,
  who: { email: string; password: string },
  remember = false,
): Promise<Client> {
  const client = app.client();
  const signedIn = await submit(client, '/login', '/login', {
    email: who.email,
    password: who.password,
    ...(remember ? { remember: '1' } : {}),
  });
  assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
  return client;
}

/** A browser signed in through the JSON API. */
export async function apiSignIn(
  app: TestApp,
  who: { email: string; password: string },
  remember = false,
): Promise<Client> {
  const client = app.client();
  const reply = await client.post('/api/v1/auth/login', { email: who.email, password: who.password, remember });
  assert.equal(reply.status, 200, reply.text);
  return client;
}

// ---------------------------------------------------------------- mail written to files (no SMTP_URL)

/** The mails in DATA_DIR/mail, oldest first, with their links (quoted-printable soft breaks undone). */
export function mailsOf(app: TestApp): { file: string; text: string; link: URL | undefined }[] {
  const dir = path.join(app.dataDir, 'mail');
  if (!fs.existsSync(dir)) return [];
  // A mail still being written is a .part file until it is whole (renamed to .eml): not a mail yet.
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.eml'))
    .sort()
    .map((file) => {
      const text = fs
        .readFileSync(path.join(dir, file), 'utf8')
        .replace(/=\r?\n/g, '')
        .replace(/=3D/g, '=');
      const link = /https?:\/\/[^\s<>"]+/.exec(text)?.[0];
      return { file, text, link: link ? new URL(link) : undefined };
    });
}

type Mail = ReturnType<typeof mailsOf>[number];

/**
 * Waits for a mail after the first `count` that `wanted` accepts, and answers
 * the newest such. Mails go out after the answer, so one from an earlier
 * request (a "password changed" notice) may land after `count` was taken;
 * and a file may be read before it is wholly written: both are waited out.
 */
export async function nextMail(
  app: TestApp,
  count: number,
  wanted: (mail: Mail) => boolean = () => true,
  timeoutMs = 5000,
): Promise<Mail> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = mailsOf(app).slice(count).filter(wanted);
    if (found.length) return found.at(-1)!;
    if (Date.now() > end) throw new Error(`no new mail in ${app.dataDir}/mail within ${timeoutMs} ms`);
    await sleep(25);
  }
}

// ---------------------------------------------------------------- secrets and where they may show

interface Tracked {
  value: string;
  what: string;
  /** The one response allowed to show it (the one that issued it); none for secrets no response may show. */
  issuedBy?: number;
}

/** The secrets a session used; `problems()` scans every response and log line of the app for them. */
export class Ledger {
  readonly items: Tracked[] = [];
  constructor(private app: TestApp) {}

  /** A secret no response and no log line may show. */
  used(value: string, what: string): string {
    assert.ok(value.length >= 6, `${what} is long enough to search for`);
    this.items.push({ value, what });
    return value;
  }

  /** A secret the app's latest response issued: only that response may show it. */
  issued(value: string, what: string): string {
    const index = this.app.responses.length - 1;
    assert.ok(this.app.responses[index]?.includes(value), `the latest response carries the ${what}`);
    this.items.push({ value, what, issuedBy: index });
    return value;
  }

  /** Where a secret showed where it must not; also cookie secrets outside the Set-Cookie that set them, and hidden fields. */
  problems(): string[] {
    const problems: string[] = [];
    const hiddenKey =
      /"(password|remember_token|two_factor_secret|two_factor_recovery_codes)"\s*:\s*("|null|\{|\[|\d|true|false)/;
    const hiddenButPassword =
      /"(remember_token|two_factor_secret|two_factor_recovery_codes)"\s*:\s*("|null|\{|\[|\d|true|false)/;
    // Cookie secrets (session, remember-me) may show only in the Set-Cookie of the one response that set them.
    const cookieSecrets = new Map<string, number>();
    for (const response of this.app.responses) {
      for (const m of response.matchAll(/(?:leadbook_session|leadbook_remember)=([^;\s]{16,})/g))
        cookieSecrets.set(m[1]!, (cookieSecrets.get(m[1]!) ?? 0) + 1);
    }
    for (const [value, count] of cookieSecrets)
      if (count !== 1) problems.push(`a cookie secret ${value.slice(0, 6)}… shows in ${count} responses`);
    this.app.responses.forEach((response, index) => {
      for (const secret of this.items) {
        if (secret.issuedBy === index || !response.includes(secret.value)) continue;
        problems.push(`the ${secret.what} shows in response #${index}: ${response.slice(0, 200)}`);
      }
      // The OpenAPI document names "password" as an input; no other answer may carry a hidden field.
      const isOpenApi = /"openapi"\s*:\s*"3\./.test(response);
      if ((isOpenApi ? hiddenButPassword : hiddenKey).test(response))
        problems.push(`a hidden field in response #${index}: ${response.slice(0, 300)}`);
      const body = response.slice(response.indexOf('\n\n'));
      for (const value of cookieSecrets.keys())
        if (body.includes(value)) problems.push(`a cookie secret in the body of response #${index}`);
    });
    for (const line of this.app.logs) {
      for (const secret of this.items)
        if (line.includes(secret.value)) problems.push(`the ${secret.what} in a log line: ${line.slice(0, 300)}`);
      for (const value of cookieSecrets.keys())
        if (line.includes(value)) problems.push(`a cookie secret in a log line: ${line.slice(0, 300)}`);
      if (hiddenKey.test(line)) problems.push(`a hidden field in a log line: ${line.slice(0, 300)}`);
    }
    return problems;
  }
}

// ---------------------------------------------------------------- security headers

/** What is missing from an answer's security headers; none when they are all there. */
export function headerProblems(headers: Headers): string[] {
  const problems: string[] = [];
  const csp = headers.get('content-security-policy');
  if (!csp) problems.push('no Content-Security-Policy');
  else {
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((d) => d[0])
        .map(([name, ...values]) => [name!.toLowerCase(), values]),
    );
    const scripts = directives.get('script-src') ?? directives.get('default-src');
    if (!scripts) problems.push(`CSP without script-src or default-src: ${csp}`);
    else if (scripts.includes("'unsafe-inline'") || scripts.includes("'unsafe-eval'") || scripts.includes('*'))
      problems.push(`CSP allows unsafe scripts: ${csp}`);
    const frames = directives.get('frame-ancestors');
    const xfo = headers.get('x-frame-options')?.toUpperCase();
    if (!(frames && (frames.includes("'none'") || frames.includes("'self'"))) && xfo !== 'DENY' && xfo !== 'SAMEORIGIN')
      problems.push('no frame protection (frame-ancestors or X-Frame-Options)');
  }
  if (headers.get('x-content-type-options') !== 'nosniff')
    problems.push(`X-Content-Type-Options is ${headers.get('x-content-type-options')}`);
  const referrer = headers.get('referrer-policy');
  if (!referrer || /unsafe-url|no-referrer-when-downgrade/.test(referrer))
    problems.push(`Referrer-Policy is ${referrer}`);
  return problems;
}
