// The web app: server-rendered pages behind the same sign-in as the API. Forms
// carry a CSRF token (@fastify/csrf-protection, its secret in a cookie); a
// stranger is sent to the sign-in page; errors are pages, not JSON.
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import qs from 'qs';
import type { Accounts } from '../../accounts/context.ts';
import { countUsers } from '../../accounts/store.ts';
import { recordResources } from '../../resources/index.ts';
import { toAppError } from '../problem.ts';
import { authPages } from './auth-pages.tsx';
import { isPageForm } from '../auth.ts';
import { pageContext, redirectWith, setFlash } from './context.ts';
import { keptForms } from './kept-form.ts';
import { csvPages } from './csv-pages.tsx';
import { bulkPages } from './bulk-pages.tsx';
import { offersBulk } from '../../records/bulk.ts';
import { activityPage } from './activity-page.tsx';
import { settingsPage } from './settings-page.tsx';
import { trashPage } from './trash-page.tsx';
import { importsPage } from './imports-page.tsx';
import { duplicatesPage } from './duplicates-page.tsx';
import { notificationsPage } from './notifications-page.tsx';
import { searchPages } from './search-page.tsx';
import { boardPage } from './board-page.tsx';
import { dashboardPage } from './dashboard.tsx';
import { profilePages } from './profile-pages.tsx';
import { type DetailExtra, recordPages } from './record-pages.tsx';
import { webhookPages, webhookPanel } from './webhook-pages.tsx';
import { listPages } from './list-pages.tsx';
import { sendPage } from './render.tsx';
import { MessagePage } from './views/pages.tsx';

const CSRF_ERRORS = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN']);

/** A same-origin page address from a full URL a browser sent (HX-Current-URL), as path and query. */
function ownPath(request: FastifyRequest, url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.host === request.host ? parsed.pathname + parsed.search : null;
  } catch {
    return null;
  }
}

export function webApp(a: Accounts) {
  const kept = keptForms(a);

  /**
   * A signed-out browser (its session ended) is sent to sign in, then back. htmx gets HX-Redirect, which it
   * follows (a live search would otherwise stay blank); a record form's values are kept for after the sign-in.
   */
  function signInAgain(request: FastifyRequest, reply: FastifyReply) {
    if (request.headers['hx-request']) {
      // A form half typed would be lost if the bell's count sent the page away: htmx leaves the page as it is on a
      // 204, and the next thing the person does leads them to sign in.
      if (request.routeOptions.config.background) return reply.code(204).send();
      const page = ownPath(request, request.headers['hx-current-url'] as string | undefined) ?? '/';
      // The page had been open while signed in: the sign-in page says why it came, as a form's post does.
      setFlash(reply, {
        kind: 'info',
        text: 'Your session had ended, so this page could not be updated. Sign in again to go on where you were.',
      });
      return reply
        .code(401)
        .header('HX-Redirect', `/login?next=${encodeURIComponent(page)}`)
        .type('text/plain; charset=utf-8')
        .send('Your session has ended; sign in again.');
    }
    if (isPageForm(request)) {
      const { path, kept: saved } = kept.keep(request, reply);
      const text = saved
        ? 'Your session had ended, so nothing was saved yet. Sign in ' +
          'again: what you typed is kept, and the form comes back filled.'
        : 'Your session had ended, so nothing was saved. Sign in again, then send the form once more.';
      return redirectWith(reply, `/login?next=${encodeURIComponent(path ?? '/')}`, { kind: 'info', text });
    }
    return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
  }

  return async function plugin(app: FastifyInstance) {
    // Forms nest like the API's query strings: filter[status]=true.
    await app.register(formbody, {
      parser: (body) => qs.parse(body, { depth: 2, parameterLimit: 200, arrayLimit: 0, allowPrototypes: false }),
    });
    await app.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: 'leadbook_csrf',
      cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: 'auto' },
      getToken: (request) => {
        const body = request.body as Record<string, unknown> | undefined;
        const fromBody = typeof body?._csrf === 'string' ? body._csrf : undefined;
        return fromBody ?? (request.headers['x-csrf-token'] as string | undefined);
      },
    });

    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (CSRF_ERRORS.has(error.code)) {
        return sendPage(
          reply,
          <MessagePage ctx={pageContext(request, reply)} title="This form has expired" status={403}>
            <p>For your safety the form could not be sent. Go back, reload the page, and try again.</p>
          </MessagePage>,
          403,
        );
      }
      const e = toAppError(error);
      if (e.status === 401) {
        if ((await countUsers(a.database.db)) === 0) return reply.redirect('/setup', 303);
        return signInAgain(request, reply);
      }
      if (e.status >= 500) request.log.error({ err: error }, 'page failed');
      const titles: Record<number, string> = {
        403: 'Not allowed',
        404: 'Not found',
        429: 'Slow down',
        503: 'Temporarily unavailable',
      };
      return sendPage(
        reply,
        <MessagePage
          ctx={pageContext(request, reply)}
          title={titles[e.status] ?? 'Something went wrong'}
          status={e.status}
        >
          <p>{e.detail}</p>
        </MessagePage>,
        e.status,
      );
    });

    await app.register(authPages(a));
    await app.register(dashboardPage(a.database));
    await app.register(activityPage(a.database));
    await app.register(settingsPage(a.database));
    await app.register(trashPage(a.database, a.config.trashDays));
    await app.register(importsPage(a.database));
    await app.register(duplicatesPage(a.database));
    await app.register(notificationsPage(a.database));
    await app.register(searchPages(a.database));
    await app.register(boardPage(a.database));
    await app.register(profilePages(a));
    await app.register(webhookPages(a.database));
    // More of one resource's record page: a webhook's deliveries and actions.
    const detailExtras: Readonly<Record<string, DetailExtra>> = {
      webhooks: (request, record, page) => webhookPanel(a.database, request, record, page),
    };
    for (const resource of recordResources) {
      await app.register(csvPages(a.database, resource));
      await app.register(recordPages(a.database, resource, kept, a.config.trashDays, detailExtras[resource.name]));
      await app.register(listPages(a.database, resource));
      if (offersBulk(resource)) await app.register(bulkPages(a.database, resource, a.config.trashDays));
    }

    // An unknown address opened by someone signed in keeps the navigation. The root's not-found handler cannot
    // know the viewer (it runs outside the signed-in scope), so this catch-all, which matches only what no
    // other route does, answers for signed-in browsers and hands everything else back to it, failures on the
    // way included (a bad token on an unknown API route), in a scope of its own.
    await app.register(async (unknown) => {
      unknown.setErrorHandler((_error, _request, reply) => reply.callNotFound());
      unknown.get('/*', { config: { public: true } }, async (request, reply) => {
        if (!request.user || request.url.startsWith('/api/') || !request.headers.accept?.includes('text/html'))
          return reply.callNotFound();
        return sendPage(
          reply,
          <MessagePage ctx={pageContext(request, reply)} title="This page does not exist" status={404}>
            <p>The link may be mistyped, or the page was moved.</p>
          </MessagePage>,
          404,
        );
      });
    });
  };
}
