// Every error leaves as application/problem+json. 4xx details are ours or
// Fastify's own (safe to show); a 5xx is logged with its cause and answered
// with a generic message.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, toProblem } from '../errors.ts';
import { nodeHttp } from '../node-http.ts';

const { STATUS_CODES } = nodeHttp;

const FASTIFY_CODES: Record<string, [number, string, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'The request body is larger than this route accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'Send the body as application/json.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'bad_request', 'The Content-Length header does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'malformed_json', 'The request body is empty but declared as JSON.'],
  FST_ERR_BAD_URL: [400, 'bad_request', 'The URL is malformed.'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'uri_too_long', 'A part of the URL is longer than any this app uses.'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'bad_request', 'The request could not be routed.'],
};

// Connection failures of either database: the process stays up and answers 503.
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
]);

function isUnavailable(error: Error & { code?: string }): boolean {
  return (
    (error.code !== undefined && UNAVAILABLE.has(error.code)) ||
    /Connection terminated|is not queryable|timeout exceeded when trying to connect/i.test(error.message)
  );
}

/**
 * A request Node cannot read (headers past its 16 KiB, a broken request line) is answered before any route, by
 * Fastify's clientErrorHandler: as problem+json too, then the connection is closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, detail]: [number, string, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The address and headers are larger than 16 KiB together; send less.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request did not arrive in time.']
        : [400, 'bad_request', 'The request could not be read as HTTP.'];
  const body = JSON.stringify(toProblem(new AppError(status, code, detail)));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  return reply
    .code(error.status)
    .type('application/problem+json; charset=utf-8')
    .send(JSON.stringify(toProblem(error)));
}

export function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) return new AppError(...known);
  if (error.validation) {
    const errors: Record<string, string[]> = {};
    for (const v of error.validation) {
      const key =
        v.instancePath.replace(/^\//, '').replace(/\//g, '.') ||
        String(v.params?.missingProperty ?? error.validationContext ?? 'body');
      errors[key] ??= [];
      errors[key].push(v.message ?? 'is invalid');
    }
    return new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);
  }
  if (isUnavailable(error))
    return new AppError(503, 'unavailable', 'The database cannot be reached right now; try again shortly.');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError(status, 'bad_request', error.message);
  return new AppError(500, 'internal_error', 'Something went wrong on our side; it has been logged.');
}

/**
 * Fastify's router refuses a malformed URL or an over-long path parameter
 * before any route or error handler runs; this answers those as problems too
 * (the Fastify option `frameworkErrors`).
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No hook runs for these, helmet's neither: the headers every answer carries,
  // in their strictest form (a problem document needs no sub-resources at all).
  reply.headers({
    'x-request-id': request.id,
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
  });
  void sendProblem(reply, toAppError(error));
}

export function registerProblemHandlers(
  app: FastifyInstance,
  htmlNotFound?: (reply: FastifyReply) => FastifyReply,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    // The database being away is expected to pass: one warning line per request, no stack.
    if (appError.status === 503)
      request.log.warn({ code: appError.code, cause: error.message }, 'database unavailable');
    else if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (appError.status === 503) reply.header('Retry-After', '5');
    return sendProblem(reply, appError);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    // A person who followed a bad link gets a page; programs get problem+json.
    if (htmlNotFound && !path.startsWith('/api/') && request.headers.accept?.includes('text/html'))
      return htmlNotFound(reply);
    return sendProblem(reply, new AppError(404, 'not_found', `There is no route ${request.method} ${path}.`));
  });
}
