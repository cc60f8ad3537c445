// Forgotten passwords: a single-use token, good for 60 minutes, stored as a
// SHA-256 hash. Asking answers the same whether or not the account exists, and
// the mail goes out after the answer so timing does not tell either.
import type { Updateable } from 'kysely';
import { logEvent } from '../records/change-log.ts';
import type { UsersTable } from '../db/tables.ts';
import { AppError, FieldErrorBag } from '../errors.ts';
import type { Accounts } from './context.ts';
import { endSignIns } from './end-sign-ins.ts';
import { type Body, newPassword, text } from './input.ts';
import { type Knock, limitKeys } from './limits.ts';
import { sendInBackground } from './mail.ts';
import { hashPassword } from './passwords.ts';
import { randomToken, safeEqual, sha256 } from './secrets.ts';
import { clearFailures } from './sign-in.ts';
import { findUserByEmail, nowIso, setUserColumns } from './store.ts';

export const RESET_TOKEN_MINUTES = 60;

const ASKED = 'Someone asked to reset the password of your Leadbook account.';
const IF_NOT_YOU = 'If it was not you, ignore this mail; your password stays as it is.';

export async function requestPasswordReset(a: Accounts, email: string): Promise<void> {
  const user = await findUserByEmail(a.database.db, email);
  if (!user) return;
  const token = randomToken();
  const { db } = a.database;
  await db.deleteFrom('password_resets').where('user_id', '=', user.id).execute();
  await db
    .insertInto('password_resets')
    .values({ user_id: user.id, token_hash: sha256(token), created_at: nowIso() })
    .execute();
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

const invalidToken = () =>
  new AppError(422, 'validation_failed', 'This reset link is invalid or has expired; ask for a new one.', {
    token: ['is invalid or has expired'],
  });

/**
 * Spends a mailed one-time token (a reset or an invitation): true only when it
 * is the user's, younger than `minutes`, and this request is the one that
 * deleted it (of two racing requests with the same token only one wins).
 */
export async function spendMailedToken(
  a: Accounts,
  table: 'password_resets' | 'invitations',
  userId: bigint,
  token: string,
  minutes: number,
): Promise<boolean> {
  const { db } = a.database;
  const row = await db.selectFrom(table).selectAll().where('user_id', '=', userId).executeTakeFirst();
  const created = !row ? 0 : row.created_at instanceof Date ? row.created_at.getTime() : Date.parse(row.created_at);
  if (!row || !safeEqual(row.token_hash, sha256(token)) || Date.now() - created > minutes * 60_000) return false;
  const spent = await db
    .deleteFrom(table)
    .where('user_id', '=', userId)
    .where('token_hash', '=', sha256(token))
    .executeTakeFirst();
  return spent.numDeletedRows > 0n;
}

/**
 * Asks for a reset mail, through any door: every ask counts, per email and address; the mail goes out after the
 * answer.
 */
export async function askForPasswordReset(a: Accounts, knock: Knock, email: string): Promise<void> {
  await knock.throttle.attempts(limitKeys.passwordResetMail(email, knock.ip));
  sendInBackground(a.log, 'password reset mail', () => requestPasswordReset(a, email));
}

/**
 * Sets a password (already checked) chosen through a mailed link, unlocks the account and ends every sign-in it
 * had, in one transaction.
 */
export async function setMailedPassword(
  a: Accounts,
  userId: bigint,
  password: string,
  extra: Updateable<UsersTable> = {},
): Promise<void> {
  const hash = await hashPassword(password);
  await a.database.db.transaction().execute(async (trx) => {
    await setUserColumns(trx, userId, { ...extra, password: hash });
    await clearFailures(trx, userId);
    await endSignIns(trx, userId, { tokens: true });
    await logEvent(trx, 'password_changed', userId, userId);
  });
}

export interface MailedPassword {
  email: string;
  token: string;
  password: string;
}

/** What a mailed-link form sends (token, email, the new password), checked the same for every door. */
export function readMailedPassword(body: Body): MailedPassword {
  const bag = new FieldErrorBag();
  const token = text(body, 'token', bag);
  const email = text(body, 'email', bag);
  const password = newPassword(body, 'password', bag);
  bag.throwIfAny();
  return { email, token, password };
}

/**
 * Spends a mailed link's token and sets the password chosen with it: a form that breaks a rule answers at once
 * and counts nothing; a wrong or spent token counts against the email and address.
 */
export async function setPasswordByMailedLink(
  knock: Knock,
  link: 'reset' | 'invitation',
  body: Body,
  spend: (input: MailedPassword) => Promise<void>,
): Promise<void> {
  const input = readMailedPassword(body);
  await knock.throttle.failures(limitKeys.mailedLink(link, input.email, knock.ip), () => spend(input));
}

/** Sets the new password, spends the token, ends sessions and tokens, unlocks the account. */
export async function resetPassword(a: Accounts, knock: Knock, body: Body): Promise<void> {
  await setPasswordByMailedLink(knock, 'reset', body, async ({ email, token, password }) => {
    const user = await findUserByEmail(a.database.db, email);
    if (!user || !(await spendMailedToken(a, 'password_resets', user.id, token, RESET_TOKEN_MINUTES)))
      throw invalidToken();
    await setMailedPassword(a, user.id, password);
  });
}
