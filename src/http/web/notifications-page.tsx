// The notifications page (what told the viewer about work, newest first, each a link to its record), the bell's
// count for the header (asked for when a page loads, then every 30 s), and marking read: one, or all.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { describe, listNotifications, markRead, unreadCount } from '../../records/notifications.ts';
import { resources } from '../../resources/index.ts';
import { kinds } from '../../schema/kinds.ts';
import { pageContext, redirectWith, safeNext } from './context.ts';
import { sendFragment, sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { Bell, Layout } from './views/layout.tsx';

const labelOf = (name: string) => resources.find((r) => r.name === name)?.label ?? name;

export function notificationsPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get('/notifications', async (request: FastifyRequest<{ Querystring: { cursor?: string } }>, reply) => {
      const cursor = typeof request.query.cursor === 'string' ? request.query.cursor : undefined;
      const list = await listNotifications(database.db, request.user!.id, resources, cursor);
      const page = pageContext(request, reply);
      return sendPage(
        reply,
        <Layout ctx={page} title="Notifications">
          <div class="toolbar">
            <h1>Notifications</h1>
            {list.meta.unread > 0 ? (
              <form method="post" action="/notifications/read" class="inline">
                <CsrfInput token={page.csrf} />
                <input type="hidden" name="all" value="true" />
                <button type="submit" class="button-secondary">
                  Mark all {list.meta.unread} read
                </button>
              </form>
            ) : null}
          </div>
          {list.data.length === 0 ? (
            <p class="card empty">
              Nothing yet. You are told here when work is assigned to you, when someone mentions you in a note, and when
              a task of yours is due.
            </p>
          ) : (
            <ul class="card notifications">
              {list.data.map((n) => (
                <li class={n.read ? 'notification' : 'notification unread'}>
                  <a href={`/${n.record.resource}/${String(n.record.id)}`}>
                    {describe(n.kind, labelOf(n.record.resource), n.record.title)}
                  </a>
                  {n.read ? null : <span class="visually-hidden"> (unread)</span>}
                  <time datetime={n.at} class="muted">
                    {kinds.dateTime.display(n.at, page.locale).text}
                  </time>
                  {n.read ? null : (
                    <form method="post" action="/notifications/read" class="inline">
                      <CsrfInput token={page.csrf} />
                      <input type="hidden" name="ids" value={String(n.id)} />
                      <button type="submit" class="link-button">
                        Mark read
                      </button>
                    </form>
                  )}
                </li>
              ))}
            </ul>
          )}
          {list.meta.next_cursor ? (
            <p>
              <a href={`/notifications?cursor=${list.meta.next_cursor}`}>Older</a>
            </p>
          ) : null}
        </Layout>,
      );
    });

    app.get('/notifications/bell', { config: { background: true } }, async (request, reply) =>
      sendFragment(reply, <Bell unread={await unreadCount(database.db, request.user!.id)} />),
    );

    app.post('/notifications/read', { preHandler: app.csrfProtection }, async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, unknown>;
      const n = await markRead(database.db, request.user!.id, form);
      const next = typeof form.next === 'string' && form.next ? safeNext(form.next) : '/notifications';
      return redirectWith(reply, next, {
        kind: 'success',
        text: n === 1 ? 'Marked read.' : `${n} notifications marked read.`,
      });
    });
  };
}
