// The second factor at sign-in: a TOTP code (once per step, never replayed) or
// a recovery code (each works once; spending it is a conditional update, so two
// requests racing with the same code cannot both win).
import { AppError } from '../errors.ts';
import { logEvent } from '../records/change-log.ts';
import type { Accounts } from './context.ts';
import { spendLaravelRecoveryCode } from './laravel-accounts.ts';
import { type Knock, limitKeys } from './limits.ts';
import type { UserRow } from './store.ts';
import { acceptCode, codeRefusal, type CodeCheck, spendRecoveryCode } from './two-factor.ts';

export async function passSecondFactor(
  a: Accounts,
  user: UserRow,
  answer: { code?: string; recoveryCode?: string },
): Promise<CodeCheck> {
  if (answer.code !== undefined) return acceptCode(a, user.id, user.two_factor_secret, answer.code.replace(/\s/g, ''));
  if (answer.recoveryCode === undefined) return 'invalid';
  const remaining =
    spendRecoveryCode(user.two_factor_recovery_codes, answer.recoveryCode) ??
    spendLaravelRecoveryCode(a, user.two_factor_recovery_codes, answer.recoveryCode);
  if (remaining === null) return 'invalid';
  const { db } = a.database;
  const result = await db
    .updateTable('users')
    .set({ two_factor_recovery_codes: remaining })
    .where('id', '=', user.id)
    .where('two_factor_recovery_codes', '=', user.two_factor_recovery_codes)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? 'accepted' : 'invalid';
}

/**
 * The second step of a sign-in, through any door: a refused code is a 422 naming the field, counted per user and
 * address.
 */
export async function completeSecondFactor(
  a: Accounts,
  knock: Knock,
  user: UserRow,
  answer: { code?: string; recoveryCode?: string },
): Promise<void> {
  await knock.throttle.failures(limitKeys.secondFactor(user.id, knock.ip), async () => {
    const check = await passSecondFactor(a, user, answer);
    if (check !== 'accepted') {
      const message = codeRefusal(check);
      throw new AppError(422, 'validation_failed', `The code ${message}.`, {
        [answer.code ? 'code' : 'recovery_code']: [message],
      });
    }
    await logEvent(a.database.db, 'sign_in', user.id, user.id, knock.via);
  });
}
