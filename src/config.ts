// Every setting, read from the environment once and checked, with defaults
// that make `npm start` work on a laptop with nothing configured.
import path from 'node:path';
import { isSupportedCountry } from 'libphonenumber-js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** `postgres://…` for PostgreSQL; unset means the SQLite file in `dataDir`. */
  databaseUrl?: string;
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
  /** Where phone numbers written without a country code are (`DE`, `US`): contacts match on the number in E.164. */
  defaultCountry?: string;
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

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[name] ?? '').toLowerCase());
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = number(env, 'PORT', 3000, 0);
  if (!Number.isInteger(port) || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with postgres:// (leave it unset for the SQLite file)');
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
    defaultCountry: country(env, 'DEFAULT_COUNTRY'),
  };
}
