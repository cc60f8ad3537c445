// A user's own profile: the same validation as the users records, minus what
// only an admin may set (role) or what has its own flow (password, avatar).
import { AppError, FieldErrorBag } from '../errors.ts';
import { readInput } from '../records/input.ts';
import type { Context, Via } from '../records/context.ts';
import { deleteRecord, updateRecord } from '../records/operations.ts';
import { user as userResource } from '../resources/user.ts';
import { confirmPassword } from './confirm-password.ts';
import type { Accounts } from './context.ts';
import { bodyWith, text } from './input.ts';
import { sendInBackground } from './mail.ts';
import { checkPassword } from './passwords.ts';
import { endSignIns } from './end-sign-ins.ts';
import type { Session } from './sessions.ts';
import { findUserById, setUserColumns, type UserRow } from './store.ts';
import { sendVerificationMail } from './verify-email.ts';

/**
 * A user acting on their own record, which the users resource otherwise leaves to admins: these flows decide what
 * they may change (never their role). The change log shows the user, through their door.
 */
const asThemself = (a: Accounts, user: UserRow, via: Via, session?: Session): Context => ({
  database: a.database,
  actor: { id: user.id, role: 'admin' },
  via,
  sessionId: session?.id,
});
/** What a user changes on their own record: not their role, nor whether the account is active (an admin's). */
export const PROFILE_FIELDS = userResource.writable
  .filter((f) => !['role', 'active', 'password'].includes(f.name))
  .map((f) => f.name);

export async function updateProfile(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  body: unknown,
  via: Via,
): Promise<UserRow> {
  const input = bodyWith(body, [...PROFILE_FIELDS, 'password']);
  const { password, ...changes } = input;
  const emailChanges = typeof changes.email === 'string' && changes.email.toLowerCase() !== user.email.toLowerCase();
  if (emailChanges) {
    // Wrong fields are said first: asking for the password of a change that cannot be saved anyway helps nobody.
    readInput(userResource, changes, 'update');
    await confirmPassword(a, user, session, password);
  } else if (password !== undefined)
    throw new AppError(422, 'validation_failed', 'Change your password with PUT /api/v1/me/password.', {
      password: ['is changed with PUT /api/v1/me/password'],
    });
  await updateRecord(asThemself(a, user, via), userResource, String(user.id), changes);
  if (emailChanges) {
    await setUserColumns(a.database.db, user.id, { email_verified_at: null });
    const fresh = (await findUserById(a.database.db, user.id))!;
    sendInBackground(a.log, 'verification mail', () => sendVerificationMail(a, fresh));
    return fresh;
  }
  return (await findUserById(a.database.db, user.id))!;
}

/** Checks the current password, sets the new one, and ends every other sign-in of the user. */
export async function changePassword(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  body: unknown,
  via: Via,
): Promise<void> {
  const input = bodyWith(body, ['current_password', 'password']);
  const bag = new FieldErrorBag();
  const current = text(input, 'current_password', bag);
  if (!('password' in input)) bag.add('password', 'is required');
  bag.throwIfAny();
  if (!(await checkPassword(user.password, current)).ok) {
    throw new AppError(422, 'validation_failed', 'The current password is not correct.', {
      current_password: ['is not correct'],
    });
  }
  // The records operation validates and hashes the new password like any other write of it, and its
  // user rules end every other session, token and remembered device.
  await updateRecord(asThemself(a, user, via, session), userResource, String(user.id), { password: input.password });
}

/**
 * Ends every other session and forgets remembered devices (their cookies would sign straight back in); answers how
 * many sessions ended.
 */
export async function signOutOtherSessions(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  password: unknown,
): Promise<number> {
  await confirmPassword(a, user, session, password);
  return endSignIns(a.database.db, user.id, { keepSessionId: session?.id, tokens: false });
}

export async function deleteAccount(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  body: unknown,
  via: Via,
): Promise<void> {
  const input = bodyWith(body, ['password']);
  await confirmPassword(a, user, session, input.password);
  await deleteRecord(asThemself(a, user, via), userResource, String(user.id));
}
