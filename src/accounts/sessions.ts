// Browser sessions, kept in the database so every app process shares them.
// The cookie holds a 256-bit random secret; only its SHA-256 is stored, so a
// leaked table cannot be replayed. `id` is a separate public handle for lists.
import type { Selectable } from 'kysely';
import type { SessionsTable } from '../db/tables.ts';
import { randomToken, sha256 } from './secrets.ts';
import type { Accounts } from './context.ts';
import { fromDbBool, nowIso, toIso } from './store.ts';

export interface Session {
  id: string;
  userId: bigint;
  /** Signed in with the password; the second factor is still due. */
  twoFactorPending: boolean;
  /** Asked to be remembered; kept until the second factor is done. */
  rememberMe: boolean;
  passwordConfirmedAt: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
}

export interface NewSession {
  token: string;
  session: Session;
}

function toSession(row: Selectable<SessionsTable>): Session {
  return {
    id: row.id,
    userId: BigInt(row.user_id),
    twoFactorPending: fromDbBool(row.two_factor_pending),
    rememberMe: fromDbBool(row.remember_me),
    passwordConfirmedAt: toIso(row.password_confirmed_at),
    createdAt: toIso(row.created_at)!,
    lastSeenAt: toIso(row.last_seen_at)!,
    expiresAt: toIso(row.expires_at)!,
    ip: row.ip,
    userAgent: row.user_agent,
  };
}

export async function createSession(
  a: Accounts,
  userId: bigint,
  options: { twoFactorPending?: boolean; rememberMe?: boolean; ip?: string; userAgent?: string },
): Promise<NewSession> {
  const token = randomToken();
  const now = nowIso();
  const row = {
    id: randomToken(16),
    token_hash: sha256(token),
    user_id: userId,
    two_factor_pending: options.twoFactorPending ?? false,
    remember_me: options.rememberMe ?? false,
    // Signing in is no password confirmation (CONTRACT.md, Roles): the window opens only when asked.
    password_confirmed_at: null,
    ip: options.ip?.slice(0, 64) ?? null,
    user_agent: options.userAgent?.slice(0, 255) ?? null,
    created_at: now,
    last_seen_at: now,
    expires_at: new Date(Date.now() + a.config.sessionAbsoluteHours * 3_600_000).toISOString(),
  };
  await a.database.db.insertInto('sessions').values(row).execute();
  return { token, session: toSession(row) };
}

/** The live session for a cookie secret, or null when unknown, idle too long, or past its absolute end. */
export async function findSession(a: Accounts, token: string): Promise<Session | null> {
  if (!token || token.length > 100) return null;
  const row = await a.database.db
    .selectFrom('sessions')
    .selectAll()
    .where('token_hash', '=', sha256(token))
    .executeTakeFirst();
  if (!row) return null;
  const session = toSession(row);
  const now = Date.now();
  const idleEnd = Date.parse(session.lastSeenAt) + a.config.sessionIdleMinutes * 60_000;
  if (now >= Date.parse(session.expiresAt) || now >= idleEnd) {
    await deleteSession(a, session.id);
    return null;
  }
  // Record activity at most once a minute: enough for the idle limit, few writes.
  if (now - Date.parse(session.lastSeenAt) > 60_000) {
    await a.database.db.updateTable('sessions').set({ last_seen_at: nowIso() }).where('id', '=', session.id).execute();
  }
  return session;
}

export async function deleteSession(a: Accounts, id: string): Promise<void> {
  await a.database.db.deleteFrom('sessions').where('id', '=', id).execute();
}

export async function listUserSessions(a: Accounts, userId: bigint): Promise<Session[]> {
  const rows = await a.database.db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('two_factor_pending', '=', false)
    .orderBy('last_seen_at', 'desc')
    .execute();
  return rows.map(toSession);
}

export async function markPasswordConfirmed(a: Accounts, sessionId: string): Promise<void> {
  await a.database.db
    .updateTable('sessions')
    .set({ password_confirmed_at: nowIso() })
    .where('id', '=', sessionId)
    .execute();
}

export function passwordRecentlyConfirmed(a: Accounts, session: Session | undefined): boolean {
  if (!session?.passwordConfirmedAt) return false;
  return Date.now() - Date.parse(session.passwordConfirmedAt) < a.config.passwordConfirmMinutes * 60_000;
}
