// /api/v1/auth: register, sign in (session or token), the second factor, sign
// out, forgotten passwords and email verification. Thin: each route reads its
// body, calls an account action, and answers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../../accounts/context.ts';
import { bodyWith, optionalBoolean, optionalText, text } from '../../accounts/input.ts';
import { acceptInvitation } from '../../accounts/invitations.ts';
import { askForPasswordReset, resetPassword } from '../../accounts/reset-password.ts';
import { publicUser } from '../../accounts/store.ts';
import { createTokenWithPassword, readTokenLimits, TOKEN_ABILITIES } from '../../accounts/tokens.ts';
import { askForVerificationMail, verifyEmail } from '../../accounts/verify-email.ts';
import { AppError, FieldErrorBag } from '../../errors.ts';
import { signInSteps } from '../sign-in.ts';

const tags = ['auth'];
const open = { public: true };
const userResponse = { type: 'object', properties: { data: { $ref: 'User#' } } };
const json = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
});
const str = { type: 'string' };

function secondFactorAnswer(
  body: Record<string, unknown>,
  bag: FieldErrorBag,
): { code?: string; recoveryCode?: string } {
  const code = optionalText(body, 'code', bag, 20);
  const recoveryCode = optionalText(body, 'recovery_code', bag, 64);
  return { code, recoveryCode };
}

export function authRoutes(a: Accounts) {
  return async function plugin(app: FastifyInstance) {
    const signIn = signInSteps(app, a);
    const { knock } = signIn;

    app.post(
      '/register',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Create an account (the first one is an admin; later ones only when registration is open)',
          body: { $ref: 'UserInput#' },
          response: { 201: userResponse },
        },
      },
      async (request, reply) => {
        const user = await signIn.register(request, reply, request.body);
        return reply.code(201).send({ data: publicUser(user) });
      },
    );

    app.post(
      '/login',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Sign in with a session cookie',
          body: json({ email: str, password: str, remember: { type: 'boolean' } }, ['email', 'password']),
          response: {
            200: { type: 'object', properties: { data: { $ref: 'User#' }, two_factor: { type: 'boolean' } } },
          },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, ['email', 'password', 'remember']);
        const bag = new FieldErrorBag();
        const email = text(body, 'email', bag);
        const password = text(body, 'password', bag);
        const remember = optionalBoolean(body, 'remember', bag);
        bag.throwIfAny();
        const { user, twoFactorDue } = await signIn.withPassword(request, reply, email, password, remember);
        return twoFactorDue ? { two_factor: true } : { data: publicUser(user) };
      },
    );

    app.post(
      '/two-factor-challenge',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Complete a sign-in with a TOTP code or a recovery code',
          body: json({ code: str, recovery_code: str }),
          response: { 200: userResponse },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, ['code', 'recovery_code']);
        if (!request.pendingSession)
          throw new AppError(401, 'unauthenticated', 'Sign in with your email and password first.');
        const bag = new FieldErrorBag();
        const answer = secondFactorAnswer(body, bag);
        if (!answer.code && !answer.recoveryCode) bag.add('code', 'is required (or send recovery_code)');
        bag.throwIfAny();
        return { data: publicUser(await signIn.withSecondFactor(request, reply, answer)) };
      },
    );

    app.post(
      '/logout',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Sign out: ends this session and forgets remembered devices',
          response: { 204: { description: 'signed out', type: 'null' } },
        },
      },
      async (request, reply) => {
        await signIn.signOut(request, reply);
        return reply.code(204).send();
      },
    );

    app.post(
      '/token',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Create a personal access token with email and password (and a second factor when on)',
          description: '`abilities` and `expires_at` as for POST /api/v1/me/tokens: all four and never by default.',
          body: json(
            {
              email: str,
              password: str,
              device_name: str,
              code: str,
              recovery_code: str,
              abilities: { type: 'array', items: { type: 'string', enum: [...TOKEN_ABILITIES] }, minItems: 1 },
              expires_at: { type: ['string', 'null'], description: 'RFC 3339 or YYYY-MM-DD; null: never' },
            },
            ['email', 'password', 'device_name'],
          ),
          response: { 201: { type: 'object', properties: { token: str, data: { $ref: 'User#' } } } },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, [
          'email',
          'password',
          'device_name',
          'code',
          'recovery_code',
          'abilities',
          'expires_at',
        ]);
        const bag = new FieldErrorBag();
        const email = text(body, 'email', bag);
        const password = text(body, 'password', bag);
        const deviceName = text(body, 'device_name', bag);
        const answer = secondFactorAnswer(body, bag);
        const limits = readTokenLimits(body, bag);
        bag.throwIfAny();
        const { token, user } = await createTokenWithPassword(
          a,
          knock(request, reply),
          { email, password, deviceName, ...answer },
          limits,
        );
        return reply.code(201).send({ token, data: publicUser(user) });
      },
    );

    app.post(
      '/forgot-password',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Mail a password-reset link (answers the same whether or not the account exists)',
          body: json({ email: str }, ['email']),
          response: { 202: json({ message: str }) },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, ['email']);
        const bag = new FieldErrorBag();
        const email = text(body, 'email', bag);
        bag.throwIfAny();
        await askForPasswordReset(a, knock(request, reply), email);
        return reply.code(202).send({ message: 'If an account has this address, a reset link is on its way.' });
      },
    );

    // A password chosen through a mailed link: a reset, or an invited account's first password.
    const mailedLinks = [
      {
        path: '/reset-password',
        set: resetPassword,
        message: 'Your password has been reset; sign in with it.',
        summary: 'Set a new password with the token from the reset mail',
      },
      {
        path: '/accept-invitation',
        set: acceptInvitation,
        message: 'Your password is set; sign in with it.',
        summary:
          'Choose the password of an invited account with the token from ' +
          'the invitation mail (valid 7 days, once); confirms the email too',
      },
    ];
    for (const link of mailedLinks) {
      app.post(
        link.path,
        {
          config: open,
          schema: {
            tags,
            security: [],
            summary: link.summary,
            body: json({ token: str, email: str, password: str }, ['token', 'email', 'password']),
            response: { 200: json({ message: str }) },
          },
        },
        async (request, reply) => {
          await link.set(a, knock(request, reply), bodyWith(request.body, ['token', 'email', 'password']));
          return { message: link.message };
        },
      );
    }

    app.post(
      '/email/verification-notification',
      {
        schema: { tags, summary: 'Mail a new email-verification link', response: { 202: json({ message: str }) } },
      },
      async (request, reply) => {
        const user = request.user!;
        await askForVerificationMail(a, knock(request, reply), user);
        return reply.code(202).send({
          message: user.email_verified_at ? 'Your address is already verified.' : 'A verification link is on its way.',
        });
      },
    );

    app.get(
      '/verify-email/:id/:hash',
      {
        config: open,
        schema: {
          tags,
          security: [],
          summary: 'Verify an email address with the signed link from the mail',
          params: json({ id: str, hash: str }),
          querystring: json({ expires: str, signature: str }),
          response: { 200: userResponse },
        },
      },
      async (
        request: FastifyRequest<{
          Params: { id: string; hash: string };
          Querystring: { expires?: string; signature?: string };
        }>,
      ) => {
        const user = await verifyEmail(
          a,
          request.params.id,
          request.params.hash,
          request.query.expires ?? '',
          request.query.signature ?? '',
        );
        return { data: publicUser(user) };
      },
    );
  };
}

export type { FastifyReply };
