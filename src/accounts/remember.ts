// "Remember me": a long-lived cookie bound to the user's remember_token. The
// cookie carries the user id, its own end, and an HMAC over both and the
// current remember_token under the app key; replacing remember_token (sign-out,
// password change) invalidates every such cookie at once.
import type { Accounts } from './context.ts';
import { hmac, randomToken, safeEqual } from './secrets.ts';
import { findUserById, idFromText, setUserColumns, type UserRow } from './store.ts';

function sign(a: Accounts, userId: bigint, expires: number, rememberToken: string): string {
  return hmac(a.key.signing, `remember|${userId}|${expires}|${rememberToken}`);
}

/** A cookie value for the user, creating the user's remember_token if there is none. */
export async function rememberCookieFor(a: Accounts, user: UserRow): Promise<{ value: string; maxAgeSeconds: number }> {
  let token = user.remember_token;
  if (!token) {
    token = randomToken();
    await setUserColumns(a.database.db, user.id, { remember_token: token });
  }
  const maxAgeSeconds = a.config.rememberDays * 86_400;
  const expires = Math.floor(Date.now() / 1000) + maxAgeSeconds;
  return { value: `${user.id}.${expires}.${sign(a, user.id, expires, token)}`, maxAgeSeconds };
}

/** The user a remember cookie stands for, or null when it is malformed, expired or revoked. */
export async function userFromRememberCookie(a: Accounts, value: string): Promise<UserRow | null> {
  const match = /^(\d{1,19})\.(\d{1,12})\.([\w-]{43})$/.exec(value);
  if (!match) return null;
  const [, rawId, expires, signature] = match;
  const id = idFromText(rawId!);
  if (id === null || Number(expires) * 1000 <= Date.now()) return null;
  const user = await findUserById(a.database.db, id);
  if (!user?.remember_token) return null;
  return safeEqual(sign(a, user.id, Number(expires), user.remember_token), signature!) ? user : null;
}

/** Invalidates every remember cookie of the user. */
export async function forgetRememberedDevices(a: Accounts, userId: bigint): Promise<void> {
  await setUserColumns(a.database.db, userId, { remember_token: null });
}
