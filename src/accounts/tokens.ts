// Personal access tokens: `lb_` and 256 random bits, shown once, stored as a
// SHA-256 hash, named, revocable, with the time of last use.
import type { Selectable } from 'kysely';
import { logEvent } from '../records/change-log.ts';
import type { PersonalAccessTokensTable } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { confirmPassword } from './confirm-password.ts';
import type { Accounts } from './context.ts';
import type { Via } from '../records/context.ts';
import { randomToken, sha256 } from './secrets.ts';
import { passSecondFactor } from './second-factor.ts';
import type { Session } from './sessions.ts';
import { hasTwoFactor, signInWithPassword } from './sign-in.ts';
import { codeRefusal } from './two-factor.ts';
import type { Knock } from './limits.ts';
import { nowIso, toIso, toUserRow, type UserRow } from './store.ts';

export interface TokenInfo {
  id: bigint;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

const PREFIX = 'lb_';

function toInfo(
  row: Pick<Selectable<PersonalAccessTokensTable>, 'id' | 'name' | 'created_at' | 'last_used_at'>,
): TokenInfo {
  return {
    id: BigInt(row.id),
    name: row.name,
    created_at: toIso(row.created_at)!,
    last_used_at: toIso(row.last_used_at),
  };
}

export async function createToken(
  a: Accounts,
  userId: bigint,
  name: string,
  via: Via,
): Promise<{ token: string; info: TokenInfo }> {
  const token = PREFIX + randomToken();
  const row = await a.database.db.transaction().execute(async (trx) => {
    const made = await trx
      .insertInto('personal_access_tokens')
      .values({ user_id: userId, name, token_hash: sha256(token), created_at: nowIso() })
      .returning(['id', 'name', 'created_at', 'last_used_at'])
      .executeTakeFirstOrThrow();
    await logEvent(trx, 'token_created', userId, userId, via);
    return made;
  });
  return { token, info: toInfo(row) };
}

/** A token the signed-in user makes for themself: a new way into the account, so it takes the password. */
export async function createOwnToken(
  a: Accounts,
  user: UserRow,
  session: Session | undefined,
  name: string,
  password: unknown,
  via: Via,
) {
  await confirmPassword(a, user, session, password);
  return createToken(a, user.id, name, via);
}

/**
 * A token for a program that signs in with email and password (and the second factor, when on, in the same
 * request): counted as a sign-in, under the same key as the sign-in page's and the API login's.
 */
export async function createTokenWithPassword(
  a: Accounts,
  knock: Knock,
  input: { email: string; password: string; deviceName: string; code?: string; recoveryCode?: string },
): Promise<{ token: string; user: UserRow }> {
  const user = await signInWithPassword(a, knock, input.email, input.password, async (found) => {
    if (!hasTwoFactor(found)) return;
    if (!input.code && !input.recoveryCode)
      throw new AppError(
        401,
        'two_factor_required',
        'This account uses two-factor authentication: send code or recovery_code too.',
      );
    const check = await passSecondFactor(a, found, input);
    if (check !== 'accepted')
      throw new AppError(401, 'two_factor_invalid', `The two-factor code ${codeRefusal(check)}.`);
  });
  const { token } = await createToken(a, user.id, input.deviceName, knock.via);
  return { token, user };
}

/**
 * The user a bearer token belongs to, read with the token in one query (it
 * runs on every API request), or null. Last use is recorded at most once a minute.
 */
export async function findTokenUser(a: Accounts, token: string): Promise<{ tokenId: bigint; user: UserRow } | null> {
  if (!token.startsWith(PREFIX) || token.length > 100) return null;
  const row = await a.database.db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users', 'users.id', 't.user_id')
    .selectAll('users')
    .select(['t.id as token_id', 't.last_used_at as token_last_used_at'])
    .where('t.token_hash', '=', sha256(token))
    .executeTakeFirst();
  if (!row) return null;
  const { token_id: tokenId, token_last_used_at: tokenLastUsed, ...user } = row;
  const lastUsed = toIso(tokenLastUsed);
  if (!lastUsed || Date.now() - Date.parse(lastUsed) > 60_000) {
    await a.database.db
      .updateTable('personal_access_tokens')
      .set({ last_used_at: nowIso() })
      .where('id', '=', tokenId)
      .execute();
  }
  return { tokenId: BigInt(tokenId), user: toUserRow(user) };
}

export async function listTokens(a: Accounts, userId: bigint): Promise<TokenInfo[]> {
  const rows = await a.database.db
    .selectFrom('personal_access_tokens')
    .select(['id', 'name', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toInfo);
}

/** Revokes one of the user's own tokens; false when the user has no such token. */
export async function revokeToken(a: Accounts, userId: bigint, tokenId: bigint, via: Via): Promise<boolean> {
  return a.database.db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('personal_access_tokens')
      .where('id', '=', tokenId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) return false;
    await logEvent(trx, 'token_revoked', userId, userId, via);
    return true;
  });
}
