// Email verification: a signed link that expires. The signature is an HMAC of
// the path and expiry under the app key; the hash binds the link to the
// address it was sent to, so changing the email voids older links.
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { hmac, safeEqual, sha256 } from './secrets.ts';
import { findUserById, idFromText, nowIso, setUserColumns, type UserRow } from './store.ts';
import { type Knock, limitKeys } from './limits.ts';
import { sendInBackground } from './mail.ts';

export const VERIFY_LINK_MINUTES = 60;

const pathFor = (user: UserRow) => `/verify-email/${user.id}/${sha256(user.email.toLowerCase())}`;
const signature = (a: Accounts, path: string, expires: number) => hmac(a.key.signing, `${path}?expires=${expires}`);

export async function sendVerificationMail(a: Accounts, user: UserRow): Promise<void> {
  if (user.email_verified_at) return;
  const expires = Math.floor(Date.now() / 1000) + VERIFY_LINK_MINUTES * 60;
  const path = pathFor(user);
  const link = `${a.config.appUrl}${path}?expires=${expires}&signature=${signature(a, path, expires)}`;
  await a.mailer.send({
    to: user.email,
    subject: 'Confirm your Leadbook email address',
    text:
      `Please confirm that ${user.email} is your address by opening ` +
      `this link within ${VERIFY_LINK_MINUTES} minutes:\n\n${link}\n`,
    link,
  });
}

const invalid = () =>
  new AppError(403, 'invalid_signature', 'This verification link is invalid or has expired; ask for a new one.');

export async function verifyEmail(
  a: Accounts,
  id: string,
  hash: string,
  expires: string,
  sig: string,
): Promise<UserRow> {
  const userId = idFromText(id);
  if (userId === null || !/^\d{1,12}$/.test(expires)) throw invalid();
  const user = await findUserById(a.database.db, userId);
  if (!user) throw invalid();
  const path = pathFor(user);
  if (
    path !== `/verify-email/${id}/${hash}` ||
    Number(expires) * 1000 < Date.now() ||
    !safeEqual(signature(a, path, Number(expires)), sig)
  )
    throw invalid();
  if (!user.email_verified_at) await setUserColumns(a.database.db, user.id, { email_verified_at: nowIso() });
  return (await findUserById(a.database.db, user.id))!;
}

/** Mails a new verification link, through any door: every ask counts, per user. */
export async function askForVerificationMail(a: Accounts, knock: Knock, user: UserRow): Promise<void> {
  await knock.throttle.attempts(limitKeys.verificationMail(user.id));
  sendInBackground(a.log, 'verification mail', () => sendVerificationMail(a, user));
}
