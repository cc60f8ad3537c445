// The profile page: one page, one card per concern, each a plain form that
// works without JavaScript. Errors of a failed form land next to its fields
// (the other forms stay as they were); secrets that are shown once (recovery
// codes, a new token, a 2FA set-up key) get pages of their own.
import type { Session } from '../../../accounts/sessions.ts';
import { TOKEN_ABILITIES, type TokenAbility, type TokenInfo } from '../../../accounts/tokens.ts';
import type { FieldErrors } from '../../../errors.ts';
import type { Field } from '../../../schema/resource.ts';
import { CsrfInput, FieldError, FieldInput } from './form.tsx';
import { Layout, type PageContext } from './layout.tsx';

export type ProfileForm =
  | 'information'
  | 'avatar'
  | 'password'
  | 'enable'
  | 'confirm'
  | 'regenerate'
  | 'disable'
  | 'sessions'
  | 'token'
  | 'delete';
export type FormValues = Record<string, string | undefined>;

/** A form that failed: which one, its messages by field, and what was typed. */
export interface Problem {
  form: ProfileForm;
  errors: FieldErrors;
  values?: FormValues;
}

export interface ProfileData {
  user: Record<string, unknown>;
  fields: readonly Field[];
  twoFactor: 'off' | 'pending' | 'on';
  /** The password was confirmed on this session lately: the forms that allow it do not ask again. */
  recentlyConfirmed: boolean;
  sessions: Session[];
  currentSessionId?: string;
  tokens: TokenInfo[];
}

export const AVATAR_ACCEPT = 'image/jpeg,image/png,image/webp,image/gif';

const SECTIONS: [string, string][] = [
  ['information', 'Profile information'],
  ['avatar', 'Avatar'],
  ['password', 'Password'],
  ['two-factor', 'Two-factor authentication'],
  ['sessions', 'Browser sessions'],
  ['tokens', 'API tokens'],
  ['delete', 'Delete account'],
];

/** The id of a form's input: the profile fields keep FieldInput's `field-NAME`. */
export function inputId(form: ProfileForm, name: string): string {
  return form === 'information' && name !== 'password' ? `field-${name}` : `${form}-${name.replace(/_/g, '-')}`;
}

const LABELS: Record<string, string> = {
  abilities: 'What it may do',
  expires_at: 'Expiry date',
  expires: 'Expires',
  password: 'Password',
  current_password: 'Current password',
  code: 'Code',
  name: 'Name',
  avatar: 'Image',
};

export function When({ iso, locale }: { iso: string; locale: string }) {
  const when = new Date(iso).toLocaleString(locale, { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' });
  const text = `${when} UTC`;
  return <time datetime={iso}>{text}</time>;
}

/** "Firefox on Linux" from a user agent; enough to tell one's own devices apart. */
export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const ua = userAgent;
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /OPR\//.test(ua)
      ? 'Opera'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua) && /Version\//.test(ua)
            ? 'Safari'
            : /^curl\//.test(ua)
              ? 'curl'
              : /^node|undici/i.test(ua)
                ? 'Script'
                : null;
  const os = /iPhone|iPad|iPod/.test(ua)
    ? 'iOS'
    : /Android/.test(ua)
      ? 'Android'
      : /Windows/.test(ua)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua)
          ? 'macOS'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Linux/.test(ua)
              ? 'Linux'
              : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? ua.slice(0, 60);
}

function Input(props: {
  form: ProfileForm;
  name: string;
  label: string;
  type?: string;
  value?: string;
  errors?: FieldErrors;
  hint?: string;
  autocomplete?: string;
  required?: boolean;
  autoFocus?: boolean;
  inputMode?: string;
  maxLength?: number;
  class?: string;
}) {
  const id = inputId(props.form, props.name);
  const messages = props.errors?.[props.name];
  const described =
    [props.hint ? `${id}-hint` : '', messages?.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.type === 'password' ? '' : (props.value ?? '')}
        class={props.class}
        autocomplete={props.autocomplete}
        required={props.required}
        autoFocus={props.autoFocus}
        inputMode={props.inputMode}
        maxLength={props.maxLength}
        aria-invalid={messages?.length ? 'true' : undefined}
        aria-describedby={described}
      />
      {props.hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      <FieldError id={`${id}-error`} messages={messages} />
    </div>
  );
}

/**
 * A password box for the sensitive forms, left out while a recent confirmation covers them (the same rule as the
 * API's).
 */
function ConfirmPassword({ form, data, problem }: { form: ProfileForm; data: ProfileData; problem?: Problem }) {
  const errors = problem?.form === form ? problem.errors : undefined;
  if (data.recentlyConfirmed && !errors?.password) {
    return <p class="field-hint confirm-note">No password needed: you confirmed it a short while ago.</p>;
  }
  return (
    <Input
      form={form}
      name="password"
      label="Your password"
      type="password"
      autocomplete="current-password"
      required
      errors={errors}
      autoFocus={firstInvalid(problem) === 'password' && problem?.form === form}
    />
  );
}

/** Messages that belong to no field (e.g. "the last admin cannot be deleted"). */
function FormError({ form, problem }: { form: ProfileForm; problem?: Problem }) {
  const messages = problem?.form === form ? problem.errors[''] : undefined;
  if (!messages?.length) return null;
  return (
    <p class="field-error" role="alert">
      {messages.join(' ')}
    </p>
  );
}

const firstInvalid = (problem?: Problem) => (problem ? Object.keys(problem.errors).find((k) => k !== '') : undefined);

/** At the top: what went wrong, each message a link to its field. */
function ProblemSummary({ problem, fields }: { problem?: Problem; fields: readonly Field[] }) {
  if (!problem) return null;
  const entries = Object.entries(problem.errors);
  const label = (name: string) =>
    problem.form === 'information' && name === 'password'
      ? 'Current password'
      : (fields.find((f) => f.name === name && problem.form === 'information')?.label ?? LABELS[name] ?? name);
  return (
    <div class="flash flash-error" role="alert">
      <p>
        <strong>{entries.length === 1 ? 'There is a problem:' : 'There are problems:'}</strong>
      </p>
      <ul>
        {entries.map(([name, messages]) => (
          <li>
            {name === '' ? (
              messages.join(' ')
            ) : (
              <a href={`#${inputId(problem.form, name)}`}>{`${label(name)}: ${messages.join('; ')}`}</a>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Section({
  id,
  title,
  children,
  class: extra,
}: {
  id: string;
  title: string;
  children: preact.ComponentChildren;
  class?: string;
}) {
  return (
    <section class={`card${extra ? ` ${extra}` : ''}`} id={id} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

function InformationSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  const mine = problem?.form === 'information' ? problem : undefined;
  const first = firstInvalid(mine);
  const verified = Boolean(data.user.email_verified_at);
  return (
    <Section id="information" title="Profile information">
      <form method="post" action="/profile" novalidate>
        <CsrfInput token={ctx.csrf} />
        <div class="form-grid">
          {data.fields.map((f) => {
            const input = (
              <FieldInput
                field={f}
                value={mine?.values ? mine.values[f.name] : data.user[f.name]}
                errors={mine?.errors[f.name]}
                choices={new Map()}
                autoFocus={first === f.name}
              />
            );
            if (f.name !== 'email') return input;
            return (
              <div>
                {input}
                <p class="field-hint email-note">
                  {verified ? (
                    'Confirmed.'
                  ) : (
                    <>
                      Not confirmed yet. <a href="/verify-email">Confirm it</a>.
                    </>
                  )}
                </p>
              </div>
            );
          })}
        </div>
        <Input
          form="information"
          name="password"
          label="Current password (to change your email)"
          type="password"
          autocomplete="current-password"
          errors={mine?.errors}
          autoFocus={first === 'password'}
          hint="Needed only when you change your email address. A new address has to be confirmed again."
        />
        <FormError form="information" problem={problem} />
        <div class="actions">
          <button type="submit">Save profile</button>
        </div>
      </form>
    </Section>
  );
}

function initials(name: string): string {
  return [...name.trim()].slice(0, 1).join('').toUpperCase() || '?';
}

function AvatarSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  const url = data.user.avatar_url as string | null;
  const errors = problem?.form === 'avatar' ? problem.errors : undefined;
  const invalid = Boolean(errors?.avatar?.length);
  return (
    <Section id="avatar" title="Avatar">
      <div class="avatar-row">
        <figure>
          {url ? (
            <img src={url} alt="Your current avatar" width={96} height={96} class="avatar-large" />
          ) : (
            <span class="avatar-large avatar-placeholder" role="img" aria-label="No avatar yet">
              {initials(String(data.user.name))}
            </span>
          )}
          <figcaption aria-hidden="true">{url ? 'Current' : 'No avatar yet'}</figcaption>
        </figure>
        <figure>
          <img id="avatar-preview" alt="Preview of the new avatar" width={96} height={96} class="avatar-large" hidden />
          <figcaption aria-hidden="true">New, not saved yet</figcaption>
        </figure>
      </div>
      <form method="post" action="/profile/avatar" enctype="multipart/form-data" novalidate>
        {/* Before the file: the server checks the token once it reaches the file, before reading it. */}
        <CsrfInput token={ctx.csrf} />
        <div class="field">
          <label for="avatar-file">{url ? 'Choose a new image' : 'Choose an image'}</label>
          <input
            id="avatar-file"
            name="avatar"
            type="file"
            accept={AVATAR_ACCEPT}
            data-preview="avatar-preview"
            required
            autoFocus={invalid}
            aria-invalid={invalid ? 'true' : undefined}
            aria-describedby={`avatar-file-hint${invalid ? ' avatar-file-error' : ''}`}
          />
          <p class="field-hint" id="avatar-file-hint">
            JPEG, PNG, WebP or GIF, at most 2 MB. It is cropped to a square and stored without its metadata.
          </p>
          <FieldError id="avatar-file-error" messages={errors?.avatar} />
        </div>
        <FormError form="avatar" problem={problem} />
        <div class="actions">
          <button type="submit">Upload avatar</button>
        </div>
      </form>
      {url ? (
        <form method="post" action="/profile/avatar/delete" class="spaced">
          <CsrfInput token={ctx.csrf} />
          <button type="submit" class="button-secondary">
            Remove avatar
          </button>
        </form>
      ) : null}
    </Section>
  );
}

function PasswordSection({ ctx, problem }: { ctx: PageContext; problem?: Problem }) {
  const mine = problem?.form === 'password' ? problem : undefined;
  const first = firstInvalid(mine);
  return (
    <Section id="password" title="Password">
      <p>
        Changing your password signs you out everywhere else: your other browser sessions and all your API tokens end.
        This browser stays signed in.
      </p>
      <form method="post" action="/profile/password" novalidate>
        <CsrfInput token={ctx.csrf} />
        <Input
          form="password"
          name="current_password"
          label="Current password"
          type="password"
          autocomplete="current-password"
          required
          errors={mine?.errors}
          autoFocus={first === 'current_password'}
        />
        <Input
          form="password"
          name="password"
          label="New password"
          type="password"
          autocomplete="new-password"
          required
          errors={mine?.errors}
          autoFocus={first === 'password'}
          hint="At least 8 characters. A long phrase is easier to remember and harder to guess."
        />
        <FormError form="password" problem={problem} />
        <div class="actions">
          <button type="submit">Change password</button>
        </div>
      </form>
    </Section>
  );
}

function TwoFactorSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  if (data.twoFactor === 'on') {
    return (
      <Section id="two-factor" title="Two-factor authentication">
        <p>
          <strong>On.</strong> Signing in asks for a code from your authenticator app, or one of your recovery codes.
        </p>
        <h3>Recovery codes</h3>
        <p>Lost some, or used most of them? Get a fresh set of 8; the old set stops working.</p>
        <form method="post" action="/profile/two-factor/recovery-codes" novalidate>
          <CsrfInput token={ctx.csrf} />
          <ConfirmPassword form="regenerate" data={data} problem={problem} />
          <FormError form="regenerate" problem={problem} />
          <div class="actions">
            <button type="submit" class="button-secondary">
              New recovery codes
            </button>
          </div>
        </form>
        <h3>Turn off</h3>
        <p>Without two-factor authentication, your password alone lets someone in.</p>
        <form method="post" action="/profile/two-factor/disable" novalidate>
          <CsrfInput token={ctx.csrf} />
          <ConfirmPassword form="disable" data={data} problem={problem} />
          <FormError form="disable" problem={problem} />
          <div class="actions">
            <button type="submit" class="button-danger">
              Turn off two-factor authentication
            </button>
          </div>
        </form>
      </Section>
    );
  }
  const confirmErrors = problem?.form === 'confirm' ? problem.errors : undefined;
  return (
    <Section id="two-factor" title="Two-factor authentication">
      <p>
        <strong>Off.</strong> With it on, signing in also asks for a 6-digit code from an authenticator app on your
        phone (such as Google Authenticator, Microsoft Authenticator, 1Password or Aegis).
      </p>
      {data.twoFactor === 'pending' ? (
        <>
          <p>
            You started setting it up. Enter the current code from your authenticator app to finish, or start again for
            a new QR code.
          </p>
          <form method="post" action="/profile/two-factor/confirm" novalidate>
            <CsrfInput token={ctx.csrf} />
            <CodeInput form="confirm" errors={confirmErrors} autoFocus={Boolean(confirmErrors)} />
            <FormError form="confirm" problem={problem} />
            <div class="actions">
              <button type="submit">Turn on</button>
            </div>
          </form>
        </>
      ) : null}
      <form
        method="post"
        action="/profile/two-factor"
        novalidate
        class={data.twoFactor === 'pending' ? 'spaced' : undefined}
      >
        <CsrfInput token={ctx.csrf} />
        <ConfirmPassword form="enable" data={data} problem={problem} />
        <FormError form="enable" problem={problem} />
        <div class="actions">
          <button type="submit" class={data.twoFactor === 'pending' ? 'button-secondary' : undefined}>
            {data.twoFactor === 'pending' ? 'Start again' : 'Enable two-factor authentication'}
          </button>
        </div>
      </form>
    </Section>
  );
}

export function CodeInput({
  form,
  errors,
  autoFocus,
}: {
  form: ProfileForm;
  errors?: FieldErrors;
  autoFocus?: boolean;
}) {
  return (
    <Input
      form={form}
      name="code"
      label="6-digit code from the app"
      class="code-input"
      inputMode="numeric"
      autocomplete="one-time-code"
      maxLength={7}
      required
      errors={errors}
      autoFocus={autoFocus}
      hint="The code changes every 30 seconds; enter the one shown now."
    />
  );
}

function SessionsSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  const others = data.sessions.filter((s) => s.id !== data.currentSessionId).length;
  // This device first, then the others, most recently active first (as listed).
  const sessions = [...data.sessions].sort(
    (x, y) => Number(y.id === data.currentSessionId) - Number(x.id === data.currentSessionId),
  );
  return (
    <Section id="sessions" title="Browser sessions">
      <p>
        Where you are signed in now. If you see a device you do not know, sign out of the other sessions and change your
        password.
      </p>
      <ul class="item-list">
        {sessions.map((s) => (
          <li>
            <div>
              <strong>{describeDevice(s.userAgent)}</strong>
              {s.id === data.currentSessionId ? (
                <>
                  {' '}
                  <span class="tag">This device</span>
                </>
              ) : null}
              <br />
              <span class="muted">
                {s.ip ?? 'Unknown address'} · last active <When iso={s.lastSeenAt} locale={ctx.locale} />
              </span>
            </div>
          </li>
        ))}
      </ul>
      {others > 0 ? (
        <form method="post" action="/profile/sessions/delete" novalidate>
          <CsrfInput token={ctx.csrf} />
          <ConfirmPassword form="sessions" data={data} problem={problem} />
          <FormError form="sessions" problem={problem} />
          <div class="actions">
            <button type="submit" class="button-secondary">
              Sign out of other sessions
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">You are not signed in anywhere else.</p>
      )}
    </Section>
  );
}

/** A new token's expiry, as the form offers it: a period from now, or the date typed. */
export const TOKEN_EXPIRY_CHOICES: readonly { value: string; label: string; days?: number }[] = [
  { value: 'never', label: 'Never' },
  { value: '30', label: 'In 30 days', days: 30 },
  { value: '90', label: 'In 90 days', days: 90 },
  { value: '365', label: 'In a year', days: 365 },
  { value: 'date', label: 'On a date…' },
];

const ABILITY_LABELS: Record<TokenAbility, string> = {
  read: 'Read',
  create: 'Create',
  update: 'Update',
  delete: 'Delete',
};

/** When a token stops working: never, a date to come, or (in red) a date gone by. */
function TokenExpiry({ token, locale }: { token: TokenInfo; locale: string }) {
  if (!token.expires_at) return <>never expires</>;
  if (Date.parse(token.expires_at) > Date.now())
    return (
      <>
        expires <When iso={token.expires_at} locale={locale} />
      </>
    );
  return (
    <strong class="field-error">
      expired <When iso={token.expires_at} locale={locale} />
    </strong>
  );
}

/** What a new token may do, all four ticked until the form comes back with the owner's choice. */
function AbilityChoice({ problem }: { problem?: Problem }) {
  const messages = problem?.errors.abilities;
  const kept = problem?.values?.abilities;
  const ticked = new Set(kept === undefined ? TOKEN_ABILITIES : kept.split(','));
  const described = ['token-abilities-hint', messages?.length ? 'token-abilities-error' : ''].join(' ').trim();
  return (
    <fieldset class="field" aria-describedby={described}>
      <legend>What it may do</legend>
      <input type="hidden" name="abilities" value="" />
      <div class="ticks">
        {TOKEN_ABILITIES.map((ability, i) => (
          <label>
            <input
              type="checkbox"
              name="abilities"
              value={ability}
              checked={ticked.has(ability)}
              id={i === 0 ? 'token-abilities' : undefined}
              aria-invalid={messages?.length ? 'true' : undefined}
              autoFocus={i === 0 && firstInvalid(problem) === 'abilities'}
            />{' '}
            {ABILITY_LABELS[ability]}
          </label>
        ))}
      </div>
      <p class="field-hint" id="token-abilities-hint">
        Read sees records and lists; Create, Update and Delete change them. A script that only reports needs Read.
      </p>
      <FieldError id="token-abilities-error" messages={messages} />
    </fieldset>
  );
}

function ExpiryChoice({ problem }: { problem?: Problem }) {
  const chosen = problem?.values?.expires ?? 'never';
  const tomorrow = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
  return (
    <div class="form-grid">
      <div class="field">
        <label for="token-expires">Expires</label>
        <select id="token-expires" name="expires" aria-describedby="token-expires-hint">
          {TOKEN_EXPIRY_CHOICES.map((c) => (
            <option value={c.value} selected={c.value === chosen}>
              {c.label}
            </option>
          ))}
        </select>
        <p class="field-hint" id="token-expires-hint">
          You get a mail a week before it expires.
        </p>
      </div>
      <Input
        form="token"
        name="expires_at"
        label="Expiry date (for “On a date…”)"
        type="date"
        value={problem?.values?.expires_at}
        errors={problem?.errors}
        autoFocus={firstInvalid(problem) === 'expires_at'}
        hint={`It stops working at the start of that day (UTC); ${tomorrow} at the earliest.`}
      />
    </div>
  );
}

function TokensSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  const mine = problem?.form === 'token' ? problem : undefined;
  return (
    <Section id="tokens" title="API tokens">
      <p>
        Personal access tokens let scripts and other apps use the <a href="/docs">JSON API</a> as you: send one as{' '}
        <code>Authorization: Bearer …</code>. A token is shown once, when it is created; keep it like a password.
      </p>
      {data.tokens.length ? (
        <ul class="item-list">
          {data.tokens.map((t) => (
            <li>
              <div>
                <strong>{t.name}</strong>{' '}
                {t.abilities.map((ability) => (
                  <>
                    <span class="tag">{ABILITY_LABELS[ability]}</span>{' '}
                  </>
                ))}
                <br />
                <span class="muted">
                  <TokenExpiry token={t} locale={ctx.locale} /> · created{' '}
                  <When iso={t.created_at} locale={ctx.locale} /> ·{' '}
                  {t.last_used_at ? (
                    <>
                      last used <When iso={t.last_used_at} locale={ctx.locale} />
                    </>
                  ) : (
                    'never used'
                  )}
                </span>
              </div>
              <form method="post" action={`/profile/tokens/${String(t.id)}/delete`} class="inline">
                <CsrfInput token={ctx.csrf} />
                <button type="submit" class="button-secondary">
                  Revoke<span class="visually-hidden"> the token {t.name}</span>
                </button>
              </form>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">You have no API tokens.</p>
      )}
      <h3>New token</h3>
      <form method="post" action="/profile/tokens" novalidate>
        <CsrfInput token={ctx.csrf} />
        <Input
          form="token"
          name="name"
          label="Token name"
          value={mine?.values?.name}
          errors={mine?.errors}
          required
          autocomplete="off"
          autoFocus={firstInvalid(mine) === 'name'}
          hint="Say where it is used, e.g. “CRM sync script”."
        />
        <AbilityChoice problem={mine} />
        <ExpiryChoice problem={mine} />
        <ConfirmPassword form="token" data={data} problem={problem} />
        <FormError form="token" problem={problem} />
        <div class="actions">
          <button type="submit">Create token</button>
        </div>
      </form>
    </Section>
  );
}

function DeleteSection({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  return (
    <Section id="delete" title="Delete account" class="danger-zone">
      <p>
        <strong>This cannot be undone.</strong> Your account, profile, avatar, sessions and API tokens are removed for
        good and you are signed out.
      </p>
      <form method="post" action="/profile/delete" novalidate>
        <CsrfInput token={ctx.csrf} />
        <ConfirmPassword form="delete" data={data} problem={problem} />
        <FormError form="delete" problem={problem} />
        <div class="actions">
          <button type="submit" class="button-danger">
            Delete my account
          </button>
        </div>
      </form>
    </Section>
  );
}

export function ProfilePage({ ctx, data, problem }: { ctx: PageContext; data: ProfileData; problem?: Problem }) {
  return (
    <Layout ctx={ctx} title="Your profile">
      <h1>Your profile</h1>
      <div class="profile-layout">
        <nav aria-label="Profile sections" class="profile-nav">
          <ul>
            {SECTIONS.map(([id, label]) => (
              <li>
                <a href={`#${id}`}>{label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="profile-sections">
          <ProblemSummary problem={problem} fields={data.fields} />
          <InformationSection ctx={ctx} data={data} problem={problem} />
          <AvatarSection ctx={ctx} data={data} problem={problem} />
          <PasswordSection ctx={ctx} problem={problem} />
          <TwoFactorSection ctx={ctx} data={data} problem={problem} />
          <SessionsSection ctx={ctx} data={data} problem={problem} />
          <TokensSection ctx={ctx} data={data} problem={problem} />
          <DeleteSection ctx={ctx} data={data} problem={problem} />
        </div>
      </div>
    </Layout>
  );
}

/** Shown once, in answer to the enable POST: the QR code, the key for typing in, and the confirm form. */
export function TwoFactorSetupPage({
  ctx,
  setup,
}: {
  ctx: PageContext;
  setup: { secret: string; otpauth_url: string; qr_svg: string };
}) {
  return (
    <Layout ctx={ctx} title="Set up two-factor authentication">
      <section class="card narrow-wide">
        <h1>Set up two-factor authentication</h1>
        <h2>1. Add Leadbook to your authenticator app</h2>
        <p>Scan this QR code with the app.</p>
        {/* Trusted markup: the SVG is made by the qrcode package from our own otpauth:// URL. */}
        <div
          class="qr"
          role="img"
          aria-label="QR code for your authenticator app"
          dangerouslySetInnerHTML={{ __html: setup.qr_svg }}
        />
        <p>Cannot scan it? Enter this key in the app instead (time-based, 6 digits):</p>
        <p>
          <code class="secret" id="two-factor-secret">
            {setup.secret}
          </code>{' '}
          <button type="button" class="button-secondary" data-copy="two-factor-secret" hidden>
            Copy
          </button>
        </p>
        <p>
          On a phone with the app installed: <a href={setup.otpauth_url}>open the set-up in the app</a>.
        </p>
        <h2>2. Enter the code the app shows</h2>
        <form method="post" action="/profile/two-factor/confirm" novalidate>
          <CsrfInput token={ctx.csrf} />
          <CodeInput form="confirm" />
          <div class="actions">
            <button type="submit">Turn on</button>
            <a href="/profile#two-factor">Not now</a>
          </div>
        </form>
        <p class="muted">
          Two-factor authentication stays off until a code is confirmed. This QR code and key are shown only on this
          page.
        </p>
      </section>
    </Layout>
  );
}

function CodesList({ id, codes }: { id: string; codes: string[] }) {
  return (
    <ul class="codes" id={id}>
      {codes.map((c) => (
        <li>{c}</li>
      ))}
    </ul>
  );
}

/** Shown once, in answer to the confirm or regenerate POST. */
export function RecoveryCodesPage({ ctx, codes, fresh }: { ctx: PageContext; codes: string[]; fresh: boolean }) {
  const file = `Leadbook recovery codes\n\n${codes.join('\n')}\n`;
  const download = `data:text/plain;charset=utf-8,${encodeURIComponent(file)}`;
  const title = fresh ? 'New recovery codes' : 'Two-factor authentication is on';
  return (
    <Layout ctx={ctx} title={title}>
      <section class="card narrow-wide">
        <h1>{title}</h1>
        <p class="flash flash-success" role="status">
          {fresh
            ? 'Your new recovery codes are ready; the old ones no longer work.'
            : 'From now on, signing in asks for a code from your authenticator app.'}
        </p>
        <h2>Save your recovery codes</h2>
        <p>
          If you lose your phone, each of these codes lets you sign in once instead of a code from the app.{' '}
          <strong>They are shown only this once</strong>: copy them, download them, or write them down, and keep them
          somewhere safe.
        </p>
        <CodesList id="recovery-codes" codes={codes} />
        <div class="actions">
          <button type="button" class="button-secondary" data-copy="recovery-codes" hidden>
            Copy
          </button>
          <a class="button button-secondary" href={download} download="leadbook-recovery-codes.txt">
            Download
          </a>
          <a class="button" href="/profile#two-factor">
            I have saved them
          </a>
        </div>
      </section>
    </Layout>
  );
}

/** Shown once, in answer to the create POST. */
export function TokenCreatedPage({ ctx, token, name }: { ctx: PageContext; token: string; name: string }) {
  return (
    <Layout ctx={ctx} title="Your new API token">
      <section class="card narrow-wide">
        <h1>Your new API token</h1>
        <p class="flash flash-success" role="status">{`The token “${name}” was created.`}</p>
        <p>
          <strong>Copy it now: it is shown only this once.</strong> Leadbook keeps only a fingerprint of it, so nobody
          can show it to you again.
        </p>
        <p>
          <code class="secret token-box" id="new-token">
            {token}
          </code>
        </p>
        <div class="actions">
          <button type="button" class="button-secondary" data-copy="new-token" hidden>
            Copy
          </button>
          <a class="button" href="/profile#tokens">
            Done
          </a>
        </div>
        <p class="muted">
          Use it as <code>{'Authorization: Bearer <token>'}</code>. Revoke it on your profile when it is no longer
          needed.
        </p>
      </section>
    </Layout>
  );
}
