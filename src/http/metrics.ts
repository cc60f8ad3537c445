// Observability at the HTTP door: every request gets an id (a caller's own X-Request-Id when it is a plain token,
// else a fresh UUID) that its log lines carry as `reqId` and its answer as X-Request-Id; every answer is counted and
// timed by route pattern and status; and GET /metrics serves the app's registry (src/metrics.ts) in Prometheus's
// text format, to the bearer of METRICS_TOKEN when one is set (to anyone otherwise: firewall it then).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { AppError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics (src/metrics.ts): count and time things on them; GET /metrics shows them. */
    metrics: Metrics;
  }
}

/** A caller's id that is safe to log and to send back: no spaces, quotes or control characters, not too long. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when it is usable (one id across their systems and ours). */
export function requestId(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The label of a request that matched no route: its path would make a series per URL a scanner tries. */
const UNMATCHED = '(unmatched)';

/**
 * On the root instance, before the routes: X-Request-Id on every answer (a refused URL's too: see
 * sendFrameworkError), and each answer counted and timed.
 */
export function observeRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Each series' children, kept: prom-client hashes the label set on every call otherwise.
  const series = new Map<string, readonly [{ inc(): void }, { observe(seconds: number): void }]>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let children = series.get(key);
    if (!children) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      children = [metrics.httpRequests.labels(labels), metrics.httpDuration.labels(labels)];
      series.set(key, children);
    }
    children[0].inc();
    children[1].observe(reply.elapsedTime / 1000);
    done();
  });
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** `Authorization: Bearer <token>`, compared in constant time (hashed first, so its length does not show either). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/** GET /metrics: outside the signed-in scope; a scraper has no account, only METRICS_TOKEN. */
export function metricsRoutes(registry: Registry, token: string | undefined) {
  return async function plugin(app: FastifyInstance) {
    // Not in the OpenAPI document: it is for Prometheus, not for API clients (README.md, "Metrics").
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new AppError(401, 'unauthenticated', 'Send METRICS_TOKEN as Authorization: Bearer <token>.');
      }
      const text = await registry.metrics();
      return reply.type(registry.contentType).header('cache-control', 'no-store').send(text);
    });
  };
}
