// Enable → confirm → (regenerate codes) → disable. Enabling stores a sealed
// secret but leaves 2FA off until a code from the app confirms it. Enabling,
// new codes and disabling each confirm the password themselves, so the API and
// the pages cannot disagree about when it is needed.
import { AppError } from '../errors.ts';
import { logEvent } from '../records/change-log.ts';
import { confirmPassword } from './confirm-password.ts';
import type { Accounts } from './context.ts';
import type { Via } from '../records/context.ts';
import type { Session } from './sessions.ts';
import { findUserById, nowIso, setUserColumns, type UserRow } from './store.ts';
import { acceptCode, codeRefusal, forgetTotpStep, newRecoveryCodes, newSecret } from './two-factor.ts';

export async function enableTwoFactor(a: Accounts, user: UserRow, session: Session | undefined, password: unknown) {
  await confirmPassword(a, user, session, password);
  if (user.two_factor_confirmed_at)
    throw new AppError(
      409,
      'two_factor_enabled',
      'Two-factor authentication is already on; disable it first to set up a new app.',
    );
  const fresh = await newSecret(a, user.email);
  await setUserColumns(a.database.db, user.id, {
    two_factor_secret: fresh.sealed,
    two_factor_recovery_codes: null,
    two_factor_confirmed_at: null,
  });
  await forgetTotpStep(a, user.id);
  return { secret: fresh.secret, otpauth_url: fresh.otpauthUrl, qr_svg: fresh.qrSvg };
}

export async function confirmTwoFactor(a: Accounts, user: UserRow, code: string, via: Via): Promise<string[]> {
  if (!user.two_factor_secret)
    throw new AppError(409, 'two_factor_not_started', 'Start by enabling two-factor authentication.');
  if (user.two_factor_confirmed_at)
    throw new AppError(409, 'two_factor_enabled', 'Two-factor authentication is already confirmed.');
  const check = await acceptCode(a, user.id, user.two_factor_secret, code.replace(/\s/g, ''));
  if (check !== 'accepted') {
    const message = check === 'used' ? codeRefusal(check) : 'is not valid; enter the current code from your app';
    throw new AppError(422, 'validation_failed', `The code ${message}.`, { code: [message] });
  }
  const { codes, stored } = newRecoveryCodes();
  await a.database.db.transaction().execute(async (trx) => {
    await setUserColumns(trx, user.id, { two_factor_confirmed_at: nowIso(), two_factor_recovery_codes: stored });
    await logEvent(trx, 'two_factor_enabled', user.id, user.id, via);
  });
  return codes;
}

export async function regenerateRecoveryCodes(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  password: unknown,
): Promise<string[]> {
  await confirmPassword(a, user, session, password);
  if (!user.two_factor_confirmed_at)
    throw new AppError(409, 'two_factor_disabled', 'Two-factor authentication is off.');
  const { codes, stored } = newRecoveryCodes();
  await setUserColumns(a.database.db, user.id, { two_factor_recovery_codes: stored });
  return codes;
}

export async function disableTwoFactor(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  password: unknown,
  via: Via,
): Promise<UserRow> {
  await confirmPassword(a, user, session, password);
  await a.database.db.transaction().execute(async (trx) => {
    await setUserColumns(trx, user.id, {
      two_factor_secret: null,
      two_factor_recovery_codes: null,
      two_factor_confirmed_at: null,
    });
    await logEvent(trx, 'two_factor_disabled', user.id, user.id, via);
  });
  return (await findUserById(a.database.db, user.id))!;
}
