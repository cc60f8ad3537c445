// The original service's two-factor data, after a takeover (LARAVEL_APP_KEY): Fortify's secrets and recovery codes,
// sealed by Laravel's encrypter. Leadbook reads and spends them in Laravel's own formats, so that the original app,
// still running beside it (LARAVEL_COEXIST), agrees: a used recovery code is replaced by a new one as Fortify does.
import type { Accounts } from './context.ts';
import { findRecoveryCode, laravelDecrypt, laravelEncrypt, parseAppKey, replaceRecoveryCode } from './laravel.ts';

const keys = new Map<string, Buffer>();

/** The original app's key, when LARAVEL_APP_KEY is set (parsed once; a key of no cipher's length throws). */
function laravelKey(a: Accounts): Buffer | null {
  const text = a.config.laravelAppKey;
  if (!text) return null;
  let key = keys.get(text);
  if (!key) {
    key = parseAppKey(text);
    keys.set(text, key);
  }
  return key;
}

/** Laravel's encrypter writes base64 of a JSON object; Leadbook's own sealed values are dotted. */
const isLaravelPayload = (stored: string) => stored.startsWith('eyJ');

/** The plain text of a value Laravel's encrypter sealed, or null (not such a value, or not this key's). */
export function openLaravelSecret(a: Accounts, stored: string | null): string | null {
  const key = laravelKey(a);
  if (!key || !stored || !isLaravelPayload(stored)) return null;
  try {
    return laravelDecrypt(stored, key);
  } catch {
    return null;
  }
}

/**
 * Spends one of Fortify's recovery codes: answers the new stored value, where the code is replaced by a fresh one
 * as Fortify's `replaceRecoveryCode` does (sealed, serialized, as Fortify's `encrypt()`), or null when the code is
 * not among them.
 */
export function spendLaravelRecoveryCode(a: Accounts, stored: string | null, given: string): string | null {
  const key = laravelKey(a);
  const codes = openLaravelSecret(a, stored);
  if (!key || codes === null) return null;
  const code = findRecoveryCode(codes, given.trim());
  if (code === null) return null;
  return laravelEncrypt(replaceRecoveryCode(codes, code), key, { serialize: true });
}
