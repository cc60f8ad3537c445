// The second factor at sign-in: a TOTP code (once per step, never replayed) or
// a recovery code (each works once; spending it is a conditional update, so two
// requests racing with the same code cannot both win).
import type { Accounts } from './context.ts';
import { type UserRow } from './store.ts';
import { acceptCode, type CodeCheck, spendRecoveryCode } from './two-factor.ts';

export async function passSecondFactor(a: Accounts, user: UserRow, answer: { code?: string; recoveryCode?: string }): Promise<CodeCheck> {
  if (answer.code !== undefined) return acceptCode(a, user.id, user.two_factor_secret, answer.code.replace(/\s/g, ''));
  if (answer.recoveryCode === undefined) return 'invalid';
  const remaining = spendRecoveryCode(user.two_factor_recovery_codes, answer.recoveryCode);
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
