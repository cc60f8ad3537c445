// Sensitive changes need the password: sent with the request, or confirmed on
// this session within the configured window (POST /me/confirm-password, or a
// password typed into an earlier sensitive form). Signing in does not open the
// window: a session cookie alone, taken from an unattended browser, must not
// be enough to delete the account or turn two-factor off.
import { AppError, FieldErrorBag } from '../errors.ts';
import type { Accounts } from './context.ts';
import { type Body, text } from './input.ts';
import { checkPassword } from './passwords.ts';
import { markPasswordConfirmed, passwordRecentlyConfirmed, type Session } from './sessions.ts';
import type { UserRow } from './store.ts';

/** Said of every sensitive route in the API reference; the tests find the sensitive routes by it. */
export const SENSITIVE =
  'Sensitive: send `password`, or confirm it first with POST /api/v1/me/confirm-password (it then covers ' +
  'this session for PASSWORD_CONFIRM_MINUTES, 180 by default). Signing in does not count as a confirmation.';

const wrong = () =>
  new AppError(422, 'validation_failed', 'The password is not correct.', { password: ['is not correct'] });

export async function confirmPassword(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  password: unknown,
): Promise<void> {
  if (password === undefined || password === null || password === '') {
    if (passwordRecentlyConfirmed(a, session)) return;
    throw new AppError(422, 'validation_failed', 'Confirm your password to do this.', {
      password: ['is required to confirm it is you'],
    });
  }
  if (typeof password !== 'string' || !(await checkPassword(user.password, password)).ok) throw wrong();
  if (session) await markPasswordConfirmed(a, session.id);
}

/** Opens the confirmation window of this session (POST /me/confirm-password); a token client has none to open. */
export async function openConfirmationWindow(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  body: Body,
): Promise<void> {
  if (!session)
    throw new AppError(
      409,
      'no_session',
      'Password confirmation is kept on a browser session; token clients send password with each call.',
    );
  const bag = new FieldErrorBag();
  const password = text(body, 'password', bag);
  bag.throwIfAny();
  await confirmPassword(a, user, session, password);
}
