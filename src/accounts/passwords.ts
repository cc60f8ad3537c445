// Password hashing: argon2id at (at least) OWASP's parameters, computed on
// libuv's thread pool so the event loop keeps serving. Hashes from the original
// service (bcrypt, $2y$/$2b$) verify and are upgraded on the next sign-in.
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import { verify as verifyBcrypt } from '@node-rs/bcrypt';
import { dictionary } from '@zxcvbn-ts/language-common';

// Algorithm is an ambient const enum; 2 is Argon2id.
const ARGON2 = { algorithm: 2 as Algorithm, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 };

export function hashPassword(plain: string): Promise<string> {
  return hash(plain, ARGON2);
}

export interface PasswordCheck {
  ok: boolean;
  /** The stored hash is of an older kind and should be replaced. */
  needsRehash: boolean;
}

// A valid hash of a random password: checking it costs what checking a real one
// does, so an unknown email answers as slowly as a wrong password.
let decoy: Promise<string> | undefined;

export async function checkPassword(stored: string | null | undefined, plain: string): Promise<PasswordCheck> {
  if (!stored) {
    await verify((await (decoy ??= hashPassword(crypto.randomUUID()))), plain).catch(() => false);
    return { ok: false, needsRehash: false };
  }
  try {
    if (/^\$2[aby]\$/.test(stored)) return { ok: await verifyBcrypt(plain, stored), needsRehash: true };
    if (stored.startsWith('$argon2')) {
      const ok = await verify(stored, plain);
      const weaker = !stored.startsWith('$argon2id$') || !/m=(\d+),t=(\d+)/.test(stored) ||
        Number(/m=(\d+)/.exec(stored)![1]) < ARGON2.memoryCost || Number(/t=(\d+)/.exec(stored)![1]) < ARGON2.timeCost;
      return { ok, needsRehash: ok && weaker };
    }
  } catch {
    // A malformed stored hash matches nothing.
  }
  return { ok: false, needsRehash: false };
}

const common = new Set(dictionary.passwords.map((p) => p.toLowerCase()));

export const PASSWORD_RULES = { min: 8, max: 255 };

/** Problems with a new password, as field messages; none when it is acceptable. */
export function passwordProblems(plain: string): string[] {
  const length = [...plain].length;
  if (length < PASSWORD_RULES.min) return [`must be at least ${PASSWORD_RULES.min} characters`];
  if (length > PASSWORD_RULES.max) return [`must be at most ${PASSWORD_RULES.max} characters`];
  if (common.has(plain.toLowerCase())) return ['is one of the most common passwords; choose another'];
  return [];
}

export const commonPasswordCount = common.size;
