// The rate limits of the account actions, Fortify-style: the action names what
// it counts and when (a failed password check, a mail asked for), so that every
// front door counts the same thing under the same key. A door only supplies the
// counter (HTTP: @fastify/rate-limit, kept in the database) and the client address.

/** A counter of attempts under a key; it refuses (429) once a key has had too many. */
export interface Throttle {
  /** Runs `attempt`; only a failure (a thrown 4xx) counts against the key. */
  failures<T>(key: string, attempt: () => Promise<T>): Promise<T>;
  /** Counts every attempt against the key. */
  attempts(key: string): Promise<void>;
}

/** Who is knocking: the counter of their door and their address. */
export interface Knock {
  throttle: Throttle;
  ip: string;
  /** The door, as the audit log names it. */
  via: 'web' | 'api';
}

/** The keys, one place: a password sign-in through the API, its token endpoint or the page is one count. */
export const limitKeys = {
  signIn: (email: string, ip: string) => `login:${email.toLowerCase()}:${ip}`,
  secondFactor: (userId: bigint, ip: string) => `two-factor:${userId}:${ip}`,
  passwordResetMail: (email: string, ip: string) => `forgot:${email.toLowerCase()}:${ip}`,
  mailedLink: (link: 'reset' | 'invitation', email: string, ip: string) => `${link}:${email.toLowerCase()}:${ip}`,
  verificationMail: (userId: bigint) => `verify:${userId}`,
};
