// What was typed into a record form when the session had ended is not lost.
// The refused post's values (never a password or the CSRF token) are sealed
// with the app key (AES-256-GCM) into a short-lived cookie of the user's own
// browser, the sign-in page says what happened, and after signing in again the
// same form comes back filled with them, to be checked and saved by the
// person, never saved by itself. An edit form keeps its ETag, so a change
// someone else made meanwhile is still caught when it is saved.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts } from '../../accounts/context.ts';
import { decrypt, encrypt } from '../../accounts/secrets.ts';
import { recordResources } from '../../resources/index.ts';

const COOKIE = 'leadbook_kept_form';
const KEEP_SECONDS = 60 * 60;
/** A cookie holds about 4 KB; what does not fit is not kept (and the sign-in page says so). */
const MAX_COOKIE_CHARS = 3800;
/** The CSRF token (a fresh form has its own) and anything that holds a password are never carried. */
const neverKept = (name: string) => name === '_csrf' || /password/i.test(name);
const FORM_PAGES = new RegExp(`^/(${recordResources.map((r) => r.name).join('|')})/(new|\\d{1,19}/edit)$`);

interface Kept {
  /** What the sealed text is, so no other value sealed with the app key is ever taken for it. */
  purpose: typeof PURPOSE;
  /** Unix milliseconds: the sealed text says when it stops counting, whatever the browser does with the cookie. */
  expiresAt: number;
  path: string;
  values: Record<string, string>;
}
const PURPOSE = 'leadbook kept form v1';

/** The record form page the post came from: its Referer, when that is one of our record forms. */
function formPageOf(request: FastifyRequest): string | null {
  const referer = request.headers.referer;
  if (!referer) return null;
  try {
    const url = new URL(referer);
    if (url.host !== request.host || !FORM_PAGES.test(url.pathname)) return null;
    return url.pathname + url.search;
  } catch {
    return null;
  }
}

export function keptForms(a: Accounts) {
  return {
    /**
     * Seals the values of a record form posted by a signed-out browser into a cookie; answers the form page to
     * come back to, or null when the post was no record form or its values do not fit.
     */
    keep(request: FastifyRequest, reply: FastifyReply): { path: string | null; kept: boolean } {
      const path = formPageOf(request);
      const body = request.body;
      if (!path || !body || typeof body !== 'object') return { path, kept: false };
      const values = Object.fromEntries(
        Object.entries(body).filter(([k, v]) => !neverKept(k) && typeof v === 'string'),
      ) as Record<string, string>;
      const kept: Kept = { purpose: PURPOSE, expiresAt: Date.now() + KEEP_SECONDS * 1000, path, values };
      const sealed = encrypt(a.key, deflateRawSync(JSON.stringify(kept)).toString('base64'));
      if (sealed.length > MAX_COOKIE_CHARS) return { path, kept: false };
      reply.setCookie(COOKIE, sealed, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
        maxAge: KEEP_SECONDS,
      });
      return { path, kept: true };
    },
    /** The values kept for this form page, once (the cookie is cleared), or undefined. */
    take(request: FastifyRequest, reply: FastifyReply): Record<string, string> | undefined {
      const sealed = request.cookies[COOKIE];
      if (!sealed) return undefined;
      const opened = decrypt(a.key, sealed);
      let kept: Kept | undefined;
      try {
        kept = opened
          ? (JSON.parse(inflateRawSync(Buffer.from(opened, 'base64')).toString('utf8')) as Kept)
          : undefined;
      } catch {
        kept = undefined;
      }
      const valid =
        kept?.purpose === PURPOSE &&
        typeof kept.expiresAt === 'number' &&
        Date.now() < kept.expiresAt &&
        !!kept.values &&
        typeof kept.values === 'object';
      if (valid && kept!.path !== request.url) return undefined;
      reply.clearCookie(COOKIE, { path: '/' });
      return valid
        ? (Object.fromEntries(
            Object.entries(kept!.values).filter(([k, v]) => !neverKept(k) && typeof v === 'string'),
          ) as Record<string, string>)
        : undefined;
    },
  };
}

export type KeptForms = ReturnType<typeof keptForms>;
