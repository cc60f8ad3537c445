// Personal access tokens: `lb_` and 256 random bits, shown once, stored as a
// SHA-256 hash, named, revocable, with the time of last use. A token may be
// limited to some abilities (what each route needs is said in
// src/http/access.ts) and may expire; its owner is mailed a week before.
import type { Selectable } from 'kysely';
import { readsByKeyBeatAJoin } from '../db/dialect.ts';
import { runPrepared } from '../db/prepared.ts';
import { logEvent } from '../records/change-log.ts';
import type { PersonalAccessTokensTable } from '../db/tables.ts';
import { AppError, type FieldErrorBag } from '../errors.ts';
import { parseDateTime } from '../schema/values.ts';
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

/** What a token may be allowed: reading, and each kind of change. A session may do all four. */
export const TOKEN_ABILITIES = ['read', 'create', 'update', 'delete'] as const;
export type TokenAbility = (typeof TOKEN_ABILITIES)[number];

export interface TokenInfo {
  id: bigint;
  name: string;
  abilities: TokenAbility[];
  created_at: string;
  last_used_at: string | null;
  /** Null: never. */
  expires_at: string | null;
}

/** What a new token may do and until when: all four and never unless said. */
export interface TokenLimits {
  abilities?: readonly TokenAbility[];
  expiresAt?: string | null;
}

const PREFIX = 'lb_';
const INFO_COLUMNS = ['id', 'name', 'abilities', 'created_at', 'last_used_at', 'expires_at'] as const;

/** The stored list (null: all four; something unreadable: none, so a damaged row grants nothing). */
function abilitiesOf(stored: string | null): TokenAbility[] {
  if (stored === null) return [...TOKEN_ABILITIES];
  try {
    const list: unknown = JSON.parse(stored);
    return TOKEN_ABILITIES.filter((t) => Array.isArray(list) && list.includes(t));
  } catch {
    return [];
  }
}

/** All four are stored as null, as the tokens made before abilities existed are. */
const storedAbilities = (abilities: readonly TokenAbility[]) =>
  abilities.length === TOKEN_ABILITIES.length
    ? null
    : JSON.stringify(TOKEN_ABILITIES.filter((t) => abilities.includes(t)));

function toInfo(row: Pick<Selectable<PersonalAccessTokensTable>, (typeof INFO_COLUMNS)[number]>): TokenInfo {
  return {
    id: BigInt(row.id),
    name: row.name,
    abilities: abilitiesOf(row.abilities),
    created_at: toIso(row.created_at)!,
    last_used_at: toIso(row.last_used_at),
    expires_at: toIso(row.expires_at),
  };
}

/** Whether an expiry (RFC 3339 or stored) has come. */
const hasPassed = (expiresAt: string | null) => expiresAt !== null && Date.parse(expiresAt) <= Date.now();

/**
 * Reads `abilities` (a non-empty list of the four; left out: all four) and `expires_at` (RFC 3339 or YYYY-MM-DD,
 * in the future; left out or null: never) of a request, each problem added to `bag` under its field's name.
 */
export function readTokenLimits(body: Record<string, unknown>, bag: FieldErrorBag): TokenLimits {
  const limits: TokenLimits = {};
  const { abilities, expires_at: expiresAt } = body;
  if (abilities !== undefined) {
    const unknown = Array.isArray(abilities)
      ? abilities.filter((a) => !TOKEN_ABILITIES.includes(a as TokenAbility))
      : [];
    if (!Array.isArray(abilities) || abilities.length === 0)
      bag.add('abilities', `must be a non-empty list of ${TOKEN_ABILITIES.join(', ')}`);
    else if (unknown.length)
      bag.add(
        'abilities',
        // What was sent is echoed short: a message is no place for a megabyte of it.
        `must each be one of ${TOKEN_ABILITIES.join(', ')}; not ${unknown
          .slice(0, 3)
          // A 64-bit integer arrives as a BigInt, which JSON.stringify refuses: its digits then.
          .map((u) => JSON.stringify(u, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))?.slice(0, 30))
          .join(', ')}`,
      );
    else limits.abilities = TOKEN_ABILITIES.filter((t) => abilities.includes(t));
  }
  if (expiresAt !== undefined && expiresAt !== null && expiresAt !== '') {
    const parsed = parseDateTime(expiresAt);
    if (!parsed.ok) bag.add('expires_at', parsed.message);
    else if (hasPassed(parsed.value)) bag.add('expires_at', 'must be in the future');
    else limits.expiresAt = parsed.value;
  }
  return limits;
}

/**
 * A token that makes a token gives no more than it holds: no ability it lacks, no later expiry (else a leaked
 * read-only or short-lived token would be a way to a lasting full one). `caller`: the request's token, if one.
 */
export function checkWithinCallersToken(
  caller: { abilities: readonly TokenAbility[]; expiresAt: string | null } | undefined,
  limits: TokenLimits,
): void {
  if (!caller) return;
  const lacking = (limits.abilities ?? TOKEN_ABILITIES).filter((t) => !caller.abilities.includes(t));
  if (lacking.length)
    throw new AppError(
      403,
      'missing_ability',
      `This access token lacks ${lacking.join(', ')}: a token it makes may have only its own abilities ` +
        `(${caller.abilities.join(', ')}).`,
    );
  const { expiresAt } = caller;
  if (expiresAt && (!limits.expiresAt || Date.parse(limits.expiresAt) > Date.parse(expiresAt)))
    throw new AppError(422, 'validation_failed', 'A token made with an access token expires no later than it.', {
      expires_at: [`must be at most ${expiresAt}, when this access token expires`],
    });
}

export async function createToken(
  a: Accounts,
  userId: bigint,
  name: string,
  via: Via,
  limits: TokenLimits = {},
): Promise<{ token: string; info: TokenInfo }> {
  const token = PREFIX + randomToken();
  const row = await a.database.db.transaction().execute(async (trx) => {
    const made = await trx
      .insertInto('personal_access_tokens')
      .values({
        user_id: userId,
        name,
        token_hash: sha256(token),
        created_at: nowIso(),
        abilities: storedAbilities(limits.abilities ?? TOKEN_ABILITIES),
        expires_at: limits.expiresAt ?? null,
      })
      .returning(INFO_COLUMNS)
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
  limits: TokenLimits = {},
) {
  await confirmPassword(a, user, session, password);
  return createToken(a, user.id, name, via, limits);
}

/**
 * A token for a program that signs in with email and password (and the second factor, when on, in the same
 * request): counted as a sign-in, under the same key as the sign-in page's and the API login's.
 */
export async function createTokenWithPassword(
  a: Accounts,
  knock: Knock,
  input: { email: string; password: string; deviceName: string; code?: string; recoveryCode?: string },
  limits: TokenLimits = {},
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
  const { token } = await createToken(a, user.id, input.deviceName, knock.via, limits);
  return { token, user };
}

/** A bearer token that was found: whose, and what it may do. */
export interface TokenUser {
  tokenId: bigint;
  user: UserRow;
  abilities: readonly TokenAbility[];
  expiresAt: string | null;
}

const TOKEN_COLUMNS = ['id', 'user_id', 'last_used_at', 'abilities', 'expires_at'] as const;

/** A token's row and its user's (it runs on every API request): joined, or read by key where that costs less. */
async function tokenRow(db: Accounts['database']['db'], hash: string) {
  if (readsByKeyBeatAJoin(db)) {
    const [token] = await runPrepared(
      db,
      TOKEN_COLUMNS,
      'token by hash',
      () => db.selectFrom('personal_access_tokens').select(TOKEN_COLUMNS).where('token_hash', '=', hash),
      [hash],
    );
    if (!token) return undefined;
    const byId = () => db.selectFrom('users').selectAll().where('id', '=', token.user_id);
    const [user] = await runPrepared(db, TOKEN_COLUMNS, 'user by id', byId, [token.user_id]);
    return user ? { token, user } : undefined;
  }
  const [row] = await runPrepared(
    db,
    TOKEN_COLUMNS,
    'token and user by hash',
    () =>
      db
        .selectFrom('personal_access_tokens as t')
        .innerJoin('users', 'users.id', 't.user_id')
        .selectAll('users')
        .select([
          't.id as token_id',
          't.user_id as token_user_id',
          't.last_used_at as token_last_used_at',
          't.abilities as token_abilities',
          't.expires_at as token_expires_at',
        ])
        .where('t.token_hash', '=', hash),
    [hash],
  );
  if (!row) return undefined;
  const { token_id, token_user_id, token_last_used_at, token_abilities, token_expires_at, ...user } = row;
  const token = {
    id: token_id,
    user_id: token_user_id,
    last_used_at: token_last_used_at,
    abilities: token_abilities,
    expires_at: token_expires_at,
  };
  return { token, user };
}

/** The auth epoch: moved by triggers, in the same transaction, by every change a token read relies on (T0007). */
async function authEpoch(db: Accounts['database']['db']): Promise<string | undefined> {
  const build = () => db.selectFrom('auth_epoch').select('n').where('id', '=', 1);
  const [row] = await runPrepared(db, TOKEN_COLUMNS, 'auth epoch', build, [1]);
  return row && String(row.n);
}

type FoundToken = NonNullable<Awaited<ReturnType<typeof tokenRow>>>;

/** Tokens read lately, by hash, per database, with the auth epoch read before them. */
const recentTokens = new WeakMap<object, Map<string, { epoch: string; found: FoundToken }>>();
/** Past this many tokens the memory is emptied and refilled as they come again. */
const RECENT_TOKENS = 10_000;

/**
 * A token's row and its user's, from memory while the auth epoch has not moved since they were read (one read of one
 * row instead of theirs: a read by id takes a tenth less CPU); read again otherwise. The epoch is read first, so rows
 * kept under it are at least as new as it: a revoked token, a deactivated user or a changed role moves it, in its
 * own transaction, and the next request on every process reads the rows again. A token not found is not kept.
 * `unconfirmed`: rows kept in memory are answered with the epoch they were kept under and no read at all; the caller's
 * own statement reads the epoch, and its answer stands only if the epoch is that one (src/http/auth.ts).
 */
async function recentTokenRow(
  db: Accounts['database']['db'],
  hash: string,
  unconfirmed: boolean,
): Promise<{ found: FoundToken; unconfirmedEpoch?: string } | undefined> {
  const recent = recentTokens.get(db) ?? new Map();
  recentTokens.set(db, recent);
  const kept = recent.get(hash);
  if (kept && unconfirmed) return { found: kept.found, unconfirmedEpoch: kept.epoch };
  const epoch = await authEpoch(db);
  if (epoch === undefined) {
    const found = await tokenRow(db, hash);
    return found && { found };
  }
  if (kept?.epoch === epoch) return { found: kept.found };
  const found = await tokenRow(db, hash);
  if (recent.size >= RECENT_TOKENS) recent.clear();
  if (found) recent.set(hash, { epoch, found });
  else recent.delete(hash);
  return found && { found };
}

/**
 * The user a bearer token belongs to, or null. An expired token is refused with a 401 that says so (its owner can
 * tell it from a typo). Last use is recorded at most once a minute. `unconfirmed`: see recentTokenRow; the answer's
 * `unconfirmedEpoch` says it came from memory unread.
 */
export async function findTokenUser(
  a: Accounts,
  token: string,
  options: { unconfirmed?: boolean } = {},
): Promise<(TokenUser & { unconfirmedEpoch?: string }) | null> {
  if (!token.startsWith(PREFIX) || token.length > 100) return null;
  const recent = await recentTokenRow(a.database.db, sha256(token), options.unconfirmed === true);
  if (!recent) return null;
  const { found, unconfirmedEpoch } = recent;
  const expiresAt = toIso(found.token.expires_at);
  if (hasPassed(expiresAt))
    throw new AppError(401, 'unauthenticated', `The access token expired at ${expiresAt}; make a new one.`);
  const lastUsed = toIso(found.token.last_used_at);
  if (!lastUsed || Date.now() - Date.parse(lastUsed) > 60_000) {
    const now = nowIso();
    await a.database.db
      .updateTable('personal_access_tokens')
      .set({ last_used_at: now })
      .where('id', '=', found.token.id)
      .execute();
    found.token.last_used_at = now;
  }
  return {
    tokenId: BigInt(found.token.id),
    user: toUserRow(found.user),
    abilities: abilitiesOf(found.token.abilities),
    expiresAt,
    ...(unconfirmedEpoch === undefined ? {} : { unconfirmedEpoch }),
  };
}

export async function listTokens(a: Accounts, userId: bigint): Promise<TokenInfo[]> {
  const rows = await a.database.db
    .selectFrom('personal_access_tokens')
    .select(INFO_COLUMNS)
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
