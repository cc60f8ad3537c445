// Forgotten passwords: a single-use token, good for 60 minutes, stored as a
// SHA-256 hash. Asking answers the same whether or not the account exists, and
// the mail goes out after the answer so timing does not tell either.
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { hashPassword } from './passwords.ts';
import { randomToken, safeEqual, sha256 } from './secrets.ts';
import { clearFailures } from './sign-in.ts';
import { findUserByEmail, idParam, nowIso, setUserColumns } from './store.ts';
import { deleteUserSessions } from './sessions.ts';
import { revokeAllTokens } from './tokens.ts';

export const RESET_TOKEN_MINUTES = 60;

const ASKED = 'Someone asked to reset the password of your Leadbook account.';
const IF_NOT_YOU = 'If it was not you, ignore this mail; your password stays as it is.';

export async function requestPasswordReset(a: Accounts, email: string): Promise<void> {
  const user = await findUserByEmail(a.database.db, email);
  if (!user) return;
  const token = randomToken();
  const { db, dialect } = a.database;
  const uid = idParam(dialect, user.id);
  await db.deleteFrom('password_resets').where('user_id', '=', uid).execute();
  await db.insertInto('password_resets').values({ user_id: uid, token_hash: sha256(token), created_at: nowIso() }).execute();
  const query = `token=${encodeURIComponent(token)}&email=${encodeURIComponent(user.email)}`;
  const link = `${a.config.appUrl}/reset-password?${query}`;
  await a.mailer.send({
    to: user.email,
    subject: 'Reset your Leadbook password',
    text:
      `${ASKED}\n\nTo choose a new password, open this link within ${RESET_TOKEN_MINUTES} minutes:` +
      `\n\n${link}\n\n${IF_NOT_YOU}\n`,
    link,
  });
}

const invalidToken = () => new AppError(422, 'validation_failed', 'This reset link is invalid or has expired; ask for a new one.', { token: ['is invalid or has expired'] });

/**
 * Spends a mailed one-time token (a reset or an invitation): true only when it
 * is the user's, younger than `minutes`, and this request is the one that
 * deleted it (of two racing requests with the same token only one wins).
 */
export async function spendMailedToken(a: Accounts, table: 'password_resets' | 'invitations', userId: bigint, token: string, minutes: number): Promise<boolean> {
  const { db, dialect } = a.database;
  const uid = idParam(dialect, userId);
  const row = await db.selectFrom(table).selectAll().where('user_id', '=', uid).executeTakeFirst();
  const created = row ? Date.parse(String(row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at)) : 0;
  if (!row || !safeEqual(String(row.token_hash), sha256(token)) || Date.now() - created > minutes * 60_000) return false;
  const spent = await db.deleteFrom(table).where('user_id', '=', uid).where('token_hash', '=', sha256(token)).executeTakeFirst();
  return spent.numDeletedRows > 0n;
}

/**
 * Sets a password (already checked) chosen through a mailed link: unlocks the account and ends every sign-in it had.
 */
export async function setMailedPassword(a: Accounts, userId: bigint, password: string, extra: Record<string, unknown> = {}): Promise<void> {
  await setUserColumns(a.database.db, a.database.dialect, userId, { password: await hashPassword(password), remember_token: null, ...extra });
  await clearFailures(a, userId);
  await deleteUserSessions(a, userId);
  await revokeAllTokens(a, userId);
}

/** Sets the new password (already checked), spends the token, ends sessions and tokens, unlocks the account. */
export async function resetPassword(a: Accounts, email: string, token: string, password: string): Promise<void> {
  const user = await findUserByEmail(a.database.db, email);
  if (!user || !(await spendMailedToken(a, 'password_resets', user.id, token, RESET_TOKEN_MINUTES))) throw invalidToken();
  await setMailedPassword(a, user.id, password);
}
