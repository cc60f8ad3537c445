// Invitations: an admin creates an account without a password, and its owner
// chooses one through a mailed link (good for 7 days, once). Until then the
// account cannot sign in: its stored password is empty, which no hash matches.
// Choosing the password through the link also proves the address.
import { AppError } from '../errors.ts';
import type { Executor } from '../db/tables.ts';
import type { Row } from '../records/repository.ts';
import type { Accounts } from './context.ts';
import type { Body } from './input.ts';
import type { Knock } from './limits.ts';
import { setMailedPassword, setPasswordByMailedLink, spendMailedToken } from './reset-password.ts';
import { randomToken, sha256 } from './secrets.ts';
import { findUserByEmail, nowIso } from './store.ts';

export const INVITATION_DAYS = 7;

/** Records a new invitation for the user inside the caller's transaction; answers the token for the mail. */
export async function createInvitation(trx: Executor, userId: bigint): Promise<string> {
  const token = randomToken();
  await trx.deleteFrom('invitations').where('user_id', '=', userId).execute();
  await trx
    .insertInto('invitations')
    .values({ user_id: userId, token_hash: sha256(token), created_at: nowIso() })
    .execute();
  return token;
}

export function invitationLink(a: Accounts, email: string, token: string): string {
  return `${a.config.appUrl}/invitation?token=${encodeURIComponent(token)}&email=${encodeURIComponent(email)}`;
}

const IF_UNEXPECTED =
  'If you did not expect this, ignore this mail: ' +
  'nobody can sign in to the account until a password is chosen through the link.';

export async function sendInvitation(a: Accounts, user: Row, token: string): Promise<void> {
  const link = invitationLink(a, String(user.email), token);
  await a.mailer.send({
    to: String(user.email),
    subject: 'You are invited to Leadbook',
    text:
      `Hello ${String(user.name)},\n\nyou have an account on Leadbook. To start, choose your password ` +
      `by opening this link within ${INVITATION_DAYS} days:\n\n${link}\n\n${IF_UNEXPECTED}\n`,
    link,
  });
}

const invalidInvitation = () =>
  new AppError(
    422,
    'validation_failed',
    'This invitation link is invalid, was used already, or has expired; ask an admin to invite you again.',
    { token: ['is invalid or has expired'] },
  );

/** Sets the invited user's password and confirms their address; the link works once. */
export async function acceptInvitation(a: Accounts, knock: Knock, body: Body): Promise<void> {
  await setPasswordByMailedLink(knock, 'invitation', body, async ({ email, token, password }) => {
    const user = await findUserByEmail(a.database.db, email);
    if (!user || !(await spendMailedToken(a, 'invitations', user.id, token, INVITATION_DAYS * 24 * 60)))
      throw invalidInvitation();
    await setMailedPassword(a, user.id, password, user.email_verified_at ? {} : { email_verified_at: nowIso() });
  });
}
