// Who is calling: a personal access token (Authorization: Bearer) or a session
// cookie (with "remember me" as a fallback). Every route needs a signed-in user
// unless its config says `public: true`. A cookie-authenticated request that
// changes state must come from our own origin (a cross-site form or fetch
// carries the cookie but not our Origin). A token does only what its
// abilities allow (each route's need is in access.ts); a session is not limited.
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Accounts } from '../accounts/context.ts';
import { findSanctumTokenUser } from '../accounts/sanctum.ts';
import { rememberCookieFor, userFromRememberCookie } from '../accounts/remember.ts';
import { createSession, deleteSession, findSession, type Session } from '../accounts/sessions.ts';
import { findUserById, fromDbBool, type UserRow } from '../accounts/store.ts';
import { findTokenUser, type TokenAbility } from '../accounts/tokens.ts';
import { AppError } from '../errors.ts';
import type { Actor } from '../records/operations.ts';
import { SignInMoved } from '../records/context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
    user?: UserRow;
    session?: Session;
    /** A session whose second factor is still due. */
    pendingSession?: Session;
    via?: 'token' | 'cookie';
    /** The bearer token's limits, when a token signed the request in. */
    bearer?: { abilities: readonly TokenAbility[]; expiresAt: string | null };
    /**
     * The auth epoch a bearer token kept in memory was kept under, on a route that confirms it with its own statement
     * (`confirmsToken`): until `confirmed` has settled it, the request is signed in on trust.
     */
    authEpoch?: string;
    /**
     * Reads the sign-in again from the database, for `confirmed`: set while the request is signed in on trust. Kept on
     * the request rather than in a WeakMap keyed by it: V8 works through a WeakMap's entries at every young-generation
     * collection, and an entry per request cost get by id a fifth of its throughput (SQLite, 10 connections).
     */
    confirmSignIn?: () => Promise<void>;
  }
  interface FastifyContextConfig {
    /** Reachable without signing in. */
    public?: boolean;
    /**
     * Asked for by the page itself, not by the person (the bell's count): signed out, it must not take them
     * away from what they are doing.
     */
    background?: boolean;
    /**
     * Its handler reads the auth epoch in its own statement and answers through `confirmed`, so that a bearer token
     * kept in memory costs it no read of its own (on PostgreSQL and MariaDB, a round trip).
     */
    confirmsToken?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A form of the web app's pages (not the JSON API), as a browser posts it. */
export const isPageForm = (request: FastifyRequest) =>
  request.method === 'POST' &&
  !request.url.startsWith('/api/') &&
  /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');

export const isSecure = (request: FastifyRequest) => request.protocol === 'https';
const cookieName = (request: FastifyRequest, base: string) => (isSecure(request) ? `__Host-${base}` : base);
export const sessionCookie = (request: FastifyRequest) => cookieName(request, 'leadbook_session');
export const rememberCookie = (request: FastifyRequest) => cookieName(request, 'leadbook_remember');

function cookieOptions(request: FastifyRequest, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: isSecure(request),
    ...(maxAgeSeconds ? { maxAge: maxAgeSeconds } : {}),
  };
}

const unauthenticated = () =>
  new AppError(401, 'unauthenticated', 'Sign in, or send a personal access token as Authorization: Bearer <token>.');

/** Starts a new session for the user (the old one, if any, ends: the id rotates) and sets its cookie. */
export async function startSession(
  a: Accounts,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
  options: { pending?: boolean; remember?: boolean },
): Promise<Session> {
  const old = request.session ?? request.pendingSession;
  if (old) await deleteSession(a, old.id);
  const { token, session } = await createSession(a, user.id, {
    twoFactorPending: options.pending,
    rememberMe: options.remember,
    ip: request.ip,
    userAgent: request.headers['user-agent'],
  });
  reply.setCookie(sessionCookie(request), token, cookieOptions(request));
  if (options.remember && !options.pending) {
    const remember = await rememberCookieFor(a, user);
    reply.setCookie(rememberCookie(request), remember.value, cookieOptions(request, remember.maxAgeSeconds));
  }
  return session;
}

export function clearAuthCookies(request: FastifyRequest, reply: FastifyReply): void {
  for (const name of [sessionCookie(request), rememberCookie(request)]) reply.clearCookie(name, cookieOptions(request));
}

function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = request.headers.origin;
  if (origin === undefined) return true; // not a browser: no ambient credentials to abuse
  return origin === `${request.protocol}://${request.host}`;
}

async function identify(a: Accounts, request: FastifyRequest, reply: FastifyReply, confirm = false): Promise<void> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    const unconfirmed = !confirm && request.routeOptions.config.confirmsToken === true;
    // An expired token is refused in there, with a 401 that says so.
    const found = match
      ? ((await findTokenUser(a, match[1]!, { unconfirmed })) ?? (await findSanctumTokenUser(a, match[1]!)))
      : null;
    // Deactivating ends the tokens; an inactive account never acts, whatever it still holds.
    const user = found && fromDbBool(found.user.active) ? found.user : null;
    const authEpoch = found && 'unconfirmedEpoch' in found ? found.unconfirmedEpoch : undefined;
    // A refusal is never on trust.
    if (!user && authEpoch !== undefined) return identify(a, request, reply, true);
    // A token that was sent but does not work is an error, never a silent fall back to the cookie.
    if (!user) throw new AppError(401, 'unauthenticated', 'The access token is invalid or has been revoked.');
    const bearer = { abilities: found!.abilities, expiresAt: found!.expiresAt };
    Object.assign(request, { user, actor: { id: user.id, role: user.role }, via: 'token', bearer, authEpoch });
    return;
  }
  const token = request.cookies[sessionCookie(request)];
  let session = token ? await findSession(a, token) : null;
  if (session?.twoFactorPending) {
    request.pendingSession = session;
    return;
  }
  let user = session && (await findUserById(a.database.db, session.userId));
  if (user && !fromDbBool(user.active)) return;
  if (!user) {
    const remembered = request.cookies[rememberCookie(request)];
    user = remembered ? await userFromRememberCookie(a, remembered) : null;
    if (!user) return;
    session = await startSession(a, request, reply, user, {});
  }
  Object.assign(request, { user, session, actor: { id: user.id, role: user.role }, via: 'cookie' });
}

/**
 * Refuses a token without the ability the route needs (access.ts). `bodyRead`: a rule that reads the body is checked
 * once it is parsed; the others before it is read.
 */
function checkTokenAbility(request: FastifyRequest, bodyRead: boolean): void {
  if (!request.bearer) return;
  const rule = request.routeOptions.config.tokenAbility?.[request.method];
  if (rule === undefined || (typeof rule === 'object') !== bodyRead) return;
  const needed = typeof rule === 'string' ? rule : rule.byBody(request.body);
  const { abilities } = request.bearer;
  if (abilities.includes(needed)) return;
  throw new AppError(
    403,
    'missing_ability',
    `This request needs the “${needed}” ability, which this access token lacks (it has: ${abilities.join(', ')}). ` +
      'Make a token with it on your profile or with POST /api/v1/me/tokens.',
  );
}

/**
 * The answer of `work` for a request that may be signed in on trust (`confirmsToken`): `work` reads the auth epoch in
 * a statement it sends anyway (a write, in its transaction's first) and goes no further unless it is the one the token
 * was kept under (confirmEpoch: SignInMoved, which rolls a write back). A refusal is never on trust: after any error
 * the sign-in is read again from the database, refused if it no longer holds, and `work`, refused (SignInMoved, a 4xx;
 * nothing was written), runs once more on it. A revoked token, a deactivated user or a changed role thus holds on this
 * request as on any other.
 */
export async function confirmed<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  if (request.authEpoch === undefined) return work();
  try {
    return await work();
  } catch (error) {
    await request.confirmSignIn!();
    if (error instanceof SignInMoved || (error instanceof AppError && error.status < 500)) return work();
    throw error;
  }
}

export const authPlugin = fp(
  async (app: FastifyInstance, a: Accounts) => {
    await app.register(cookie);
    /** Who is calling, and what they may do before the body is read; on trust where the route confirms it. */
    const signIn = async (request: FastifyRequest, reply: FastifyReply, confirm: boolean): Promise<void> => {
      await identify(a, request, reply, confirm);
      try {
        if (request.via === 'cookie' && !SAFE_METHODS.has(request.method) && !sameOrigin(request)) {
          throw new AppError(403, 'cross_origin', 'A request that changes something must come from this site.');
        }
        checkTokenAbility(request, false);
      } catch (error) {
        // A refusal is never on trust.
        if (request.authEpoch === undefined) throw error;
        await signInAgain(request, reply);
      }
    };
    /** The sign-in read again from the database (what a token kept in memory said is forgotten). */
    const signInAgain = async (request: FastifyRequest, reply: FastifyReply) => {
      Object.assign(request, { user: undefined, actor: undefined, bearer: undefined, authEpoch: undefined });
      await signIn(request, reply, true);
    };
    app.addHook('onRequest', async (request, reply) => {
      await signIn(request, reply, false);
      if (request.authEpoch !== undefined)
        request.confirmSignIn = async () => {
          await signInAgain(request, reply);
          if (!request.actor) throw unauthenticated();
        };
      if (request.actor || request.routeOptions.config.public || request.is404) return;
      // A page form sent after the session ended is read first, so that what was typed can be kept (web/kept-form.ts):
      // the 401 comes once the (small, urlencoded) body is parsed. Everything else is refused before its body is read.
      if (!isPageForm(request)) throw unauthenticated();
    });
    app.addHook('preValidation', async (request, reply) => {
      if (!request.actor && !request.routeOptions.config.public && !request.is404) throw unauthenticated();
      try {
        checkTokenAbility(request, true);
      } catch (error) {
        // A refusal is never on trust.
        if (request.authEpoch === undefined) throw error;
        await signInAgain(request, reply);
        checkTokenAbility(request, true);
      }
    });
  },
  { name: 'leadbook-auth' },
);
