// The profile of the web app: /profile with a form per concern (profile
// fields, avatar, password, two-factor, sessions, tokens, deletion). Each form
// posts, and answers with a 303 back and a flash message, or with the page
// again (422) with the messages next to the fields and what was typed kept.
// Secrets shown once (recovery codes, a new token, a 2FA key) are the answer
// to their POST itself, never reachable again by a GET. The routes call the
// same account actions as /api/v1/me; no SQL here.
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AVATAR_MAX_BYTES, declaresTooLarge, removeAvatar, saveAvatar } from '../../accounts/avatar.ts';
import type { Accounts } from '../../accounts/context.ts';
import { text } from '../../accounts/input.ts';
import {
  confirmTwoFactor,
  disableTwoFactor,
  enableTwoFactor,
  regenerateRecoveryCodes,
} from '../../accounts/manage-two-factor.ts';
import {
  changePassword,
  deleteAccount,
  PROFILE_FIELDS,
  signOutOtherSessions,
  updateProfile,
} from '../../accounts/profile.ts';
import { listUserSessions, passwordRecentlyConfirmed } from '../../accounts/sessions.ts';
import { idFromText, publicUser } from '../../accounts/store.ts';
import {
  checkWithinCallersToken,
  createOwnToken,
  listTokens,
  readTokenLimits,
  revokeToken,
  type TokenLimits,
} from '../../accounts/tokens.ts';
import { formInput } from '../../derive/form-values.ts';
import { AppError, FieldErrorBag } from '../../errors.ts';
import { user as userResource } from '../../resources/user.ts';
import { uploadError } from '../csv-upload.ts';
import { clearAuthCookies } from '../auth.ts';
import { checkCsrf, pageContext, redirectWith } from './context.ts';
import { sendPage } from './render.tsx';
import {
  type FormValues,
  type Problem,
  type ProfileData,
  type ProfileForm,
  ProfilePage,
  RecoveryCodesPage,
  TOKEN_EXPIRY_CHOICES,
  TokenCreatedPage,
  TwoFactorSetupPage,
} from './views/profile.tsx';

type Form = Record<string, unknown>;
type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const PROFILE_INPUTS = userResource.writable.filter((f) => PROFILE_FIELDS.includes(f.name));
const MAX_MB = AVATAR_MAX_BYTES / (1024 * 1024);

const formOf = (request: FastifyRequest): Form => {
  const body = request.body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Form) : {};
};

/** A single text value of a form (a repeated or nested key is not one). */
const str = (form: Form, name: string): string | undefined =>
  typeof form[name] === 'string' ? (form[name] as string) : undefined;

/**
 * Ticked boxes: one arrives as a string, several as {0: …, 1: …} (the query parser makes no arrays); the form's hidden
 * empty value, which makes "none ticked" a value too, is left out.
 */
const ticked = (value: unknown): string[] =>
  (value === undefined
    ? []
    : typeof value === 'object' && value !== null
      ? Object.values(value).map(String)
      : [String(value)]
  ).filter((v) => v !== '');

/**
 * The new token's limits from the form: the ticked abilities, and the expiry as a period from now or the date typed
 * ("On a date"); a date typed with another choice is a problem, not silently dropped.
 */
function tokenLimitsOf(form: Form, bag: FieldErrorBag): TokenLimits {
  // A form without the boxes at all (a script's, an older page's) asks for all four, as the API's default is.
  const boxes = form.abilities === undefined ? undefined : ticked(form.abilities);
  if (boxes?.length === 0) bag.add('abilities', 'tick at least one: a token that may do nothing is of no use');
  const { abilities } = boxes?.length ? readTokenLimits({ abilities: boxes }, bag) : {};
  const choice = str(form, 'expires') ?? 'never';
  const date = str(form, 'expires_at')?.trim() || undefined;
  const days = TOKEN_EXPIRY_CHOICES.find((c) => c.value === choice)?.days;
  let expiresAt: string | undefined;
  if (choice === 'date') {
    if (date) expiresAt = date;
    else bag.add('expires_at', 'is required: choose the date the token stops working');
  } else if (date) bag.add('expires_at', 'is used only with “On a date…”: choose it above, or clear the date');
  else if (days) expiresAt = new Date(Date.now() + days * 24 * 60 * 60 * 1000).toISOString();
  return { abilities, ...readTokenLimits({ expires_at: expiresAt }, bag) };
}

/** What was typed, for showing it again; passwords are never sent back. */
const typed = (form: Form, names: readonly string[]): FormValues =>
  Object.fromEntries(names.map((n) => [n, str(form, n)]));

export function profilePages(a: Accounts) {
  return async function plugin(app: FastifyInstance) {
    // Only the avatar form is multipart: its CSRF token, then one file.
    await app.register(multipart, {
      limits: { fileSize: AVATAR_MAX_BYTES, files: 1, fields: 1, parts: 2 },
      throwFileSizeLimit: true,
    });
    const csrf = { preHandler: app.csrfProtection };

    const load = async (request: FastifyRequest): Promise<ProfileData> => {
      const user = request.user!;
      const [sessions, tokens] = await Promise.all([listUserSessions(a, user.id), listTokens(a, user.id)]);
      return {
        user: publicUser(user),
        fields: PROFILE_INPUTS,
        twoFactor: user.two_factor_confirmed_at ? 'on' : user.two_factor_secret ? 'pending' : 'off',
        recentlyConfirmed: passwordRecentlyConfirmed(a, request.session),
        sessions,
        currentSessionId: request.session?.id,
        tokens,
      };
    };

    const show = async (request: FastifyRequest, reply: FastifyReply, problem?: Problem, status = 200) =>
      sendPage(
        reply,
        <ProfilePage ctx={pageContext(request, reply)} data={await load(request)} problem={problem} />,
        status,
      );

    /** A refused action: its messages go back to its form; anything else is the error page's. */
    const refused = (
      request: FastifyRequest,
      reply: FastifyReply,
      form: ProfileForm,
      error: unknown,
      values?: FormValues,
    ) => {
      if (error instanceof AppError && [409, 413, 415, 422].includes(error.status)) {
        return show(request, reply, { form, errors: error.errors ?? { '': [error.detail] }, values }, error.status);
      }
      throw error;
    };

    /** A page that shows a secret once: never cached, so Back cannot bring it up again. */
    const once = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

    app.get('/profile', (request, reply) => show(request, reply));

    app.post('/profile', csrf, async (request, reply) => {
      const form = formOf(request);
      const user = request.user!;
      const input = formInput(userResource, form, PROFILE_INPUTS);
      const emailChanges = typeof input.email === 'string' && input.email.toLowerCase() !== user.email.toLowerCase();
      const password = str(form, 'password');
      // The action takes a password only with a new email address: one typed for nothing is dropped.
      if (emailChanges && password) input.password = password;
      try {
        const saved = await updateProfile(a, user, request.session, input, 'web');
        const text = emailChanges
          ? `Your profile was saved. We sent a link to ${saved.email} to confirm the new address.`
          : 'Your profile was saved.';
        return redirectWith(reply, '/profile', { kind: 'success', text });
      } catch (error) {
        return refused(request, reply, 'information', error, typed(form, PROFILE_FIELDS));
      }
    });

    app.post('/profile/avatar', async (request, reply) => {
      const fail = (message: string, status = 422) =>
        show(request, reply, { form: 'avatar', errors: { avatar: [message] } }, status);
      if (!request.isMultipart()) return fail('Choose an image file to upload.', 415);
      if (declaresTooLarge(request.headers['content-length'])) {
        return fail(`The image is larger than ${MAX_MB} MB; choose a smaller one.`, 413);
      }
      const unreadable = (error: unknown) => {
        const code = (error as { code?: string }).code ?? '';
        if (code === 'FST_REQ_FILE_TOO_LARGE')
          return fail(`The image is larger than ${MAX_MB} MB; choose a smaller one.`, 413);
        if (code.startsWith('FST_') || uploadError(error))
          return fail('The upload could not be read; choose the image again.', 400);
        throw error;
      };
      let file: MultipartFile | undefined;
      try {
        file = await request.file();
      } catch (error) {
        return unreadable(error);
      }
      try {
        await checkCsrf(app, request, reply, file);
      } catch (error) {
        file?.file.resume();
        throw error;
      }
      if (file?.fieldname !== 'avatar') return fail('Choose an image file to upload.');
      let upload: Buffer;
      try {
        upload = await file.toBuffer();
      } catch (error) {
        return unreadable(error);
      }
      if (!file.filename && upload.length === 0) return fail('Choose an image file to upload.');
      try {
        await saveAvatar(a, request.user!, upload);
      } catch (error) {
        return refused(request, reply, 'avatar', error);
      }
      return redirectWith(reply, '/profile', { kind: 'success', text: 'Your new avatar is saved.' });
    });

    app.post('/profile/avatar/delete', csrf, async (request, reply) => {
      await removeAvatar(a, request.user!);
      return redirectWith(reply, '/profile', { kind: 'success', text: 'Your avatar was removed.' });
    });

    app.post('/profile/password', csrf, async (request, reply) => {
      const form = formOf(request);
      try {
        await changePassword(
          a,
          request.user!,
          request.session,
          { current_password: str(form, 'current_password') ?? '', password: str(form, 'password') ?? '' },
          'web',
        );
      } catch (error) {
        return refused(request, reply, 'password', error);
      }
      return redirectWith(reply, '/profile', {
        kind: 'success',
        text: 'Your password was changed. Your other sessions and all your API tokens have ended.',
      });
    });

    app.post('/profile/two-factor', csrf, async (request, reply) => {
      const form = formOf(request);
      try {
        const setup = await enableTwoFactor(a, request.user!, request.session, str(form, 'password'));
        return sendPage(once(reply), <TwoFactorSetupPage ctx={pageContext(request, reply)} setup={setup} />);
      } catch (error) {
        return refused(request, reply, 'enable', error);
      }
    });

    app.post('/profile/two-factor/confirm', csrf, async (request, reply) => {
      const form = formOf(request);
      try {
        const bag = new FieldErrorBag();
        const code = text(form, 'code', bag, 20);
        bag.throwIfAny();
        const codes = await confirmTwoFactor(a, request.user!, code, 'web');
        return sendPage(
          once(reply),
          <RecoveryCodesPage ctx={pageContext(request, reply)} codes={codes} fresh={false} />,
        );
      } catch (error) {
        return refused(request, reply, 'confirm', error);
      }
    });

    app.post('/profile/two-factor/recovery-codes', csrf, async (request, reply) => {
      const form = formOf(request);
      try {
        const codes = await regenerateRecoveryCodes(a, request.user!, request.session, str(form, 'password'));
        return sendPage(once(reply), <RecoveryCodesPage ctx={pageContext(request, reply)} codes={codes} fresh />);
      } catch (error) {
        return refused(request, reply, 'regenerate', error);
      }
    });

    app.post('/profile/two-factor/disable', csrf, async (request, reply) => {
      try {
        await disableTwoFactor(a, request.user!, request.session, str(formOf(request), 'password'), 'web');
      } catch (error) {
        return refused(request, reply, 'disable', error);
      }
      return redirectWith(reply, '/profile', { kind: 'success', text: 'Two-factor authentication is off.' });
    });

    app.post('/profile/sessions/delete', csrf, async (request, reply) => {
      let ended: number;
      try {
        ended = await signOutOtherSessions(a, request.user!, request.session, str(formOf(request), 'password'));
      } catch (error) {
        return refused(request, reply, 'sessions', error);
      }
      const text =
        ended === 0
          ? 'You were not signed in anywhere else.'
          : `Signed out of ${ended} other ${ended === 1 ? 'session' : 'sessions'}.`;
      return redirectWith(reply, '/profile', { kind: 'success', text });
    });

    app.post('/profile/tokens', csrf, async (request, reply) => {
      const form = formOf(request);
      try {
        const bag = new FieldErrorBag();
        const name = text(form, 'name', bag);
        const limits = tokenLimitsOf(form, bag);
        bag.throwIfAny();
        checkWithinCallersToken(request.bearer, limits);
        const { token, info } = await createOwnToken(
          a,
          request.user!,
          request.session,
          name,
          str(form, 'password'),
          'web',
          limits,
        );
        return sendPage(
          once(reply),
          <TokenCreatedPage ctx={pageContext(request, reply)} token={token} name={info.name} />,
        );
      } catch (error) {
        const values = {
          ...typed(form, ['name', 'expires', 'expires_at']),
          abilities: ticked(form.abilities).join(','),
        };
        return refused(request, reply, 'token', error, values);
      }
    });

    app.post('/profile/tokens/:id/delete', csrf, async (request: IdRequest, reply) => {
      const id = idFromText(request.params.id);
      const token = id === null ? undefined : (await listTokens(a, request.user!.id)).find((t) => t.id === id);
      if (!token || !(await revokeToken(a, request.user!.id, token.id, 'web'))) {
        return redirectWith(reply, '/profile', {
          kind: 'error',
          text: 'You have no such token; it may have been revoked already.',
        });
      }
      return redirectWith(reply, '/profile', {
        kind: 'success',
        text: `The token “${token.name}” was revoked; it no longer works.`,
      });
    });

    app.post('/profile/delete', csrf, async (request, reply) => {
      try {
        await deleteAccount(a, request.user!, request.session, { password: str(formOf(request), 'password') }, 'web');
      } catch (error) {
        return refused(request, reply, 'delete', error);
      }
      clearAuthCookies(request, reply);
      return redirectWith(reply, '/login', { kind: 'info', text: 'Your account was deleted. Goodbye!' });
    });
  };
}
