// Laravel's secrets, read and written in Laravel's own formats, so Leadbook can take over a Laravel database
// (issue 17) and both apps can run side by side during the move: the Encrypter of Laravel 8 (the payloads behind
// Fortify's two_factor_secret and two_factor_recovery_codes), Fortify's recovery codes and Sanctum's tokens.
// The formats were learned from Illuminate\Encryption\Encrypter (8.83), laravel/fortify and laravel/sanctum; the
// primitives are node:crypto's. test/laravel/crypt.php runs the real Encrypter against this file.
import {
  type CipherGCMTypes,
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto';

export type LaravelCipher = 'AES-128-CBC' | 'AES-256-CBC' | 'AES-128-GCM' | 'AES-256-GCM';

interface CipherSpec {
  name: LaravelCipher;
  node: 'aes-128-cbc' | 'aes-256-cbc' | CipherGCMTypes;
  keyBytes: number;
  /** What openssl_cipher_iv_length() answers, which Laravel checks the payload's iv against. */
  ivBytes: number;
  /** GCM carries its own tag; CBC is authenticated by Laravel's HMAC. */
  aead: boolean;
}

const CIPHERS = new Map<string, CipherSpec>(
  (
    [
      ['AES-128-CBC', 16, 16, false],
      ['AES-256-CBC', 32, 16, false],
      ['AES-128-GCM', 16, 12, true],
      ['AES-256-GCM', 32, 12, true],
    ] as const
  ).map(([name, keyBytes, ivBytes, aead]) => [
    name,
    { name, node: name.toLowerCase() as CipherSpec['node'], keyBytes, ivBytes, aead },
  ]),
);

const GCM_TAG_BYTES = 16;

/** Canonical base64 only: every payload Laravel writes is, and anything else is not worth guessing at. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The cipher for a key: Laravel's `cipher` config when given (any case), else AES-256-CBC or AES-128-CBC by length. */
function cipherFor(key: Buffer, cipher: string | undefined, source: string): CipherSpec {
  if (cipher !== undefined) {
    const spec = CIPHERS.get(cipher.toUpperCase());
    if (!spec) throw new Error(`Unsupported Laravel cipher ${cipher}; supported: ${[...CIPHERS.keys()].join(', ')}`);
    if (key.length !== spec.keyBytes)
      throw new Error(`${source} is ${key.length} bytes, but ${spec.name} needs a ${spec.keyBytes}-byte key`);
    return spec;
  }
  const spec = CIPHERS.get(key.length === 16 ? 'AES-128-CBC' : 'AES-256-CBC')!;
  if (key.length !== spec.keyBytes)
    throw new Error(
      `${source} is ${key.length} bytes; Laravel's key is 32 bytes (AES-256-CBC, AES-256-GCM) ` +
        `or 16 bytes (AES-128-CBC, AES-128-GCM), written as base64:… (php artisan key:generate)`,
    );
  return spec;
}

/**
 * The key bytes of Laravel's APP_KEY, given as LARAVEL_APP_KEY: `base64:` and base64, or the raw key itself, as
 * Laravel's EncryptionServiceProvider reads it. Throws, naming LARAVEL_APP_KEY, when its length fits no cipher
 * (or not the `cipher` given).
 */
export function parseAppKey(text: string, options: { cipher?: string } = {}): Buffer {
  let key: Buffer;
  if (text.startsWith('base64:')) {
    const encoded = text.slice('base64:'.length).trim();
    if (!BASE64.test(encoded)) throw new Error('LARAVEL_APP_KEY: the text after base64: is not base64');
    key = Buffer.from(encoded, 'base64');
  } else {
    key = Buffer.from(text, 'utf8');
  }
  if (key.length === 0) throw new Error('LARAVEL_APP_KEY is empty; set it to the old app\u2019s APP_KEY');
  cipherFor(key, options.cipher, 'LARAVEL_APP_KEY');
  return key;
}

/** A payload that is not one, or was not made with this key, or was altered. */
export class LaravelDecryptError extends Error {
  override name = 'LaravelDecryptError';
}

function strictBase64(text: unknown): Buffer | null {
  return typeof text === 'string' && BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

function macOf(key: Buffer, iv: string, value: string): string {
  return createHmac('sha256', key)
    .update(iv + value)
    .digest('hex');
}

function equalInConstantTime(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** PHP's empty(): Laravel treats a missing, null, '' or '0' tag as no tag at all. */
const isEmptyTag = (tag: unknown) => tag === undefined || tag === null || tag === '' || tag === '0';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    // Laravel's strings are bytes; text that is not UTF-8 would be changed by reading it, so it is not read.
    throw new LaravelDecryptError('The decrypted text is not UTF-8');
  }
}

const SERIALIZED_STRING_HEAD = /^s:(\d{1,10}):"/;

// serialize() of anything but a string. Such a value is refused rather than read: objects above all, since
// unserializing them is how PHP applications get attacked, and nothing Fortify stores is anything but a string.
const OTHER_SERIALIZED: [RegExp, string][] = [
  [/^N;$/, 'null'],
  [/^b:[01];$/, 'boolean'],
  [/^i:[+-]?\d+;$/, 'integer'],
  [/^d:(?:[+-]?[\d.]+(?:E[+-]?\d+)?|NAN|-?INF);$/, 'float'],
  [/^a:\d+:\{[\s\S]*\}$/, 'array'],
  [/^[OC]:\d+:"[\s\S]*\}$/, 'object'],
  [/^E:\d+:"[\s\S]*";$/, 'enum'],
  [/^S:\d+:"[\s\S]*";$/, 'escaped string'],
  [/^[rR]:\d+;$/, 'reference'],
];

/** The plain text, with PHP's `s:N:"…";` taken off when it is a serialized string (N counts bytes, not characters). */
function unserializeString(plain: Buffer): string {
  const head = SERIALIZED_STRING_HEAD.exec(plain.subarray(0, 16).toString('latin1'));
  if (head) {
    const start = head[0].length;
    const end = start + Number(head[1]);
    if (plain.length !== end + 2 || plain[end] !== 0x22 || plain[end + 1] !== 0x3b)
      throw new LaravelDecryptError('The decrypted text looks like a PHP serialized string, but its length is wrong');
    return decodeUtf8(plain.subarray(start, end));
  }
  const text = decodeUtf8(plain);
  const other = OTHER_SERIALIZED.find(([shape]) => shape.test(text));
  if (other) throw new LaravelDecryptError(`Refusing a PHP serialized ${other[1]}: only strings are read`);
  return text;
}

function decipher(spec: CipherSpec, key: Buffer, iv: Buffer, value: Buffer, tag: Buffer | null): Buffer {
  if (spec.node === 'aes-128-cbc' || spec.node === 'aes-256-cbc') {
    const cbc = createDecipheriv(spec.node, key, iv);
    return Buffer.concat([cbc.update(value), cbc.final()]);
  }
  // GCM would accept a shortened tag. laravelDecrypt refuses one before this; the fixed length refuses one here too.
  const gcm = createDecipheriv(spec.node, key, iv, { authTagLength: GCM_TAG_BYTES });
  gcm.setAuthTag(tag ?? Buffer.alloc(0));
  return Buffer.concat([gcm.update(value), gcm.final()]);
}

function encipher(spec: CipherSpec, key: Buffer, iv: Buffer, plain: Buffer): { value: Buffer; tag: Buffer | null } {
  if (spec.node === 'aes-128-cbc' || spec.node === 'aes-256-cbc') {
    const cbc = createCipheriv(spec.node, key, iv);
    return { value: Buffer.concat([cbc.update(plain), cbc.final()]), tag: null };
  }
  const gcm = createCipheriv(spec.node, key, iv, { authTagLength: GCM_TAG_BYTES });
  const value = Buffer.concat([gcm.update(plain), gcm.final()]);
  return { value, tag: gcm.getAuthTag() };
}

/**
 * Decrypts what Laravel's Encrypter made with `encrypt()` or `encryptString()`: the MAC (CBC) or the tag (GCM) is
 * checked as Laravel checks it, and a serialized string is unwrapped, so both kinds answer the same plain text.
 * A plain text that itself reads as `s:N:"…";` is therefore unwrapped too; Fortify's values (a base32 secret, a
 * JSON list) never do. Throws LaravelDecryptError for a payload that is malformed, altered or made with another key.
 */
export function laravelDecrypt(payload: string, key: Buffer, cipher?: string): string {
  const spec = cipherFor(key, cipher, 'The Laravel key');
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    throw new LaravelDecryptError('The payload is invalid.');
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new LaravelDecryptError('The payload is invalid.');
  const { iv, value, mac, tag } = fields as Record<string, unknown>;
  const ivBytes = strictBase64(iv);
  const valueBytes = strictBase64(value);
  if (!ivBytes || !valueBytes || typeof mac !== 'string' || ivBytes.length !== spec.ivBytes)
    throw new LaravelDecryptError('The payload is invalid.');
  if (!spec.aead && !equalInConstantTime(macOf(key, iv as string, value as string), mac))
    throw new LaravelDecryptError('The MAC is invalid.');
  let tagBytes: Buffer | null = null;
  if (spec.aead) {
    tagBytes = strictBase64(tag);
    if (tagBytes?.length !== GCM_TAG_BYTES) throw new LaravelDecryptError('Could not decrypt the data.');
  } else if (!isEmptyTag(tag)) {
    throw new LaravelDecryptError('Unable to use tag because the cipher algorithm does not support AEAD.');
  }
  let plain: Buffer;
  try {
    plain = decipher(spec, key, ivBytes, valueBytes, tagBytes);
  } catch {
    throw new LaravelDecryptError('Could not decrypt the data.');
  }
  return unserializeString(plain);
}

/**
 * A payload Laravel's Encrypter decrypts: base64 of `{"iv","value","mac","tag"}` in Laravel 8's order, with
 * `serialize` as `encrypt()` (Fortify's columns) or without as `encryptString()`.
 */
export function laravelEncrypt(plain: string, key: Buffer, options: { serialize: boolean; cipher?: string }): string {
  const spec = cipherFor(key, options.cipher, 'The Laravel key');
  // A lone surrogate would silently become U+FFFD on the way to bytes.
  if (!plain.isWellFormed()) throw new Error('laravelEncrypt: the text has a lone surrogate');
  const text = Buffer.from(plain, 'utf8');
  const bytes = options.serialize ? Buffer.concat([Buffer.from(`s:${text.length}:"`), text, Buffer.from('";')]) : text;
  const ivBytes = randomBytes(spec.ivBytes);
  const sealed = encipher(spec, key, ivBytes, bytes);
  const iv = ivBytes.toString('base64');
  const value = sealed.value.toString('base64');
  // As Laravel: CBC has an HMAC of iv.value and an empty tag; GCM leaves the MAC empty and carries the tag.
  const fields = sealed.tag
    ? { iv, value, mac: '', tag: sealed.tag.toString('base64') }
    : { iv, value, mac: macOf(key, iv, value), tag: '' };
  // JSON.stringify leaves slashes alone, as Laravel's JSON_UNESCAPED_SLASHES does.
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64');
}

// Str::random() keeps the base64 of random bytes without '/', '+' and '=': its alphabet is these 62 characters.
// randomInt draws each one uniformly from node:crypto.
const RANDOM_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function strRandom(length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += RANDOM_ALPHABET[randomInt(RANDOM_ALPHABET.length)];
  return text;
}

/** A recovery code as Fortify's RecoveryCode::generate() makes one: ten characters, a dash, ten more. */
export function generateRecoveryCode(): string {
  return `${strRandom(10)}-${strRandom(10)}`;
}

/**
 * The stored code equal to `given` (the first, compared in constant time as Fortify's hash_equals does), or null.
 * `codesJsonPlain` is the decrypted two_factor_recovery_codes: a JSON list of codes.
 */
export function findRecoveryCode(codesJsonPlain: string, given: string): string | null {
  // Fortify does not look at an empty code.
  if (given === '') return null;
  let codes: unknown;
  try {
    codes = JSON.parse(codesJsonPlain);
  } catch {
    return null;
  }
  if (!Array.isArray(codes)) return null;
  return codes.find((code): code is string => typeof code === 'string' && equalInConstantTime(code, given)) ?? null;
}

/**
 * Fortify's replaceRecoveryCode: str_replace of the used code by a new one in the decrypted JSON text itself, so
 * the list keeps its order and the old app reads it as before. The caller encrypts the result with
 * `serialize: true`, as Fortify's encrypt() does.
 */
export function replaceRecoveryCode(
  codesJsonPlain: string,
  used: string,
  replacement = generateRecoveryCode(),
): string {
  // PHP 8's str_replace leaves the text alone for an empty search; split and join, unlike replaceAll, never reads
  // `$&` in the replacement as a pattern.
  return used === '' ? codesJsonPlain : codesJsonPlain.split(used).join(replacement);
}

export interface SanctumToken {
  /** The row's id; null for the old form without `id|`, which Sanctum finds by the hash alone. */
  id: bigint | null;
  secret: string;
}

const MAX_ID = 2n ** 64n - 1n;

/**
 * A Sanctum bearer token, `{id}|{secret}` or (as PersonalAccessToken::findToken also accepts) the secret alone;
 * null when it can be neither. The secret is everything after the first `|`, as PHP's explode(…, 2) leaves it.
 */
export function parseSanctumToken(bearer: string): SanctumToken | null {
  const bar = bearer.indexOf('|');
  if (bar === -1) return bearer === '' ? null : { id: null, secret: bearer };
  const id = bearer.slice(0, bar);
  const secret = bearer.slice(bar + 1);
  // Ids are BIGINT UNSIGNED. Laravel's find('007') finds row 7 (MySQL and SQLite compare it as a number), so
  // leading zeros are accepted too.
  if (!/^\d{1,20}$/.test(id) || BigInt(id) > MAX_ID || secret === '') return null;
  return { id: BigInt(id), secret };
}

/** What Sanctum stores in personal_access_tokens.token: SHA-256 of the secret, in hex. */
export function sanctumHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
