// Keys, tokens and hashes. Everything here uses node:crypto's primitives as
// documented; nothing is invented.
import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface AppKey {
  /** AES-256-GCM key for secrets at rest (the TOTP secret). */
  encryption: Buffer;
  /** HMAC key for signed links and remember-me cookies. */
  signing: Buffer;
}

function deriveKeys(master: Buffer): AppKey {
  // Separate keys per purpose, so a signature can never double as a ciphertext key.
  const derive = (purpose: string) => createHmac('sha256', master).update(purpose).digest();
  return { encryption: derive('leadbook encryption v1'), signing: derive('leadbook signing v1') };
}

function parseKey(text: string, source: string): Buffer {
  const key = Buffer.from(text.trim().replace(/^base64:/, ''), 'base64');
  if (key.length !== 32)
    throw new Error(`${source} must be 32 bytes in base64 (generate one with: openssl rand -base64 32)`);
  return key;
}

/** APP_KEY from the environment, else `dataDir/app.key`, created once with mode 0600. */
export function loadAppKey(appKey: string | undefined, dataDir: string): AppKey {
  if (appKey) return deriveKeys(parseKey(appKey, 'APP_KEY'));
  const file = path.join(dataDir, 'app.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return deriveKeys(parseKey(fs.readFileSync(file, 'utf8'), file));
}

/** A URL-safe random secret: 32 bytes, 256 bits. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

export function hmac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** AES-256-GCM: `v1.iv.tag.ciphertext`, each base64url. */
export function encrypt(key: AppKey, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.encryption, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** The plain text, or null when the value was not made with this key (or was altered). */
export function decrypt(key: AppKey, sealed: string): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.encryption, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
