// Checks an email and password. Unknown email and wrong password are the same
// answer, in the same time (a decoy hash is checked). After 100 consecutive
// failures, whatever the addresses, the account needs a password reset
// (NIST SP 800-63B §5.2.2); only the right password learns that.
import type { Executor } from '../db/tables.ts';
import { logEvent } from '../records/change-log.ts';
import type { Via } from '../records/context.ts';
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { type Knock, limitKeys } from './limits.ts';
import { checkPassword, hashPassword } from './passwords.ts';
import { ensureAccountState, findUserByEmail, fromDbBool, setUserColumns, type UserRow } from './store.ts';

export const MAX_CONSECUTIVE_FAILURES = 100;

export const invalidCredentials = () =>
  new AppError(401, 'invalid_credentials', 'These credentials do not match our records.');

async function accountState(a: Accounts, userId: bigint) {
  const { db } = a.database;
  await ensureAccountState(db, userId);
  return db.selectFrom('account_states').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
}

/** Counts a failed password; answers whether this failure locked the account. */
async function recordFailure(db: Executor, userId: bigint): Promise<boolean> {
  await db
    .updateTable('account_states')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .where('user_id', '=', userId)
    .execute();
  const locked = await db
    .updateTable('account_states')
    .set({ reset_required: true })
    .where('user_id', '=', userId)
    .where('consecutive_failures', '>=', MAX_CONSECUTIVE_FAILURES)
    .where('reset_required', '=', false)
    .executeTakeFirst();
  return locked.numUpdatedRows > 0n;
}

export async function clearFailures(db: Executor, userId: bigint): Promise<void> {
  await db
    .updateTable('account_states')
    .set({ consecutive_failures: 0, reset_required: false })
    .where('user_id', '=', userId)
    .execute();
}

/** The user whose password this is, or a 401 that does not say which part was wrong. */
export async function checkCredentials(
  a: Accounts,
  email: string,
  password: string,
  via: Via = 'system',
): Promise<UserRow> {
  const user = await findUserByEmail(a.database.db, email);
  const check = await checkPassword(user?.password, password);
  if (!user) throw invalidCredentials();
  const state = await accountState(a, user.id);
  if (!check.ok) {
    // The count, a lockout and their entries in one transaction.
    await a.database.db.transaction().execute(async (trx) => {
      const locked = await recordFailure(trx, user.id);
      await logEvent(trx, 'sign_in_failed', user.id, null, via);
      if (locked) await logEvent(trx, 'locked', user.id, null, via);
    });
    throw invalidCredentials();
  }
  if (fromDbBool(state.reset_required)) {
    throw new AppError(
      401,
      'password_reset_required',
      'This account was locked after too many failed sign-ins. Reset your password by email to unlock it.',
    );
  }
  if (!fromDbBool(user.active))
    throw new AppError(401, 'deactivated', 'This account has been deactivated. Ask an admin to turn it back on.');
  await clearFailures(a.database.db, user.id);
  // A hash of another kind than new passwords get (passwords.ts: bcrypt from the original service, or argon2id while
  // the original app runs beside Leadbook and reads bcrypt only) is replaced now that we know the password.
  if (check.needsRehash) {
    await setUserColumns(a.database.db, user.id, { password: await hashPassword(password) });
  }
  return user;
}

export const hasTwoFactor = (user: UserRow) => user.two_factor_confirmed_at !== null && user.two_factor_secret !== null;

/**
 * A password sign-in through any door (the API's login and token endpoints, the sign-in page): failures count
 * per email and address under one key, so that the doors share the count. `alsoCheck` (a second factor sent
 * along) fails within the same counted attempt.
 */
export async function signInWithPassword(
  a: Accounts,
  knock: Knock,
  email: string,
  password: string,
  alsoCheck?: (user: UserRow) => Promise<void>,
): Promise<UserRow> {
  return knock.throttle.failures(limitKeys.signIn(email, knock.ip), async () => {
    const user = await checkCredentials(a, email, password, knock.via);
    if (alsoCheck) await alsoCheck(user);
    // With a second factor still to give, the sign-in is logged when it is given.
    if (alsoCheck || !hasTwoFactor(user)) await logEvent(a.database.db, 'sign_in', user.id, user.id, knock.via);
    return user;
  });
}
