// Throttles with @fastify/rate-limit, counted in the database (shared by every
// app process): 5 failures a minute per key. A throttled request answers 429
// with Retry-After, before any password is checked.
import { createHash } from 'node:crypto';
import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Knock } from '../accounts/limits.ts';
import { AppError } from '../errors.ts';

export const THROTTLE = { max: 5, timeWindowMs: 60_000 };

/**
 * Keys hold what a client typed (an email): one that would not fit the
 * counters' column (255 characters) or that PostgreSQL cannot store (NUL, a
 * lone surrogate) is kept as its kind and a hash of the whole key.
 */
function storableKey(key: string): string {
  if (key.length <= 200 && key.isWellFormed() && !key.includes('\u0000')) return key;
  const kind = key.slice(0, Math.max(0, key.indexOf(':')));
  return `${kind}:#${createHash('sha256').update(key.toWellFormed()).digest('hex')}`;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The throttle's key, worked out by the route (it needs the parsed body) and then handed to the limiter. On the
     * request, not in a WeakMap: see `confirmSignIn` in http/auth.ts.
     */
    throttleKey?: string;
  }
}

export function throttles(app: FastifyInstance) {
  const check = app.createRateLimit({
    max: THROTTLE.max,
    timeWindow: THROTTLE.timeWindowMs,
    keyGenerator: (request) => request.throttleKey!,
  });
  const limiter = (request: FastifyRequest, key: string) => {
    request.throttleKey = storableKey(key);
    return (options?: { increment: boolean }) => check(request, options);
  };

  const refuse = (reply: FastifyReply, ttlSeconds: number) => {
    reply.header('Retry-After', String(Math.max(1, ttlSeconds)));
    return new AppError(429, 'throttled', `Too many attempts; try again in ${Math.max(1, ttlSeconds)} seconds.`);
  };

  const failures = async <T>(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    attempt: () => Promise<T>,
  ): Promise<T> => {
    const limit = limiter(request, key);
    const status = await limit({ increment: false });
    // A read does not count this attempt, so `isExceeded` (count > max) would let a sixth try through:
    // refuse as soon as max failures are in.
    if (!status.isAllowed && status.remaining <= 0) throw refuse(reply, status.ttlInSeconds);
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof AppError && error.status < 500) await limit();
      throw error;
    }
  };
  const attempts = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> => {
    const status = await limiter(request, key)();
    if (!status.isAllowed && status.isExceeded) throw refuse(reply, status.ttlInSeconds);
  };

  /** The counter and address of a request, for the account actions (which name the keys). */
  return (request: FastifyRequest, reply: FastifyReply): Knock => ({
    ip: request.ip,
    via: request.url.startsWith('/api/') ? 'api' : 'web',
    throttle: {
      failures: (key, attempt) => failures(request, reply, key, attempt),
      attempts: (key) => attempts(request, reply, key),
    },
  });
}
