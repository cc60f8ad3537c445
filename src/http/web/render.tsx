// Pages are preact components rendered to a string on the server: JSX escapes
// every value it prints, so stored text can never become markup.
import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * An address may answer htmx with a fragment and a browser with the page (the list's live search, whose address
 * htmx pushes into the history). Both say so (Vary), and a fragment is never stored: Back and Forward once showed
 * the cached fragment as the page, bare and unstyled. Every page and fragment goes through here, so a new route
 * that answers by HX-Request follows the same rule.
 */
function variesOnHtmx(reply: FastifyReply): FastifyReply {
  const vary = String(reply.getHeader('vary') ?? '');
  return /(^|,)\s*hx-request\s*(,|$)/i.test(vary)
    ? reply
    : reply.header('Vary', vary ? `${vary}, HX-Request` : 'HX-Request');
}

export function sendPage(reply: FastifyReply, node: VNode, status = 200): FastifyReply {
  return variesOnHtmx(reply)
    .code(status)
    .type('text/html; charset=utf-8')
    .send(`<!doctype html>${renderToString(node)}`);
}

/** The page for an unknown address: no viewer is known there, so no navigation. */
export function sendNotFoundPage(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Not found · Leadbook</title>
        <link rel="stylesheet" href="/assets/app.css" />
      </head>
      <body>
        <header class="site-header">
          <a href="/" class="brand">
            Leadbook
          </a>
        </header>
        <main id="main">
          <section class="card narrow">
            <h1>This page does not exist</h1>
            <p>The link may be mistyped, or the page was moved.</p>
            <p>
              <a href="/">Go to the dashboard</a>
            </p>
          </section>
        </main>
      </body>
    </html>,
    404,
  );
}

/** A fragment for htmx to swap in (no document around it). */
export function sendFragment(reply: FastifyReply, node: VNode): FastifyReply {
  return variesOnHtmx(reply)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(renderToString(node));
}
