import type { ComponentChildren } from 'preact';
import { recordResources } from '../../../resources/index.ts';
import { allows, atLeast, type Role } from '../../../schema/roles.ts';

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
}

export interface PageContext {
  viewer?: Viewer;
  csrf: string;
  flash?: Flash;
  /** The path, for marking the current navigation entry. */
  path: string;
  locale: string;
}

function Nav({ ctx }: { ctx: PageContext }) {
  const viewer = ctx.viewer;
  if (!viewer) return null;
  const links: [string, string][] = [
    ['/', 'Dashboard'],
    ...recordResources
      .filter((r) => r.nav && allows(viewer.role, r.access, 'read'))
      .map((r): [string, string] => [`/${r.name}`, r.name.charAt(0).toUpperCase() + r.name.slice(1)]),
    ...(atLeast(viewer.role, 'agent') ? [['/trash', 'Trash'] as [string, string]] : []),
    ...(viewer.role === 'admin' ? [['/activity', 'Activity'] as [string, string]] : []),
  ];
  const current = (href: string) => (href === '/' ? ctx.path === '/' : ctx.path.startsWith(href));
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
      </head>
      <body hx-headers={JSON.stringify({ 'x-csrf-token': ctx.csrf })}>
        <a href="#main" class="skip-link">
          Skip to content
        </a>
        <header class="site-header">
          <a href="/" class="brand">
            Leadbook
          </a>
          <Nav ctx={ctx} />
        </header>
        <main id="main" tabIndex={-1}>
          {ctx.flash ? (
            <p class={`flash flash-${ctx.flash.kind}`} role={ctx.flash.kind === 'error' ? 'alert' : 'status'}>
              {ctx.flash.text}
            </p>
          ) : null}
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
