// Password hashing: argon2id at (at least) OWASP's parameters, computed on
// libuv's thread pool, below the event loop's priority, so that it keeps
// serving. Hashes from the original service (bcrypt, $2y$/$2b$) verify and are
// upgraded on the next sign-in; while the original app runs beside Leadbook
// (LARAVEL_COEXIST), new passwords are bcrypt, as Laravel writes them, and stay so.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { type Algorithm, hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';
import pLimit from 'p-limit';

// Each hash takes tens of milliseconds of one core. Run at most one fewer at a
// time than there are cores, so that a storm of sign-ins queues here instead
// of taking every core from the requests that need none (reads stay fast).
const limit = pLimit(Math.max(1, os.availableParallelism() - 1));
const hashing = <T>(work: () => Promise<T>) => limit(work).finally(lowerHashingThreads);

/**
 * The hashes run on libuv's threads (Node names them libuv-worker). On Linux each thread has a priority of its own:
 * once the first hash has run (the threads exist then), they are put below the thread that serves requests, so that
 * the CPU a storm of sign-ins takes is what the requests leave. A get by id's p99 while 10 clients signed in was 4×
 * its idle p99 with them at the same priority, and about 2× below it. Their other work (file reads) is not urgent.
 */
let lowered = false;
function lowerHashingThreads(): void {
  if (lowered || process.platform !== 'linux') return;
  lowered = true;
  for (const thread of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${thread}/comm`, 'latin1').trim() === 'libuv-worker')
        os.setPriority(Number(thread), 19);
    } catch {
      // A thread that ended, or a system that refuses: the hashes run as before.
    }
  }
}
const hash: typeof argon2Hash = (...args) => hashing(() => argon2Hash(...args));
const verify: typeof argon2Verify = (...args) => hashing(() => argon2Verify(...args));
const verifyBcrypt: typeof bcryptVerify = (...args) => hashing(() => bcryptVerify(...args));

// Algorithm is an ambient const enum; 2 is Argon2id.
const ARGON2 = { algorithm: 2 as Algorithm, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 };
/** Laravel's rounds since version 11 (8 had 10). */
const BCRYPT_COST = 12;

/** How new passwords are kept in this process: set once from the config (LARAVEL_COEXIST: bcrypt). */
let scheme: 'argon2id' | 'bcrypt' = 'argon2id';
export function keepPasswordsFor(config: { laravelCoexist: boolean }): void {
  scheme = config.laravelCoexist ? 'bcrypt' : 'argon2id';
}

export async function hashPassword(plain: string): Promise<string> {
  if (scheme === 'argon2id') return hash(plain, ARGON2);
  // $2b$ and PHP's $2y$ name the same algorithm; Laravel's hasher writes (and its `needsRehash` expects) $2y$.
  return (await hashing(() => bcryptHash(plain, BCRYPT_COST))).replace(/^\$2b\$/, '$2y$');
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
    decoy ??= hashPassword(crypto.randomUUID());
    await verify(await decoy, plain).catch(() => false);
    return { ok: false, needsRehash: false };
  }
  try {
    if (/^\$2[aby]\$/.test(stored)) {
      const ok = await verifyBcrypt(plain, stored);
      return { ok, needsRehash: ok && scheme !== 'bcrypt' };
    }
    if (stored.startsWith('$argon2')) {
      const ok = await verify(stored, plain);
      const weaker =
        scheme !== 'argon2id' ||
        !stored.startsWith('$argon2id$') ||
        !/m=(\d+),t=(\d+)/.test(stored) ||
        Number(/m=(\d+)/.exec(stored)![1]) < ARGON2.memoryCost ||
        Number(/t=(\d+)/.exec(stored)![1]) < ARGON2.timeCost;
      return { ok, needsRehash: ok && weaker };
    }
  } catch {
    // A malformed stored hash matches nothing.
  }
  return { ok: false, needsRehash: false };
}

// zxcvbn's 30,000 common passwords (3 MB of heap as a set) are read when a password is first chosen, not at start.
let common: Set<string> | undefined;
function commonPasswords(): Set<string> {
  if (!common) {
    const zxcvbn = createRequire(import.meta.url)('@zxcvbn-ts/language-common');
    common = new Set((zxcvbn as typeof import('@zxcvbn-ts/language-common')).dictionary.passwords.map(lower));
  }
  return common;
}
const lower = (p: string) => p.toLowerCase();

export const PASSWORD_RULES = { min: 8, max: 255 };

/** Problems with a new password, as field messages; none when it is acceptable. */
export function passwordProblems(plain: string): string[] {
  const length = [...plain].length;
  if (length < PASSWORD_RULES.min) return [`must be at least ${PASSWORD_RULES.min} characters`];
  if (length > PASSWORD_RULES.max) return [`must be at most ${PASSWORD_RULES.max} characters`];
  if (commonPasswords().has(plain.toLowerCase())) return ['is one of the most common passwords; choose another'];
  return [];
}
