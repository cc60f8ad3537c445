// TOTP (RFC 6238) as every authenticator app speaks it: 6 digits, 30-second
// steps, SHA-1, one step of drift either way. A step accepted once is stored
// per user, and no code at or before it is accepted again (no replay), which
// also holds across app processes because the check-and-set is one UPDATE.
import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Accounts } from './context.ts';
import { openLaravelSecret } from './laravel-accounts.ts';
import { decrypt, encrypt, safeEqual } from './secrets.ts';
import { ensureAccountState } from './store.ts';

const PERIOD_SECONDS = 30;
const DRIFT_STEPS = 1;
export const RECOVERY_CODE_COUNT = 8;

function totp(secretBase32: string, label = 'Leadbook'): TOTP {
  return new TOTP({
    issuer: 'Leadbook',
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

export interface NewSecret {
  secret: string;
  sealed: string;
  otpauthUrl: string;
  qrSvg: string;
}

/** A fresh 160-bit secret, its otpauth:// URL and QR code, and its sealed (encrypted) form for storage. */
export async function newSecret(a: Accounts, email: string): Promise<NewSecret> {
  const secret = new Secret({ size: 20 }).base32;
  const otpauthUrl = totp(secret, email).toString();
  const { default: QRCode } = await import('qrcode');
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, sealed: encrypt(a.key, secret), otpauthUrl, qrSvg };
}

/** What became of a code: `used` is a right code whose step was already spent (say so: the user only has to wait). */
export type CodeCheck = 'accepted' | 'used' | 'invalid';

/** The field message for a refused code. */
export const codeRefusal = (check: CodeCheck): string =>
  check === 'used'
    ? 'was already used; wait for the next code from your app (a new one appears every 30 seconds)'
    : 'is not valid';

/**
 * Accepts a code once: finds the step it belongs to (±1 step), then records
 * that step only if it is later than the last accepted one. `used` for a code
 * of a step already spent (a replay, or the code that just confirmed the app).
 */
export async function acceptCode(
  a: Accounts,
  userId: bigint,
  sealedSecret: string | null,
  code: string,
  now = Date.now(),
): Promise<CodeCheck> {
  if (!sealedSecret || !/^\d{6}$/.test(code)) return 'invalid';
  // A secret the original Laravel app sealed (after a takeover) works as Leadbook's own.
  const secret = decrypt(a.key, sealedSecret) ?? openLaravelSecret(a, sealedSecret);
  if (!secret) return 'invalid';
  const delta = totp(secret).validate({ token: code, timestamp: now, window: DRIFT_STEPS });
  if (delta === null) return 'invalid';
  const step = Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
  const { db } = a.database;
  await ensureAccountState(db, userId);
  const result = await db
    .updateTable('account_states')
    .set({ totp_last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? 'accepted' : 'used';
}

const hashCode = (code: string) => createHash('sha256').update(normalizeRecoveryCode(code)).digest('hex');

export function normalizeRecoveryCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z2-7]/g, '');
}

/** Eight codes of 120 random bits each (base32, in groups of four), and their stored form (SHA-256 hashes). */
export function newRecoveryCodes(): { codes: string[]; stored: string } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    new Secret({ size: 15 }).base32.match(/.{4}/g)!.join('-'),
  );
  return { codes, stored: JSON.stringify(codes.map(hashCode)) };
}

/** Uses up a recovery code: the stored set without it, or null when it is not in the set. */
export function spendRecoveryCode(stored: string | null, code: string): string | null {
  if (!stored) return null;
  let hashes: unknown;
  try {
    hashes = JSON.parse(stored);
  } catch {
    return null;
  }
  if (!Array.isArray(hashes)) return null;
  const wanted = hashCode(code);
  const index = hashes.findIndex((h) => typeof h === 'string' && safeEqual(h, wanted));
  if (index < 0) return null;
  return JSON.stringify(hashes.filter((_, i) => i !== index));
}

export async function forgetTotpStep(a: Accounts, userId: bigint): Promise<void> {
  await a.database.db
    .updateTable('account_states')
    .set({ totp_last_step: null })
    .where('user_id', '=', userId)
    .execute();
}
