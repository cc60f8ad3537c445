/**
 * The little of a logger the account actions use. Fastify's logger (pino)
 * fits it, and so does a test's stub; accounts/ never imports Fastify.
 */
export interface Log {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}
