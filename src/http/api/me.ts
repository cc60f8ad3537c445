// /api/v1/me: the signed-in user's own profile, password, avatar, two-factor,
// sessions and tokens. Nobody reaches another user's sessions or tokens: every
// query here is scoped to request.user.
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AVATAR_MAX_BYTES, declaresTooLarge, removeAvatar, saveAvatar } from '../../accounts/avatar.ts';
import { openConfirmationWindow, SENSITIVE } from '../../accounts/confirm-password.ts';
import type { Accounts } from '../../accounts/context.ts';
import { bodyWith, text } from '../../accounts/input.ts';
import {
  confirmTwoFactor,
  disableTwoFactor,
  enableTwoFactor,
  regenerateRecoveryCodes,
} from '../../accounts/manage-two-factor.ts';
import { changePassword, deleteAccount, signOutOtherSessions, updateProfile } from '../../accounts/profile.ts';
import { listUserSessions } from '../../accounts/sessions.ts';
import { findUserById, idFromText, publicUser, type UserRow } from '../../accounts/store.ts';
import {
  checkWithinCallersToken,
  createOwnToken,
  listTokens,
  readTokenLimits,
  revokeToken,
  TOKEN_ABILITIES,
} from '../../accounts/tokens.ts';
import { AppError, FieldErrorBag, notFound } from '../../errors.ts';
import { clearAuthCookies } from '../auth.ts';
import { uploadError } from '../csv-upload.ts';

const tags = ['me'];

/** A problem reading an avatar upload as a problem: a limit is a 413, a broken envelope a 400. */
function avatarUploadError(error: unknown): unknown {
  const code = (error as { code?: string } | null)?.code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE')
    return new AppError(413, 'payload_too_large', 'The avatar may be at most 2 MB.');
  if (/^FST_(FILES|PARTS|FIELDS)_LIMIT$/.test(code))
    return new AppError(413, 'payload_too_large', 'Send one image, in a field named avatar, and nothing else.');
  return uploadError(error) ?? error;
}
const str = { type: 'string' };
const json = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
});
const userResponse = { type: 'object', properties: { data: { $ref: 'User#' } } };
const passwordBody = json({ password: str });
const codes = json({ recovery_codes: { type: 'array', items: str } });

/** The user as stored now (a route may have changed it). */
const fresh = (a: Accounts, user: UserRow) => findUserById(a.database.db, user.id).then((u) => u!);

export function meRoutes(a: Accounts) {
  return async function plugin(app: FastifyInstance) {
    await app.register(multipart, {
      limits: { fileSize: AVATAR_MAX_BYTES, files: 1, fields: 0, parts: 1 },
      throwFileSizeLimit: true,
    });

    app.get('', { schema: { tags, summary: 'Your profile', response: { 200: userResponse } } }, async (request) => ({
      data: publicUser(request.user!),
    }));

    app.patch(
      '',
      {
        schema: {
          tags,
          summary: 'Change your profile; changing email needs password and clears email_verified_at',
          description: SENSITIVE,
          body: { type: 'object' },
          response: { 200: userResponse },
        },
      },
      async (request) => ({
        data: publicUser(await updateProfile(a, request.user!, request.session, request.body, 'api')),
      }),
    );

    app.delete(
      '',
      {
        schema: {
          tags,
          summary: 'Delete your account (needs password)',
          description: SENSITIVE,
          body: passwordBody,
          response: { 204: { description: 'deleted, and signed out', type: 'null' } },
        },
      },
      async (request, reply) => {
        await deleteAccount(a, request.user!, request.session, request.body, 'api');
        clearAuthCookies(request, reply);
        return reply.code(204).send();
      },
    );

    app.post(
      '/confirm-password',
      {
        schema: {
          tags,
          summary: 'Confirm your password for the next few hours',
          body: json({ password: str }, ['password']),
          response: { 204: { description: 'confirmed', type: 'null' } },
        },
      },
      async (request, reply) => {
        await openConfirmationWindow(a, request.user!, request.session, bodyWith(request.body, ['password']));
        return reply.code(204).send();
      },
    );

    app.put(
      '/password',
      {
        schema: {
          tags,
          summary: 'Change your password; your other sessions and tokens end',
          body: json({ current_password: str, password: str }, ['current_password', 'password']),
          response: { 204: { description: 'changed', type: 'null' } },
        },
      },
      async (request, reply) => {
        await changePassword(a, request.user!, request.session, request.body, 'api');
        return reply.code(204).send();
      },
    );

    app.post(
      '/avatar',
      {
        schema: {
          tags,
          summary: 'Upload an avatar (multipart field "avatar": JPEG, PNG, WebP or GIF, at most 2 MB)',
          consumes: ['multipart/form-data'],
          response: { 200: userResponse },
        },
      },
      async (request) => {
        if (!request.isMultipart())
          throw new AppError(
            415,
            'unsupported_media_type',
            'Send the avatar as multipart/form-data, in a field named avatar.',
          );
        if (declaresTooLarge(request.headers['content-length'])) {
          // Refused before a byte is read; the rest is thrown away after the answer (src/http/drain.ts).
          throw new AppError(413, 'payload_too_large', 'The avatar may be at most 2 MB.');
        }
        let upload: Buffer;
        try {
          const file = await request.file();
          if (file?.fieldname !== 'avatar')
            throw new AppError(422, 'validation_failed', 'Send the image in a field named avatar.', {
              avatar: ['is required'],
            });
          upload = await file.toBuffer();
        } catch (error) {
          throw avatarUploadError(error);
        }
        await saveAvatar(a, request.user!, upload);
        return { data: publicUser(await fresh(a, request.user!)) };
      },
    );

    app.delete(
      '/avatar',
      { schema: { tags, summary: 'Remove your avatar', response: { 200: userResponse } } },
      async (request) => {
        await removeAvatar(a, request.user!);
        return { data: publicUser(await fresh(a, request.user!)) };
      },
    );

    app.post(
      '/two-factor',
      {
        schema: {
          tags,
          summary: 'Start two-factor setup (needs password): a secret, its otpauth:// URL and a QR code',
          description: SENSITIVE,
          body: passwordBody,
          response: { 200: json({ secret: str, otpauth_url: str, qr_svg: str }) },
        },
      },
      async (request) =>
        enableTwoFactor(a, request.user!, request.session, bodyWith(request.body, ['password']).password),
    );

    app.post(
      '/two-factor/confirm',
      {
        schema: {
          tags,
          summary: 'Turn two-factor on with a code from the app; answers the recovery codes, once',
          body: json({ code: str }, ['code']),
          response: { 200: codes },
        },
      },
      async (request) => {
        const body = bodyWith(request.body, ['code']);
        const bag = new FieldErrorBag();
        const code = text(body, 'code', bag, 20);
        bag.throwIfAny();
        return { recovery_codes: await confirmTwoFactor(a, request.user!, code, 'api') };
      },
    );

    app.post(
      '/two-factor/recovery-codes',
      {
        schema: {
          tags,
          summary: 'A fresh set of recovery codes (needs password); the old set stops working',
          description: SENSITIVE,
          body: passwordBody,
          response: { 200: codes },
        },
      },
      async (request) => ({
        recovery_codes: await regenerateRecoveryCodes(
          a,
          request.user!,
          request.session,
          bodyWith(request.body, ['password']).password,
        ),
      }),
    );

    app.delete(
      '/two-factor',
      {
        schema: {
          tags,
          summary: 'Turn two-factor off (needs password)',
          description: SENSITIVE,
          body: passwordBody,
          response: { 204: { description: 'turned off', type: 'null' } },
        },
      },
      async (request, reply) => {
        await disableTwoFactor(a, request.user!, request.session, bodyWith(request.body, ['password']).password, 'api');
        return reply.code(204).send();
      },
    );

    const sessionItem = json({
      id: str,
      ip: { type: ['string', 'null'] },
      user_agent: { type: ['string', 'null'] },
      created_at: str,
      last_seen_at: str,
      current: { type: 'boolean' },
    });
    app.get(
      '/sessions',
      {
        schema: {
          tags,
          summary: 'Your browser sessions',
          response: { 200: json({ data: { type: 'array', items: sessionItem } }) },
        },
      },
      async (request) => {
        const sessions = await listUserSessions(a, request.user!.id);
        return {
          data: sessions.map((s) => ({
            id: s.id,
            ip: s.ip,
            user_agent: s.userAgent,
            created_at: s.createdAt,
            last_seen_at: s.lastSeenAt,
            current: s.id === request.session?.id,
          })),
        };
      },
    );

    app.delete(
      '/sessions',
      {
        schema: {
          tags,
          summary: 'End all your other sessions (needs password)',
          description: SENSITIVE,
          body: passwordBody,
          response: { 204: { description: 'the others ended', type: 'null' } },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, ['password']);
        await signOutOtherSessions(a, request.user!, request.session, body.password);
        return reply.code(204).send();
      },
    );

    const abilities = {
      type: 'array',
      items: { type: 'string', enum: [...TOKEN_ABILITIES] },
      minItems: 1,
      uniqueItems: true,
      description: 'What the token may do: read, and each kind of change (each route says which it needs).',
    };
    const tokenItem = json({
      id: { type: 'integer', format: 'int64' },
      name: str,
      abilities,
      created_at: str,
      last_used_at: { type: ['string', 'null'] },
      expires_at: { type: ['string', 'null'], format: 'date-time', description: 'null: never' },
    });
    app.get(
      '/tokens',
      {
        schema: {
          tags,
          summary: 'Your personal access tokens (never their secrets)',
          response: { 200: json({ data: { type: 'array', items: tokenItem } }) },
        },
      },
      async (request) => ({
        data: await listTokens(a, request.user!.id),
      }),
    );

    app.post(
      '/tokens',
      {
        schema: {
          tags,
          summary: 'Create a personal access token (needs password); the token is shown this once',
          description:
            `${SENSITIVE} \`abilities\` defaults to all four; \`expires_at\` (RFC 3339, or YYYY-MM-DD for ` +
            'midnight UTC; in the future) defaults to never. A token that lacks an ability answers 403 ' +
            '`missing_ability` where a request needs it; an expired one 401. A token made with a token gets no ' +
            'more abilities and no later expiry than that one.',
          body: json(
            {
              name: str,
              password: str,
              abilities: { ...abilities, default: [...TOKEN_ABILITIES] },
              expires_at: { type: ['string', 'null'], description: 'RFC 3339 or YYYY-MM-DD; null or left out: never' },
            },
            ['name'],
          ),
          response: { 201: json({ token: str, data: tokenItem }) },
        },
      },
      async (request, reply) => {
        const body = bodyWith(request.body, ['name', 'password', 'abilities', 'expires_at']);
        const bag = new FieldErrorBag();
        const name = text(body, 'name', bag);
        const limits = readTokenLimits(body, bag);
        bag.throwIfAny();
        checkWithinCallersToken(request.bearer, limits);
        const { token, info } = await createOwnToken(
          a,
          request.user!,
          request.session,
          name,
          body.password,
          'api',
          limits,
        );
        return reply.code(201).send({ token, data: info });
      },
    );

    app.delete(
      '/tokens/:id',
      {
        schema: {
          tags,
          summary: 'Revoke one of your tokens',
          params: json({ id: str }),
          response: { 204: { description: 'revoked', type: 'null' } },
        },
      },
      async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
        const id = idFromText(request.params.id);
        if (id === null || !(await revokeToken(a, request.user!.id, id, 'api')))
          throw notFound('You have no token with this id.');
        return reply.code(204).send();
      },
    );
  };
}
