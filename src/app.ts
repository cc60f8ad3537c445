// Builds the Fastify app: external plugins, then app plugins, then routes.
// Routes that need a signed-in user live in one encapsulated scope behind the
// auth plugin; health, the OpenAPI document and /docs stay outside it.
import helmet from 'helmet';
import rateLimit from '@fastify/rate-limit';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import qs from 'qs';
import type { Accounts } from './accounts/context.ts';
import { createMailer } from './accounts/mail.ts';
import { mailTokenExpiry } from './accounts/mail-token-expiry.ts';
import { keepPasswordsFor } from './accounts/passwords.ts';
import { decrypt, encrypt, loadAppKey } from './accounts/secrets.ts';
import { databaseStore } from './accounts/throttle.ts';
import { serveAccounts } from './accounts/user-rules.ts';
import { drainUnreadBodies } from './http/drain.ts';
import type { Config } from './config.ts';
import type { Database } from './db/connection.ts';
import { inputSchema, listSchema, oneSchema, recordSchema } from './derive/api-schema.ts';
import { activityRoutes } from './http/api/activity.ts';
import { authRoutes } from './http/api/auth.ts';
import { csvRoutes } from './http/api/csv.ts';
import { bulkRoutes } from './http/api/bulk.ts';
import { offersBulk } from './records/bulk.ts';
import { avatarRoutes } from './http/api/avatars.ts';
import { meRoutes } from './http/api/me.ts';
import { notificationRoutes } from './http/api/notifications.ts';
import { assignmentRoutes } from './http/api/assignment.ts';
import { recordRoutes } from './http/api/records.ts';
import { schemaRoutes } from './http/api/schema.ts';
import { settingsRoutes } from './http/api/settings.ts';
import { refreshLabels } from './records/settings.ts';
import { searchRoutes } from './http/api/search.ts';
import { trashRoutes } from './http/api/trash.ts';
import { duplicateRoutes } from './http/api/duplicates.ts';
import { importRoutes } from './http/api/imports.ts';
import { webhookRoutes } from './http/api/webhooks.ts';
import { declareRouteAccess } from './http/access.ts';
import { authPlugin } from './http/auth.ts';
import { healthRoutes } from './http/health.ts';
import { metricsRoutes, observeRequests, requestId } from './http/metrics.ts';
import { intakeRoutes } from './http/intake.tsx';
import { purgeIdempotencyKeys } from './resources/intake.ts';
import { registerJsonParser } from './http/json.ts';
import { problemSchema, registerOpenApi } from './http/openapi.ts';
import { clientErrorHandler, registerProblemHandlers, sendFrameworkError } from './http/problem.ts';
import { buildSerializerFactory } from './http/serializer.ts';
import { assetRoutes } from './http/web/assets.ts';
import { webApp } from './http/web/plugin.tsx';
import { sendNotFoundPage } from './http/web/render.tsx';
import { recordResources, resources } from './resources/index.ts';
import { purgeTrash } from './records/trash.ts';
import { forgetAbandonedUploads } from './records/imports.ts';
import { remindersJob, startScheduler } from './scheduler.ts';
import { createMetrics, observeDatabase } from './metrics.ts';
import { forgetOldDeliveries, webhookBacklog, webhookDispatcher } from './webhooks/dispatch.ts';
import { sendNotificationMails } from './records/notifications.ts';
import { VERSION } from './version.ts';

export interface AppOptions {
  database: Database;
  config: Config;
  /** Where log lines go (tests capture them). */
  logStream?: NodeJS.WritableStream;
}

const JSON_BODY_LIMIT = 1024 * 1024;

// Header and body fields that may hold a secret: pino writes "[redacted]" instead.
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.token',
  '*.remember_token',
  '*.two_factor_secret',
  '*.two_factor_recovery_codes',
  '*.recovery_code',
  '*.code',
];

// Links carry one-time secrets in their query (reset tokens, signatures, CSRF
// tokens on upload forms): the log shows the URL without their values.
const SECRET_PARAMS = /([?&](?:token|signature|_csrf|email)=)[^&#]*/gi;
const withoutSecrets = (url: string) => url.replace(SECRET_PARAMS, '$1[redacted]');

/**
 * One log line per request, written when it is answered: what was asked (method, URL without secrets, caller), the
 * status and the time. Fastify's default writes a second line when a request arrives. The line is built by the
 * serializers alone (no header, no body), so it is written without the redaction pass, which clones the request and
 * reply objects it is given: the two lines and that pass were a third of what a read by id cost (issue 18). An error
 * line keeps the pass.
 */
class OneLinePerRequest extends LogController {
  /** The app's logger without redaction: set once the app (and its logger) exists, before any request. */
  lines?: FastifyBaseLogger;
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else this.lines?.info({ [this.requestIdLogLabel]: request.id, ...line }, 'request completed');
  }
}

/** A logger's methods, as called with any arguments (pino's types spell out their overloads). */
type Levels = Record<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', (...args: unknown[]) => void>;

/**
 * A request's logger, made when the request first logs through it: a request that goes well never does (its line is
 * OneLinePerRequest's), and pino redacts a child's bindings as it makes it. Making one for every request was 2-3% of
 * a read by id's CPU profile; without it a read allocates a seventh less (young-generation collections per 40,000 reads
 * on SQLite: 425 against 497).
 */
class RequestLogger {
  #made?: FastifyBaseLogger;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}
  private get made(): FastifyBaseLogger & Levels {
    this.#made ??= this.parent.child(this.bindings, this.options);
    return this.#made as FastifyBaseLogger & Levels;
  }
  get level(): string {
    return (this.#made ?? this.parent).level;
  }
  set level(level: string) {
    this.made.level = level;
  }
  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }
  fatal(...args: unknown[]): void {
    this.made.fatal(...args);
  }
  error(...args: unknown[]): void {
    this.made.error(...args);
  }
  warn(...args: unknown[]): void {
    this.made.warn(...args);
  }
  info(...args: unknown[]): void {
    this.made.info(...args);
  }
  debug(...args: unknown[]): void {
    this.made.debug(...args);
  }
  trace(...args: unknown[]): void {
    this.made.trace(...args);
  }
  silent(): void {}
}

const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (parent, bindings, options) =>
  new RequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  database.defaultCountry ??= config.defaultCountry;
  const requestLines = new OneLinePerRequest();
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(options.logStream ? { stream: options.logStream } : {}),
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: {
        req: (request: FastifyRequest) => ({
          method: request.method,
          url: withoutSecrets(request.url),
          remoteAddress: request.ip,
        }),
      },
    },
    logController: requestLines,
    childLoggerFactory: requestLogger,
    bodyLimit: JSON_BODY_LIMIT,
    clientErrorHandler,
    trustProxy: config.trustProxy,
    routerOptions: {
      ignoreTrailingSlash: true,
      // filter[name][contains]=x arrives as nested objects; qs never builds
      // prototype keys and its limits bound the work a query can cause.
      querystringParser: (s: string) =>
        qs.parse(s, { depth: 2, parameterLimit: 100, arrayLimit: 0, allowPrototypes: false, strictDepth: false }),
    },
    // Fastify's factory type is overloaded per server kind; ours serves any.
    schemaController: { compilersFactory: { buildSerializer: buildSerializerFactory as never } },
    forceCloseConnections: 'idle',
    frameworkErrors: sendFrameworkError,
    // Each request's id, on its log lines (`reqId`) and its answer (X-Request-Id): the caller's own when usable.
    genReqId: requestId,
  });
  requestLines.lines = app.log.child({}, { redact: [] });
  // One registry per app (src/metrics.ts); what is built below counts on `metrics`, plugins on `app.metrics`.
  const metrics = createMetrics();
  app.decorate('metrics', metrics);
  observeDatabase(metrics, database);
  observeRequests(app, metrics);

  const accounts: Accounts = {
    database,
    config,
    key: loadAppKey(config.appKey, config.dataDir),
    mailer: createMailer(config, app.log),
    log: app.log,
  };
  database.webhooks ??= {
    allowPrivate: config.webhooksAllowPrivate,
    dnsServers: config.webhooksDnsServers,
    seal: (plain) => encrypt(accounts.key, plain),
    open: (sealed) => decrypt(accounts.key, sealed),
  };
  // Webhook deliveries, on the scheduler's lease holder (src/webhooks/dispatch.ts).
  const webhooks = webhookDispatcher(database, resources, app.log, {
    settings: database.webhooks,
    concurrency: config.webhooksConcurrency,
    retryBaseMs: config.webhooksRetryBaseMs,
    retryForMs: 24 * 60 * 60 * 1000,
    timeoutMs: 10_000,
    counted: (outcome) => metrics.webhookAttempts.inc({ outcome }),
  });
  metrics.gaugeFrom('leadbook_webhook_backlog', 'Webhook deliveries waiting to be sent (or retried)', () =>
    webhookBacklog(database.db),
  );
  serveAccounts(accounts);
  keepPasswordsFor(config);

  declareRouteAccess(
    app,
    recordResources.map((r) => r.name),
  );
  registerJsonParser(app);
  drainUnreadBodies(app);
  registerProblemHandlers(app, sendNotFoundPage);
  // Security headers on every answer. Scripts and styles come only from our own
  // origin (no inline script, no inline style); nobody may frame the app.
  // helmet is built once here: @fastify/helmet rebuilt it, CSP parsing
  // included, on every request (4% of a get by id's time in a profile); and
  // its twelve steps setting headers took 4% more.
  const securityHeaders = helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'blob:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        // The app may be served over plain HTTP on a laptop or a LAN: never rewrite its own URLs to https.
        upgradeInsecureRequests: null,
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  });
  // Its headers are the same for every request: helmet is asked once, and they are set from the list it gave.
  const headerList: [string, string][] = [];
  const recorder = { setHeader: (name: string, value: unknown) => headerList.push([name, String(value)]) };
  securityHeaders({} as never, { ...recorder, removeHeader: () => {} } as never, () => {});
  const headers = Object.fromEntries(headerList);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
  await app.register(rateLimit, { global: false, store: databaseStore(database) });
  await registerOpenApi(app, VERSION);

  app.addSchema(problemSchema);
  for (const resource of recordResources) {
    for (const schema of [recordSchema(resource), inputSchema(resource), oneSchema(resource), listSchema(resource)])
      app.addSchema(schema);
  }

  // Timed work, on one process at a time. The lease outlives a few ticks (10 to 20 s), so a dead holder is replaced
  // within 30 s.
  const scheduler = startScheduler(
    database,
    [
      {
        name: 'empty the trash',
        everyMs: 60 * 60 * 1000,
        run: (db) => purgeTrash(db, config.trashDays).then(() => {}),
      },
      remindersJob(),
      webhooks.job,
      forgetOldDeliveries,
      { name: 'forget old idempotency keys', everyMs: 60 * 60 * 1000, run: purgeIdempotencyKeys },
      { name: 'forget abandoned uploads', everyMs: 60 * 60 * 1000, run: forgetAbandonedUploads },
      {
        name: 'send notification mails',
        everyMs: 0,
        run: (db, held) =>
          sendNotificationMails(db, resources, config.appUrl, (mail) => accounts.mailer.send(mail), held).then(
            () => {},
          ),
      },
      {
        name: 'warn of expiring tokens',
        everyMs: 0,
        run: (db, held) =>
          mailTokenExpiry(db, config.appUrl, (mail) => accounts.mailer.send(mail), held).then(() => {}),
      },
    ],
    app.log,
    {
      tickMs: config.schedulerTickMs,
      leaseMs: config.schedulerLeaseMs,
      runs: metrics.schedulerRuns,
    },
  );
  app.addHook('onClose', async () => {
    await webhooks.stop();
    await scheduler.stop();
    accounts.mailer.close();
  });

  await app.register(healthRoutes(database));
  await app.register(metricsRoutes(metrics.registry, config.metricsToken));
  await app.register(intakeRoutes(database, accounts.key, metrics.intakeDrops));
  await app.register(assetRoutes);
  await app.register(async (signedIn) => {
    // The operations check bodies and queries themselves (one place for the API and
    // the pages, with field-named messages); route schemas document and shape responses.
    signedIn.setValidatorCompiler(() => () => true);
    // The words admins gave the state fields, as the database has them now (a database away keeps the last ones).
    signedIn.addHook('onRequest', async () => {
      await refreshLabels(database, resources).catch(() => {});
    });
    await signedIn.register(authPlugin, accounts);
    await signedIn.register(authRoutes(accounts), { prefix: '/api/v1/auth' });
    await signedIn.register(meRoutes(accounts), { prefix: '/api/v1/me' });
    await signedIn.register(notificationRoutes(database), { prefix: '/api/v1/me' });
    await signedIn.register(assignmentRoutes(database), { prefix: '/api/v1' });
    await signedIn.register(avatarRoutes(accounts), { prefix: '/api/v1' });
    await signedIn.register(schemaRoutes(resources), { prefix: '/api/v1' });
    await signedIn.register(settingsRoutes(database, resources), { prefix: '/api/v1' });
    await signedIn.register(activityRoutes(database), { prefix: '/api/v1' });
    await signedIn.register(trashRoutes(database, config.trashDays), { prefix: '/api/v1' });
    await signedIn.register(duplicateRoutes(database), { prefix: '/api/v1' });
    await signedIn.register(importRoutes(database), { prefix: '/api/v1' });
    await signedIn.register(webhookRoutes(database), { prefix: '/api/v1' });
    await signedIn.register(searchRoutes(database), { prefix: '/api/v1' });
    for (const resource of recordResources) {
      await signedIn.register(csvRoutes(database, resource), { prefix: `/api/v1/${resource.name}` });
      await signedIn.register(recordRoutes(database, resource), { prefix: `/api/v1/${resource.name}` });
      if (offersBulk(resource))
        await signedIn.register(bulkRoutes(database, resource), { prefix: `/api/v1/${resource.name}` });
    }
    await signedIn.register(webApp(accounts));
  });
  return app;
}
