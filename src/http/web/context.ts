// What every page needs: who is looking, a CSRF token for its forms, the flash
// message of the previous action, and the viewer's language for dates.
import type {} from '@fastify/csrf-protection';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { publicUser } from '../../accounts/store.ts';
import type { Flash, PageContext } from './views/layout.tsx';

const FLASH_COOKIE = 'leadbook_flash';

/** A message is a sentence or two; one that quotes a long input is cut, so that its cookie stays under 4 KB. */
const MAX_FLASH = 500;

export function setFlash(reply: FastifyReply, flash: Flash): void {
  const text = [...flash.text].length > MAX_FLASH ? `${[...flash.text].slice(0, MAX_FLASH - 1).join('')}…` : flash.text;
  reply.setCookie(FLASH_COOKIE, Buffer.from(JSON.stringify({ ...flash, text })).toString('base64url'), {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    maxAge: 60,
  });
}

/** Where a flash's Undo may post: a record's restore, or a merge's undo. */
const UNDO_ACTIONS = [/^\/[a-z_-]+\/\d+\/restore$/, /^\/[a-z_-]+\/merge\/\d+\/undo$/];

function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash | undefined {
  const raw = request.cookies[FLASH_COOKIE];
  if (!raw) return undefined;
  reply.clearCookie(FLASH_COOKIE, { path: '/' });
  try {
    const value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Flash;
    if (!['success', 'error', 'info'].includes(value.kind) || typeof value.text !== 'string') return undefined;
    // Only an undo of a record's change or of a merge, back to a page of the app, is offered.
    const { undo } = value;
    const undoable =
      undo === undefined ||
      (UNDO_ACTIONS.some((action) => action.test(String(undo.action))) &&
        /^\d+$/.test(String(undo.change_id)) &&
        /^\/(?!\/)/.test(String(undo.back)));
    return undoable ? value : { kind: value.kind, text: value.text };
  } catch {
    return undefined;
  }
}

function localeOf(request: FastifyRequest): string {
  const wanted = request.headers['accept-language']?.split(',')[0]?.split(';')[0]?.trim();
  try {
    return wanted ? (Intl.DateTimeFormat.supportedLocalesOf([wanted])[0] ?? 'en') : 'en';
  } catch {
    return 'en';
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The page's context, once worked out (on the request, not in a WeakMap: see `confirmSignIn` in http/auth.ts). */
    pageContext?: PageContext;
  }
}

/** Worked out once per request: one CSRF token, and the flash is taken only once. */
export function pageContext(request: FastifyRequest, reply: FastifyReply): PageContext {
  if (request.pageContext) return request.pageContext;
  const user = request.user;
  const shown = user ? publicUser(user) : undefined;
  const ctx: PageContext = {
    viewer: user
      ? {
          id: user.id,
          name: user.name,
          role: user.role,
          avatarUrl: (shown?.avatar_url as string | null) ?? null,
          emailVerified: user.email_verified_at !== null,
        }
      : undefined,
    csrf: reply.generateCsrf(),
    flash: takeFlash(request, reply),
    path: request.url.split('?')[0] ?? '/',
    locale: localeOf(request),
  };
  request.pageContext = ctx;
  return ctx;
}

/** Redirects after a POST (303: the browser follows with GET), with a message for the next page. */
/** A longer address is cut to its path when redirecting: clients refuse headers past 16 KiB; no list needs it. */
const MAX_LOCATION = 4096;

export function redirectWith(reply: FastifyReply, to: string, flash?: Flash): FastifyReply {
  if (flash) setFlash(reply, flash);
  return reply.redirect(to.length > MAX_LOCATION ? to.split(/[?#]/)[0]! : to, 303);
}

/**
 * The CSRF check of a multipart form, whose token comes in a field before the file (never in the address, where
 * it would stay in the history) or in htmx's x-csrf-token header. It runs once the file's part is reached, before
 * the file is read, through @fastify/csrf-protection's own check; a failure is thrown as that plugin's error.
 */
export function checkCsrf(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  part: MultipartFile | undefined,
): Promise<void> {
  const field = part?.fields._csrf;
  const token = field && !Array.isArray(field) && field.type === 'field' ? String(field.value) : undefined;
  // Where the plugin's getToken (plugin.tsx) looks first.
  request.body = { _csrf: token };
  return new Promise((resolve, reject) => {
    const probe = Object.create(reply, { send: { value: reject } }) as FastifyReply;
    app.csrfProtection(request, probe, () => resolve());
  });
}

/** Only same-site paths are followed after sign-in. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\')
    ? next
    : '/';
}
