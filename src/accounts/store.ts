// Reads and writes of account rows, including the hidden columns the records
// API never selects. Values read back are made uniform through the field kinds.
import { type Selectable, type Updateable, sql } from 'kysely';
import type { Executor, UsersTable } from '../db/tables.ts';
import { rowToRecord } from '../records/repository.ts';
import { user } from '../resources/user.ts';
import type { Role } from '../schema/roles.ts';
import { kinds } from '../schema/kinds.ts';

export interface UserRow {
  id: bigint;
  name: string;
  email: string;
  password: string;
  role: Role;
  email_verified_at: string | null;
  two_factor_secret: string | null;
  two_factor_recovery_codes: string | null;
  two_factor_confirmed_at: string | null;
  remember_token: string | null;
  [field: string]: unknown;
}

export const nowIso = () => new Date().toISOString();
export const toIso = (v: unknown) => kinds.dateTime.fromDb(v ?? null) as string | null;

const MAX_ID = 2n ** 63n - 1n;

/**
 * A row id from text a client sent (a path segment, a cookie): a positive
 * 64-bit integer, or null. Nineteen digits can pass 2^63 - 1, which neither
 * database takes as a parameter: such an id names no row, it is no error.
 */
export function idFromText(text: string): bigint | null {
  if (!/^\d{1,19}$/.test(text)) return null;
  const id = BigInt(text);
  return id >= 1n && id <= MAX_ID ? id : null;
}
export const fromDbBool = (v: unknown) => kinds.boolean.fromDb(v ?? null) === true;

export function toUserRow(row: Selectable<UsersTable>): UserRow {
  return {
    ...row,
    id: BigInt(row.id),
    email_verified_at: toIso(row.email_verified_at),
    two_factor_confirmed_at: toIso(row.two_factor_confirmed_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | null> {
  // No stored address holds NUL or a lone surrogate (each was checked on the way in), and
  // PostgreSQL refuses NUL even as a parameter: such a text names nobody.
  if (email.includes('\u0000') || !email.isWellFormed()) return null;
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
  return row ? toUserRow(row) : null;
}

export async function findUserById(db: Executor, id: bigint): Promise<UserRow | null> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toUserRow(row) : null;
}

/** Writes columns of a user (hidden ones included) and moves updated_at. */
export async function setUserColumns(db: Executor, id: bigint, values: Updateable<UsersTable>): Promise<void> {
  await db
    .updateTable('users')
    .set({ ...values, updated_at: nowIso() })
    .where('id', '=', id)
    .execute();
}

/** Makes sure the user has a row of account state (failures, the last TOTP step), created empty on first need. */
export async function ensureAccountState(db: Executor, userId: bigint): Promise<void> {
  await db
    .insertInto('account_states')
    .values({ user_id: userId })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db.selectFrom('users').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many active admins there are. */
export async function countAdmins(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select(sql<number>`count(*)`.as('n'))
    .where('role', '=', 'admin')
    .where(sql<boolean>`active = true`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user as the API shows it: visible fields and computed ones, never a secret. */
export function publicUser(row: Record<string, unknown>): Record<string, unknown> {
  return rowToRecord(user, row);
}
