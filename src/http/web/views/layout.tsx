import type { ComponentChildren } from 'preact';
import { recordResources } from '../../../resources/index.ts';
import { allows, atLeast, type Role } from '../../../schema/roles.ts';
import { CsrfInput } from './form.tsx';
import { SearchBox } from './search-box.tsx';

export interface Viewer {
  id: bigint;
  name: string;
  role: Role;
  avatarUrl: string | null;
  emailVerified: boolean;
}

export interface Flash {
  kind: 'success' | 'error' | 'info';
  text: string;
  /** A change that can be taken back from the message: `POST action` with `change_id`, then back to `back`. */
  undo?: { action: string; change_id: string; back: string };
}

/** The message of the last action, with its undo button when it has one; htmx replaces it out of band. */
export function FlashMessage({ flash, csrf, oob }: { flash?: Flash; csrf: string; oob?: boolean }) {
  const Box = flash?.undo ? 'div' : 'p';
  return (
    <div id="flash" hx-swap-oob={oob ? 'true' : undefined}>
      {flash ? (
        // A form may not sit in a paragraph (the parser would close it before the form): with Undo, a div.
        <Box class={`flash flash-${flash.kind}`} role={flash.kind === 'error' ? 'alert' : 'status'}>
          {flash.text}
          {flash.undo ? (
            <form method="post" action={flash.undo.action} class="inline undo">
              <CsrfInput token={csrf} />
              <input type="hidden" name="change_id" value={flash.undo.change_id} />
              <input type="hidden" name="back" value={flash.undo.back} />
              <button type="submit" class="link-button">
                Undo
              </button>
            </form>
          ) : null}
        </Box>
      ) : null}
    </div>
  );
}

export interface PageContext {
  viewer?: Viewer;
  csrf: string;
  flash?: Flash;
  /** The path, for marking the current navigation entry. */
  path: string;
  locale: string;
}

/** The pipeline, after Inquiries: the board, and "My open inquiries" one click from anywhere. */
const PIPELINE_LINKS: [string, string][] = [
  ['/inquiries/board', 'Board'],
  ['/inquiries/board?mine=1&open=1', 'My open inquiries'],
];

function Nav({ ctx }: { ctx: PageContext }) {
  const viewer = ctx.viewer;
  if (!viewer) return null;
  const links: [string, string][] = [
    ['/', 'Dashboard'],
    ...recordResources
      .filter((r) => r.nav && allows(viewer.role, r.access, 'read'))
      .flatMap((r): [string, string][] => [
        [`/${r.name}`, r.name.charAt(0).toUpperCase() + r.name.slice(1)],
        ...(r.name === 'inquiries' ? PIPELINE_LINKS : []),
      ]),
    ...(atLeast(viewer.role, 'agent') ? [['/trash', 'Trash'] as [string, string]] : []),
    ...(recordResources.some((r) => allows(viewer.role, r.access, 'import'))
      ? [['/imports', 'Imports'] as [string, string]]
      : []),
    ...(viewer.role === 'admin'
      ? [['/activity', 'Activity'] as [string, string], ['/settings', 'Settings'] as [string, string]]
      : []),
  ];
  // The most specific link is the current one (Board, not Inquiries, on /inquiries/board); one with a query never.
  const within = (href: string) =>
    href === '/' ? ctx.path === '/' : ctx.path === href || ctx.path.startsWith(`${href}/`);
  const best = links.map(([href]) => href).filter((href) => !href.includes('?') && within(href));
  const current = (href: string) => href === best.sort((a, b) => b.length - a.length)[0];
  return (
    <nav aria-label="Main">
      <ul class="nav">
        {links.map(([href, label]) => (
          <li>
            <a href={href} aria-current={current(href) ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
      <div class="nav-user">
        <Bell />
        <a href="/profile" aria-current={ctx.path.startsWith('/profile') ? 'page' : undefined} class="profile-link">
          {viewer.avatarUrl ? <img src={viewer.avatarUrl} alt="" width={28} height={28} class="avatar-small" /> : null}
          <span>{viewer.name}</span>
        </a>
        <form method="post" action="/logout" class="inline">
          <input type="hidden" name="_csrf" value={ctx.csrf} />
          <button type="submit" class="link-button">
            Sign out
          </button>
        </form>
      </div>
    </nav>
  );
}

/**
 * The header's link to the notifications, with the unread count: the page asks for it once loaded (`unread`
 * undefined), and the answer asks again every 30 s. Without JavaScript it is a plain link.
 */
const BELL =
  'M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66' +
  'A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z';

export function Bell({ unread }: { unread?: number }) {
  const shown = unread === undefined || unread === 0 ? null : unread > 99 ? '99+' : String(unread);
  return (
    <a
      href="/notifications"
      id="bell"
      class="bell"
      hx-get="/notifications/bell"
      hx-trigger={unread === undefined ? 'load' : 'every 30s'}
      hx-swap="outerHTML"
      aria-label={shown ? `Notifications, ${unread} unread` : 'Notifications'}
    >
      <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
        <path d={BELL} />
      </svg>
      {shown ? <span class="badge">{shown}</span> : null}
    </a>
  );
}

// htmx's settings, read from a meta tag (written as JSON, key order kept).
const HTMX_CONFIG = {
  includeIndicatorStyles: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  refreshOnHistoryMiss: true,
};

export function Layout({ ctx, title, children }: { ctx: PageContext; title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* Back and Forward within a list restore htmx's copy of the page, scroll included (app.js writes the
            search and filters into it first); an address it has no copy of is loaded whole, never swapped in. */}
        <meta name="htmx-config" content={JSON.stringify(HTMX_CONFIG)} />
        <title>{`${title} · Leadbook`}</title>
        <link rel="stylesheet" href="/assets/app.css" />
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <script src="/assets/htmx.min.js" defer></script>
        <script src="/assets/app.js" defer></script>
        {ctx.viewer ? <script src="/assets/search.js" defer></script> : null}
      </head>
      <body hx-headers={JSON.stringify({ 'x-csrf-token': ctx.csrf })}>
        <a href="#main" class="skip-link">
          Skip to content
        </a>
        <header class="site-header">
          <a href="/" class="brand">
            Leadbook
          </a>
          {ctx.viewer ? <SearchBox /> : null}
          <Nav ctx={ctx} />
        </header>
        <main id="main" tabIndex={-1}>
          <FlashMessage flash={ctx.flash} csrf={ctx.csrf} />
          {ctx.viewer && !ctx.viewer.emailVerified && ctx.path !== '/verify-email' ? (
            <p class="flash flash-info">
              Please confirm your email address: <a href="/verify-email">see how, or get a new link</a>.
            </p>
          ) : null}
          {children}
        </main>
        <footer class="site-footer">
          <p>
            Leadbook · <a href="/docs">API reference</a>
          </p>
        </footer>
      </body>
    </html>
  );
}
