// Creating accounts: the very first one is an admin (that is how a new
// install gets its owner); later ones only when REGISTRATION=open, as agents.
import type { Database } from '../db/connection.ts';
import { AppError } from '../errors.ts';
import { createRecord } from '../records/operations.ts';
import { user } from '../resources/user.ts';
import type { Role } from '../schema/roles.ts';
import type { Accounts } from './context.ts';
import { countUsers, findUserById, type UserRow } from './store.ts';

const SYSTEM = { id: 0n, role: 'admin' as const };

/**
 * What a person fills in to register: only what an account needs (first and last name and the rest of the profile
 * come later, on /profile).
 */
export const REGISTER_FIELDS = ['name', 'email', 'password'] as const;

/** Creates a user through the records operation (same rules and validation), as the given role. */
export async function createUser(database: Database, body: Record<string, unknown>, role: Role): Promise<UserRow> {
  const { record } = await createRecord({ database, actor: SYSTEM }, user, { ...body, role });
  return (await findUserById(database.db, BigInt(record.id as bigint)))!;
}

export async function registerUser(a: Accounts, body: unknown): Promise<UserRow> {
  const first = (await countUsers(a.database.db)) === 0;
  if (!first && !a.config.registrationOpen)
    throw new AppError(403, 'registration_closed', 'Registration is closed; ask an admin for an account.');
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError(422, 'validation_failed', 'The request body must be a JSON object.');
  if ('role' in body)
    throw new AppError(422, 'validation_failed', 'Only an admin can set a role.', { role: ['is set by an admin'] });
  // Only an admin's create may leave the password out (an invitation); a person registering chooses one now.
  if (!('password' in body))
    throw new AppError(422, 'validation_failed', 'Choose a password.', { password: ['is required'] });
  return createUser(a.database, body as Record<string, unknown>, first ? 'admin' : 'agent');
}
