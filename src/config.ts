// Every setting, read from the environment once and checked, with defaults
// that make `npm start` work on a laptop with nothing configured.
import { isIP } from 'node:net';
import path from 'node:path';
import { isSupportedCountry } from 'libphonenumber-js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** `postgres://…` for PostgreSQL, `mysql://…` for MariaDB; unset means the SQLite file in `dataDir`. */
  databaseUrl?: string;
  /**
   * LARAVEL_APP_KEY: the original Laravel service's APP_KEY (`base64:…`), after a takeover: its users' two-factor
   * secrets and recovery codes are sealed with it, and its Sanctum tokens are honoured.
   */
  laravelAppKey?: string;
  /** LARAVEL_COEXIST=true: the original app still runs beside Leadbook, so its bcrypt hashes are kept as they are. */
  laravelCoexist: boolean;
  /**
   * APP_TIMEZONE: the Laravel app's timezone, in whose wall-clock time its database (MariaDB) keeps instants; unset is
   * UTC.
   */
  appTimezone?: string;
  logLevel: string;
  /** Base64 of 32 bytes; unset means `dataDir/app.key`, generated once. */
  appKey?: string;
  /** The web app's address, for links in mails. */
  appUrl: string;
  smtpUrl?: string;
  mailFrom: string;
  registrationOpen: boolean;
  /** Trust X-Forwarded-* from a proxy in front (also makes cookies Secure behind HTTPS). */
  trustProxy: boolean;
  sessionIdleMinutes: number;
  sessionAbsoluteHours: number;
  rememberDays: number;
  passwordConfirmMinutes: number;
  /** How long a deleted contact, inquiry or note waits in the trash before it is emptied. */
  trashDays: number;
  /** How often each process asks for the scheduler's lease (and the holder runs what is due). */
  schedulerTickMs: number;
  /**
   * How long the scheduler's holder keeps its lease without renewing it: a dead holder is replaced after this
   * (default 4 ticks, 10 to 20 s).
   */
  schedulerLeaseMs: number;
  /** Where phone numbers written without a country code are (`DE`, `US`): contacts match on the number in E.164. */
  defaultCountry?: string;
  /** GET /metrics asks for it as a bearer token; unset, the metrics are open to anyone who can connect. */
  metricsToken?: string;
  /** Webhooks may go to loopback and private addresses (tests, an intranet); off, only public ones. */
  webhooksAllowPrivate: boolean;
  /** DNS servers (`ip` or `ip:port`) that resolve webhook hosts instead of the system's resolver. */
  webhooksDnsServers?: string[];
  /** The first retry of a failed webhook delivery waits this long; each next one twice as long (at most an hour). */
  webhooksRetryBaseMs: number;
  /** Webhook requests in flight at once (on the process that holds the scheduler's lease); 0 pauses sending. */
  webhooksConcurrency: number;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number of at least ${min}, not ${raw}`);
  return n;
}

function country(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim().toUpperCase();
  if (!raw) return undefined;
  if (!isSupportedCountry(raw)) throw new Error(`${name} must be a country code such as DE or US, not ${env[name]}`);
  return raw;
}

/** A comma-separated list of IP addresses, each with an optional port (`10.0.0.2`, `10.0.0.2:53`, `[::1]:53`). */
function dnsServers(env: NodeJS.ProcessEnv, name: string): string[] | undefined {
  const servers = (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const server of servers) {
    const address = /^\[(.+)\]:\d{1,5}$/.exec(server)?.[1] ?? /^([^:]+):\d{1,5}$/.exec(server)?.[1] ?? server;
    if (!isIP(address)) {
      throw new Error(`${name} must list IP addresses with optional ports (10.0.0.2:53), not ${server}`);
    }
  }
  return servers.length > 0 ? servers : undefined;
}

/** An IANA time zone (Europe/Berlin), checked: a misspelt one would shift every instant. */
function timezone(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
  } catch {
    throw new Error(`APP_TIMEZONE must be a time zone such as Europe/Berlin or UTC, not ${value}`);
  }
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[name] ?? '').toLowerCase());
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = number(env, 'PORT', 3000, 0);
  if (!Number.isInteger(port) || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^(postgres(ql)?|mysql|mariadb):\/\//.test(databaseUrl)) {
    throw new Error(
      'DATABASE_URL must start with postgres://, mysql:// or mariadb:// (leave it unset for the SQLite file)',
    );
  }
  const registration = (env.REGISTRATION || 'closed').toLowerCase();
  if (registration !== 'open' && registration !== 'closed')
    throw new Error(`REGISTRATION must be open or closed, not ${env.REGISTRATION}`);
  const host = env.HOST || '127.0.0.1';
  return {
    host,
    port,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    databaseUrl,
    laravelAppKey: env.LARAVEL_APP_KEY || undefined,
    laravelCoexist: flag(env, 'LARAVEL_COEXIST'),
    appTimezone: timezone(env.APP_TIMEZONE),
    logLevel: env.LOG_LEVEL || 'info',
    appKey: env.APP_KEY || undefined,
    appUrl: (env.APP_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Leadbook <leadbook@localhost>',
    registrationOpen: registration === 'open',
    trustProxy: flag(env, 'TRUST_PROXY'),
    sessionIdleMinutes: number(env, 'SESSION_IDLE_MINUTES', 120),
    sessionAbsoluteHours: number(env, 'SESSION_ABSOLUTE_HOURS', 12),
    rememberDays: number(env, 'REMEMBER_DAYS', 30),
    passwordConfirmMinutes: number(env, 'PASSWORD_CONFIRM_MINUTES', 180),
    trashDays: number(env, 'TRASH_DAYS', 30),
    schedulerTickMs: number(env, 'SCHEDULER_TICK_MS', 5000, 50),
    schedulerLeaseMs: number(
      env,
      'SCHEDULER_LEASE_MS',
      Math.min(20_000, Math.max(10_000, number(env, 'SCHEDULER_TICK_MS', 5000, 50) * 4)),
      500,
    ),
    defaultCountry: country(env, 'DEFAULT_COUNTRY'),
    metricsToken: env.METRICS_TOKEN || undefined,
    webhooksAllowPrivate: flag(env, 'WEBHOOKS_ALLOW_PRIVATE'),
    webhooksDnsServers: dnsServers(env, 'WEBHOOKS_DNS_SERVERS'),
    webhooksRetryBaseMs: number(env, 'WEBHOOKS_RETRY_BASE_MS', 5000, 10),
    webhooksConcurrency: number(env, 'WEBHOOKS_CONCURRENCY', 16, 0),
  };
}
