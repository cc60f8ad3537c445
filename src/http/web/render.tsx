// Pages are preact components rendered to a string on the server: JSX escapes
// every value it prints, so stored text can never become markup.
import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

export function sendPage(reply: FastifyReply, node: VNode, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(`<!doctype html>${renderToString(node)}`);
}

/** A fragment for htmx to swap in (no document around it). */
export function sendFragment(reply: FastifyReply, node: VNode): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(renderToString(node));
}
