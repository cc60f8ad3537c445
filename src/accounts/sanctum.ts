// The original service's Sanctum tokens, after a takeover (LARAVEL_APP_KEY): bearer tokens `{id}|{secret}` kept in
// its `personal_access_tokens` table (Leadbook's own tokens are in `leadbook_personal_access_tokens` on MariaDB) work
// as they did, with their abilities read as Leadbook's.
import { sql } from 'kysely';
import { AppError } from '../errors.ts';
import type { Accounts } from './context.ts';
import { parseSanctumToken, sanctumHash } from './laravel.ts';
import { safeEqual } from './secrets.ts';
import { findUserById, nowIso, toIso } from './store.ts';
import { TOKEN_ABILITIES, type TokenAbility, type TokenUser } from './tokens.ts';

/** Sanctum's abilities as Leadbook's: `*` is every one; `read`, `contacts:read`, `view`… are read, and so on. */
export function sanctumAbilities(stored: string | null): TokenAbility[] {
  let list: unknown;
  try {
    list = JSON.parse(stored ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  if (list.includes('*')) return [...TOKEN_ABILITIES];
  const verbs: Record<string, TokenAbility> = {
    read: 'read',
    view: 'read',
    list: 'read',
    show: 'read',
    create: 'create',
    store: 'create',
    update: 'update',
    edit: 'update',
    delete: 'delete',
    destroy: 'delete',
  };
  const mapped = new Set(
    list.flatMap((ability) => {
      const verb = typeof ability === 'string' ? ability.split(/[:.]/).at(-1)!.toLowerCase() : '';
      return verbs[verb] ? [verbs[verb]] : [];
    }),
  );
  return TOKEN_ABILITIES.filter((ability) => mapped.has(ability));
}

// The original table, named as the database names it: the connection renames `personal_access_tokens` to Leadbook's
// own table on MariaDB, and renames no identifier given by sql.id.
const SANCTUM_TOKENS = sql.id('personal_access_tokens');

/**
 * The user a Sanctum token (`{id}|{secret}`) belongs to, when LARAVEL_APP_KEY says Leadbook moved into the original
 * database: the row with that id whose `token` is the SHA-256 of the secret, for a user (`tokenable_type` …User). An
 * expired token is refused with a 401 that says so; last use is recorded, as Sanctum records it.
 */
export async function findSanctumTokenUser(a: Accounts, bearer: string): Promise<TokenUser | null> {
  if (!a.config.laravelAppKey) return null;
  const parsed = parseSanctumToken(bearer);
  if (!parsed || parsed.id === null) return null;
  const { rows } = await sql<{
    id: string;
    token: string;
    abilities: string | null;
    expires_at: Date | string | null;
    tokenable_type: string;
    tokenable_id: string;
  }>`select id, token, abilities, expires_at, tokenable_type, tokenable_id from ${SANCTUM_TOKENS}
    where id = ${parsed.id}`.execute(a.database.db);
  const row = rows[0];
  if (!row || !/(^|\\)User$/.test(row.tokenable_type) || !safeEqual(row.token, sanctumHash(parsed.secret))) return null;
  const expiresAt = toIso(row.expires_at);
  if (expiresAt && Date.parse(expiresAt) <= Date.now())
    throw new AppError(401, 'unauthenticated', `The access token expired at ${expiresAt}; make a new one.`);
  const user = await findUserById(a.database.db, BigInt(row.tokenable_id));
  if (!user) return null;
  await sql`update ${SANCTUM_TOKENS} set last_used_at = ${nowIso()} where id = ${row.id}`.execute(a.database.db);
  return { tokenId: BigInt(row.id), user, abilities: sanctumAbilities(row.abilities), expiresAt };
}
