// The sign-in steps both front doors share (the JSON API and the pages): the
// account actions (throttled password check, second factor), then the cookies:
// either a full session or a pending one that waits for the second factor,
// whose success rotates the session again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../accounts/context.ts';
import { registerUser } from '../accounts/register.ts';
import { forgetRememberedDevices } from '../accounts/remember.ts';
import { deleteSession } from '../accounts/sessions.ts';
import { completeSecondFactor } from '../accounts/second-factor.ts';
import { hasTwoFactor, signInWithPassword } from '../accounts/sign-in.ts';
import { findUserById, type UserRow } from '../accounts/store.ts';
import { AppError } from '../errors.ts';
import { clearAuthCookies, startSession } from './auth.ts';
import { throttles } from './throttle.ts';

export type SignInResult = { user: UserRow; twoFactorDue: boolean };

export function signInSteps(app: FastifyInstance, a: Accounts) {
  const knock = throttles(app);
  return {
    /** The request's counter and address, for the account actions that count attempts. */
    knock,
    /** Creates the account (the first is the admin), signs it in, and mails the verification link. */
    async register(request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<UserRow> {
      // The user rules mail the verification link once the account is committed.
      const user = await registerUser(a, body);
      await startSession(a, request, reply, user, {});
      return user;
    },
    /** Ends this session (pending or not) and, for a browser, its remembered devices; clears the cookies. */
    async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const session = request.session ?? request.pendingSession;
      if (session) await deleteSession(a, session.id);
      if (request.user && request.via === 'cookie') await forgetRememberedDevices(a, request.user.id);
      clearAuthCookies(request, reply);
    },
    async withPassword(
      request: FastifyRequest,
      reply: FastifyReply,
      email: string,
      password: string,
      remember: boolean,
    ): Promise<SignInResult> {
      const user = await signInWithPassword(a, knock(request, reply), email, password);
      const twoFactorDue = hasTwoFactor(user);
      await startSession(a, request, reply, user, { pending: twoFactorDue, remember });
      return { user, twoFactorDue };
    },
    async withSecondFactor(
      request: FastifyRequest,
      reply: FastifyReply,
      answer: { code?: string; recoveryCode?: string },
    ): Promise<UserRow> {
      const pending = request.pendingSession;
      if (!pending) throw new AppError(401, 'unauthenticated', 'Sign in with your email and password first.');
      const user = (await findUserById(a.database.db, pending.userId))!;
      await completeSecondFactor(a, knock(request, reply), user, answer);
      // The session id rotates again now that both factors are in.
      await startSession(a, request, reply, user, { remember: pending.rememberMe });
      return user;
    },
  };
}
