// Sensitive changes need the password: sent with the request, or confirmed on
// this session within the configured window (the web app asks once).
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { checkPassword } from './passwords.ts';
import { markPasswordConfirmed, passwordRecentlyConfirmed, type Session } from './sessions.ts';
import type { UserRow } from './store.ts';

const wrong = () => new AppError(422, 'validation_failed', 'The password is not correct.', { password: ['is not correct'] });

export async function confirmPassword(a: Accounts, user: UserRow, session: Session | undefined, password: unknown): Promise<void> {
  if (password === undefined || password === null || password === '') {
    if (passwordRecentlyConfirmed(a, session)) return;
    throw new AppError(422, 'validation_failed', 'Confirm your password to do this.', { password: ['is required to confirm it is you'] });
  }
  if (typeof password !== 'string' || !(await checkPassword(user.password, password)).ok) throw wrong();
  if (session) await markPasswordConfirmed(a, session.id);
}
