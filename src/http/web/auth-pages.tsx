// Pages for signing in and out, the first admin, registration, forgotten
// passwords and email verification. They call the same account actions as
// /api/v1/auth; errors land next to their fields with what was typed kept.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../../accounts/context.ts';
import { REGISTER_FIELDS } from '../../accounts/register.ts';
import { acceptInvitation, INVITATION_DAYS } from '../../accounts/invitations.ts';
import { askForPasswordReset, resetPassword } from '../../accounts/reset-password.ts';
import { countUsers } from '../../accounts/store.ts';
import { askForVerificationMail, verifyEmail } from '../../accounts/verify-email.ts';
import { AppError, type FieldErrors } from '../../errors.ts';
import { user as userResource } from '../../resources/user.ts';
import { signInSteps } from '../sign-in.ts';
import { pageContext, redirectWith, safeNext } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput, ErrorSummary, FieldError, FieldInput } from './views/form.tsx';
import { Layout, type PageContext } from './views/layout.tsx';
import { MessagePage } from './views/pages.tsx';

type Form = Record<string, string | undefined>;
const open = { public: true };

function TextField(props: {
  name: string;
  label: string;
  type?: string;
  value?: string;
  errors?: FieldErrors;
  autocomplete?: string;
  autoFocus?: boolean;
  required?: boolean;
}) {
  const id = `field-${props.name}`;
  const messages = props.errors?.[props.name];
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.type === 'password' ? '' : (props.value ?? '')}
        autocomplete={props.autocomplete}
        autoFocus={props.autoFocus}
        required={props.required ?? true}
        aria-invalid={messages ? 'true' : undefined}
        aria-describedby={messages ? `${id}-error` : undefined}
      />
      <FieldError id={`${id}-error`} messages={messages} />
    </div>
  );
}

function AuthCard({
  ctx,
  title,
  intro,
  children,
}: {
  ctx: PageContext;
  title: string;
  intro?: string;
  children: preact.ComponentChildren;
}) {
  return (
    <Layout ctx={ctx} title={title}>
      <section class="card narrow">
        <h1>{title}</h1>
        {intro ? <p>{intro}</p> : null}
        {children}
      </section>
    </Layout>
  );
}

/** Registration and first-admin set-up share this form: what an account needs, every field of it required here. */
function AccountFields({ form, errors }: { form: Form; errors?: FieldErrors }) {
  const fields = userResource.writable.filter((f) => (REGISTER_FIELDS as readonly string[]).includes(f.name));
  return (
    <>
      {fields.map((f, i) => (
        <FieldInput
          field={f}
          value={form[f.name]}
          errors={errors?.[f.name]}
          choices={new Map()}
          autoFocus={i === 0}
          required
        />
      ))}
    </>
  );
}

/** The registration fields of a form; an empty box is left out so the operation reports it as required. */
const registration = (form: Form) =>
  Object.fromEntries(REGISTER_FIELDS.map((name) => [name, form[name]]).filter(([, v]) => v !== undefined && v !== ''));

function errorsOf(error: unknown): FieldErrors {
  if (error instanceof AppError && error.status === 422) return error.errors ?? { '': [error.detail] };
  throw error;
}

export function authPages(a: Accounts) {
  return async function plugin(app: FastifyInstance) {
    const signIn = signInSteps(app, a);
    // The form's single text values: a repeated or nested key (an array or object from qs) is no value.
    const body = (request: FastifyRequest): Form => {
      const raw = request.body;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
      return Object.fromEntries(Object.entries(raw).filter(([, v]) => typeof v === 'string')) as Form;
    };
    const csrf = { preHandler: app.csrfProtection };

    const setupPage = (request: FastifyRequest, reply: FastifyReply, form: Form = {}, errors?: FieldErrors) =>
      sendPage(
        reply,
        <AuthCard
          ctx={pageContext(request, reply)}
          title="Set up Leadbook"
          intro="Welcome! Create the first account; it will be the administrator."
        >
          <ErrorSummary errors={errors} />
          <form method="post" action="/setup" novalidate>
            <CsrfInput token={pageContext(request, reply).csrf} />
            <AccountFields form={form} errors={errors} />
            <button type="submit">Create the admin account</button>
          </form>
        </AuthCard>,
        errors ? 422 : 200,
      );

    app.get('/setup', { config: open }, async (request, reply) => {
      if ((await countUsers(a.database.db)) > 0) return reply.redirect('/login', 303);
      return setupPage(request, reply);
    });
    app.post('/setup', { config: open, ...csrf }, async (request, reply) => {
      if ((await countUsers(a.database.db)) > 0)
        return redirectWith(reply, '/login', { kind: 'info', text: 'Leadbook is already set up; sign in.' });
      try {
        await signIn.register(request, reply, registration(body(request)));
        return redirectWith(reply, '/', { kind: 'success', text: 'Your admin account is ready. Welcome to Leadbook!' });
      } catch (error) {
        return setupPage(request, reply, body(request), errorsOf(error));
      }
    });

    const loginPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      form: Form = {},
      errors?: FieldErrors,
      status = 200,
    ) => {
      const next = safeNext((request.query as Form).next ?? form.next);
      return sendPage(
        reply,
        <AuthCard ctx={pageContext(request, reply)} title="Sign in">
          {errors?.[''] ? (
            <p class="flash flash-error" role="alert">
              {errors['']!.join(' ')}
            </p>
          ) : null}
          <form method="post" action="/login" novalidate>
            <CsrfInput token={pageContext(request, reply).csrf} />
            <input type="hidden" name="next" value={next} />
            <TextField
              name="email"
              label="Email"
              type="email"
              value={form.email}
              errors={errors}
              autocomplete="username"
              autoFocus
            />
            <TextField
              name="password"
              label="Password"
              type="password"
              errors={errors}
              autocomplete="current-password"
            />
            <div class="field">
              <label class="tri">
                <input type="checkbox" name="remember" value="1" checked={form.remember === '1'} /> Remember me on this
                device
              </label>
            </div>
            <button type="submit">Sign in</button>
          </form>
          <p>
            <a href="/forgot-password">Forgot your password?</a>
          </p>
          {a.config.registrationOpen ? (
            <p>
              New here? <a href="/register">Create an account</a>
            </p>
          ) : null}
        </AuthCard>,
        status,
      );
    };

    app.get('/login', { config: open }, async (request, reply) => {
      if ((await countUsers(a.database.db)) === 0) return reply.redirect('/setup', 303);
      if (request.user) return reply.redirect('/', 303);
      return loginPage(request, reply);
    });
    app.post('/login', { config: open, ...csrf }, async (request, reply) => {
      const form = body(request);
      try {
        const { twoFactorDue } = await signIn.withPassword(
          request,
          reply,
          form.email ?? '',
          form.password ?? '',
          form.remember === '1',
        );
        const next = safeNext(form.next);
        if (twoFactorDue) return reply.redirect(`/two-factor-challenge?next=${encodeURIComponent(next)}`, 303);
        return redirectWith(reply, next, { kind: 'success', text: 'You are signed in.' });
      } catch (error) {
        if (error instanceof AppError && [401, 429].includes(error.status))
          return loginPage(request, reply, form, { '': [error.detail] }, error.status);
        throw error;
      }
    });

    const challengePage = (request: FastifyRequest, reply: FastifyReply, errors?: FieldErrors, status = 200) => {
      const next = safeNext((request.query as Form).next ?? body(request).next);
      return sendPage(
        reply,
        <AuthCard
          ctx={pageContext(request, reply)}
          title="Two-factor authentication"
          intro="Enter the 6-digit code from your authenticator app, or one of your recovery codes."
        >
          {errors?.[''] ? (
            <p class="flash flash-error" role="alert">
              {errors['']!.join(' ')}
            </p>
          ) : null}
          <form method="post" action="/two-factor-challenge" novalidate>
            <CsrfInput token={pageContext(request, reply).csrf} />
            <input type="hidden" name="next" value={next} />
            <div class="field">
              <label for="field-code">Authentication code</label>
              <input
                id="field-code"
                name="code"
                inputMode="numeric"
                autocomplete="one-time-code"
                pattern="[0-9 ]*"
                autoFocus
                aria-invalid={errors?.code ? 'true' : undefined}
                aria-describedby={errors?.code ? 'field-code-error' : undefined}
              />
              <FieldError id="field-code-error" messages={errors?.code} />
            </div>
            <details open={Boolean(errors?.recovery_code)}>
              <summary>Use a recovery code instead</summary>
              <TextField
                name="recovery_code"
                label="Recovery code"
                errors={errors}
                autocomplete="off"
                required={false}
              />
            </details>
            <button type="submit">Continue</button>
          </form>
        </AuthCard>,
        status,
      );
    };

    app.get('/two-factor-challenge', { config: open }, async (request, reply) => {
      if (!request.pendingSession) return reply.redirect('/login', 303);
      return challengePage(request, reply);
    });
    app.post('/two-factor-challenge', { config: open, ...csrf }, async (request, reply) => {
      const form = body(request);
      const answer = form.recovery_code?.trim() ? { recoveryCode: form.recovery_code } : { code: form.code ?? '' };
      try {
        await signIn.withSecondFactor(request, reply, answer);
        return redirectWith(reply, safeNext(form.next), { kind: 'success', text: 'You are signed in.' });
      } catch (error) {
        if (error instanceof AppError && error.status === 401) return reply.redirect('/login', 303);
        if (error instanceof AppError && error.status === 429)
          return challengePage(request, reply, { '': [error.detail] }, 429);
        return challengePage(request, reply, errorsOf(error), 422);
      }
    });

    app.post('/logout', { config: open, ...csrf }, async (request, reply) => {
      await signIn.signOut(request, reply);
      return redirectWith(reply, '/login', { kind: 'info', text: 'You are signed out.' });
    });

    const registerPage = (request: FastifyRequest, reply: FastifyReply, form: Form = {}, errors?: FieldErrors) =>
      sendPage(
        reply,
        <AuthCard ctx={pageContext(request, reply)} title="Create an account">
          <ErrorSummary errors={errors} />
          <form method="post" action="/register" novalidate>
            <CsrfInput token={pageContext(request, reply).csrf} />
            <AccountFields form={form} errors={errors} />
            <button type="submit">Create account</button>
          </form>
          <p>
            Already have one? <a href="/login">Sign in</a>
          </p>
        </AuthCard>,
        errors ? 422 : 200,
      );

    app.get('/register', { config: open }, async (request, reply) => {
      if (!a.config.registrationOpen && (await countUsers(a.database.db)) > 0) {
        return sendPage(
          reply,
          <MessagePage ctx={pageContext(request, reply)} title="Registration is closed" status={403}>
            <p>Ask an admin of your team for an account.</p>
          </MessagePage>,
          403,
        );
      }
      return registerPage(request, reply);
    });
    app.post('/register', { config: open, ...csrf }, async (request, reply) => {
      const form = body(request);
      try {
        await signIn.register(request, reply, registration(form));
        return redirectWith(reply, '/', {
          kind: 'success',
          text: 'Welcome to Leadbook! We sent you a link to confirm your email address.',
        });
      } catch (error) {
        if (error instanceof AppError && error.status === 403)
          return redirectWith(reply, '/login', { kind: 'error', text: error.detail });
        return registerPage(request, reply, form, errorsOf(error));
      }
    });

    const forgotPage = (
      request: FastifyRequest,
      reply: FastifyReply,
      form: Form = {},
      errors?: FieldErrors,
      status = 200,
    ) =>
      sendPage(
        reply,
        <AuthCard
          ctx={pageContext(request, reply)}
          title="Forgot your password?"
          intro="Enter your email address and we will mail you a link to choose a new password."
        >
          {errors?.[''] ? (
            <p class="flash flash-error" role="alert">
              {errors['']!.join(' ')}
            </p>
          ) : null}
          <form method="post" action="/forgot-password" novalidate>
            <CsrfInput token={pageContext(request, reply).csrf} />
            <TextField
              name="email"
              label="Email"
              type="email"
              value={form.email}
              errors={errors}
              autocomplete="email"
              autoFocus
            />
            <button type="submit">Mail me a reset link</button>
          </form>
          <p>
            <a href="/login">Back to sign in</a>
          </p>
        </AuthCard>,
        status,
      );

    app.get('/forgot-password', { config: open }, (request, reply) => forgotPage(request, reply));
    app.post('/forgot-password', { config: open, ...csrf }, async (request, reply) => {
      const form = body(request);
      if (!form.email) return forgotPage(request, reply, form, { email: ['is required'] }, 422);
      try {
        await askForPasswordReset(a, signIn.knock(request, reply), form.email);
      } catch (error) {
        if (error instanceof AppError && error.status === 429)
          return forgotPage(request, reply, form, { '': [error.detail] }, 429);
        throw error;
      }
      return redirectWith(reply, '/login', {
        kind: 'info',
        text: 'If an account has this address, a reset link is on its way.',
      });
    });

    // A password chosen through a mailed link: a reset, or an invited account's first password.
    const mailedLinks = [
      {
        path: '/reset-password',
        set: resetPassword,
        title: 'Choose a new password',
        label: 'New password',
        button: 'Set the new password',
        invalid: (
          <>
            This link is invalid or has expired. <a href="/forgot-password">Ask for a new one</a>.
          </>
        ),
        done: 'Your password has been reset; sign in with it.',
      },
      {
        path: '/invitation',
        set: acceptInvitation,
        title: 'Welcome to Leadbook',
        intro: 'An admin made you an account. Choose your password to start.',
        label: 'Your new password',
        button: 'Set my password',
        invalid: (
          <>
            {[
              `This invitation link is invalid, was used already, or is older than ${INVITATION_DAYS} days.`,
              'Ask an admin to invite you again.',
            ].join(' ')}
          </>
        ),
        done: 'Your password is set and your email address confirmed. Sign in with them.',
      },
    ];
    for (const link of mailedLinks) {
      const page = (request: FastifyRequest, reply: FastifyReply, form: Form, errors?: FieldErrors) =>
        sendPage(
          reply,
          <AuthCard ctx={pageContext(request, reply)} title={link.title} intro={link.intro}>
            {errors?.token ? (
              <p class="flash flash-error" role="alert">
                {link.invalid}
              </p>
            ) : null}
            <form method="post" action={link.path} novalidate>
              <CsrfInput token={pageContext(request, reply).csrf} />
              <input type="hidden" name="token" value={form.token ?? ''} />
              <TextField
                name="email"
                label="Email"
                type="email"
                value={form.email}
                errors={errors}
                autocomplete="username"
              />
              <TextField
                name="password"
                label={link.label}
                type="password"
                errors={errors}
                autocomplete="new-password"
                autoFocus
              />
              <button type="submit">{link.button}</button>
            </form>
          </AuthCard>,
          errors ? 422 : 200,
        );

      app.get(link.path, { config: open }, (request, reply) => page(request, reply, request.query as Form));
      app.post(link.path, { config: open, ...csrf }, async (request, reply) => {
        const form = body(request);
        try {
          await link.set(a, signIn.knock(request, reply), {
            token: form.token,
            email: form.email,
            password: form.password ?? '',
          });
          return redirectWith(reply, '/login', { kind: 'success', text: link.done });
        } catch (error) {
          return page(request, reply, form, errorsOf(error));
        }
      });
    }

    app.get(
      '/verify-email/:id/:hash',
      { config: open },
      async (request: FastifyRequest<{ Params: { id: string; hash: string }; Querystring: Form }>, reply) => {
        try {
          await verifyEmail(
            a,
            request.params.id,
            request.params.hash,
            request.query.expires ?? '',
            request.query.signature ?? '',
          );
          return redirectWith(reply, request.user ? '/' : '/login', {
            kind: 'success',
            text: 'Thank you: your email address is confirmed.',
          });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return sendPage(
            reply,
            <MessagePage ctx={pageContext(request, reply)} title="This link does not work" status={403}>
              <p>{error.detail}</p>
              {request.user ? <ResendForm ctx={pageContext(request, reply)} /> : null}
            </MessagePage>,
            403,
          );
        }
      },
    );

    app.get('/verify-email', async (request, reply) =>
      sendPage(
        reply,
        <MessagePage ctx={pageContext(request, reply)} title="Confirm your email address">
          {request.user!.email_verified_at ? (
            <p>Your address {request.user!.email} is confirmed.</p>
          ) : (
            <>
              <p>We sent a link to {request.user!.email}. Open it to confirm the address.</p>
              <ResendForm ctx={pageContext(request, reply)} />
            </>
          )}
        </MessagePage>,
      ),
    );
    app.post('/verify-email', csrf, async (request, reply) => {
      await askForVerificationMail(a, signIn.knock(request, reply), request.user!);
      return redirectWith(reply, '/verify-email', { kind: 'success', text: 'A new confirmation link is on its way.' });
    });
  };
}

function ResendForm({ ctx }: { ctx: PageContext }) {
  return (
    <form method="post" action="/verify-email">
      <CsrfInput token={ctx.csrf} />
      <button type="submit" class="button-secondary">
        Send the link again
      </button>
    </form>
  );
}
