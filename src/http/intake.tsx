// The public doors of the intake forms (CONTRACT.md, "Intake"), open to anyone: `POST /api/v1/intake/:slug` (JSON or
// form-encoded, CORS for the form's allowed origins only, `Idempotency-Key`) and the hosted page `/f/:slug`, a
// plain form that works without JavaScript and may be framed by the allowed origins (that page only). Each form
// takes 10 submissions a minute per address, counted in the database like the sign-in throttle (a retry of a kept
// Idempotency-Key is not counted: it creates nothing); a body is at most 16 KiB.
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Counter } from 'prom-client';
import type { AppKey } from '../accounts/secrets.ts';
import type { Database } from '../db/connection.ts';
import { AppError, type FieldErrors } from '../errors.ts';
import { findForm, type IntakeForm, type Received, receive, renderToken, TOKEN, TRAP } from '../resources/intake.ts';
import { inquiry } from '../resources/index.ts';
import { problem } from './openapi.ts';
import { sendPage } from './web/render.tsx';
import { FieldInput } from './web/views/form.tsx';

const PER_MINUTE = 10;
const BODY_LIMIT = 16 * 1024;
type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

async function formOf(database: Database, slug: string): Promise<IntakeForm> {
  const form = typeof slug === 'string' ? await findForm(database.db, slug) : undefined;
  if (!form) throw new AppError(404, 'not_found', 'There is no such form, or it is closed.');
  return form;
}

function HostedForm({
  form,
  values,
  errors,
  token,
}: {
  form: IntakeForm;
  values: Record<string, unknown>;
  errors?: FieldErrors;
  token: string;
}) {
  return (
    <form method="post" action={`/f/${form.slug}`} class="card" novalidate>
      <input type="hidden" name={TOKEN} value={token} />
      {/* A trap for programs that fill in every box: hidden from people and from screen readers. */}
      <div class="trap" aria-hidden="true">
        <label for="f-website">Leave this empty</label>
        <input id="f-website" name={TRAP} tabIndex={-1} autocomplete="off" />
      </div>
      {form.fields.map((name) => {
        const field = inquiry.field(name)!;
        return (
          <FieldInput
            field={field}
            value={values[name] ?? null}
            errors={errors?.[name]}
            choices={new Map()}
            required={form.required.includes(name)}
          />
        );
      })}
      <button type="submit">Send</button>
    </form>
  );
}

function HostedPage({ title, children }: { title: string; children: unknown }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <link rel="stylesheet" href="/assets/app.css" />
      </head>
      <body class="hosted">
        <main id="main">{children as never}</main>
      </body>
    </html>
  );
}

function ThankYou({ form }: { form: IntakeForm }) {
  return (
    <HostedPage title="Thank you">
      <p class="flash flash-success" role="status">
        {form.success_message}
      </p>
    </HostedPage>
  );
}

/** This page, and only it, may be framed by the form's allowed origins. */
function frameableBy(reply: FastifyReply, form: IntakeForm): void {
  const policy = String(reply.getHeader('content-security-policy') ?? '');
  const ancestors = form.allowed_origins.length ? form.allowed_origins.join(' ') : "'none'";
  reply.header('content-security-policy', policy.replace(/frame-ancestors [^;]*/, `frame-ancestors ${ancestors}`));
  if (form.allowed_origins.length) reply.removeHeader('x-frame-options');
}

/** `drops` counts what the doors drop (spam, by its reason) or refuse (`rate_limit`): the app's metrics. */
export function intakeRoutes(database: Database, key: AppKey, drops?: Counter<'reason'>) {
  const counted = (received: Received) => {
    if (received.dropped) drops?.inc({ reason: received.dropped });
    return received;
  };
  return async function plugin(app: FastifyInstance) {
    await app.register(formbody, { bodyLimit: BODY_LIMIT });
    const limit = app.createRateLimit({
      max: PER_MINUTE,
      timeWindow: 60_000,
      keyGenerator: (request) => `intake:${(request as SlugRequest).params.slug}:${request.ip}`.slice(0, 200),
    });
    // Retries with one Idempotency-Key wait for each other in this process, so that only the first is counted
    // against the limit: the others find its answer kept (another process's first waits on its row in the database).
    const running = new Map<string, Promise<unknown>>();
    const oneAtATime = async <T,>(id: string, key: string | undefined, work: () => Promise<T>): Promise<T> => {
      if (key === undefined) return work();
      while (running.has(id)) await running.get(id)!.catch(() => undefined);
      const done = work();
      running.set(id, done);
      try {
        return await done;
      } finally {
        running.delete(id);
      }
    };
    const throttle = async (request: FastifyRequest, reply: FastifyReply) => {
      const status = await limit(request);
      if (!status.isAllowed && status.isExceeded) {
        drops?.inc({ reason: 'rate_limit' });
        reply.header('Retry-After', String(Math.max(1, status.ttlInSeconds)));
        throw new AppError(429, 'throttled', 'Too many submissions from this address; try again in a minute.');
      }
    };

    // The JSON door, with CORS for the form's own allowed origins (the preflight: OPTIONS /api/v1/intake/*).
    await app.register(
      async (api) => {
        await api.register(cors, {
          delegator: (request, callback) => {
            // The preflight is answered by the plugin's own OPTIONS route, which has no :slug: read it off the path.
            const slug = /^\/api\/v1\/intake\/([^/?#]+)/.exec(request.url)?.[1];
            const origin = request.headers.origin;
            if (!slug || !origin) return callback(null, { origin: false });
            findForm(database.db, slug)
              .then((form) =>
                callback(null, {
                  origin: Boolean(form?.allowed_origins.includes(origin)),
                  methods: ['POST'],
                  allowedHeaders: ['content-type', 'idempotency-key'],
                  maxAge: 600,
                }),
              )
              .catch((error: Error) => callback(error, { origin: false }));
          },
        });
        api.post(
          '/:slug',
          {
            bodyLimit: BODY_LIMIT,
            schema: {
              tags: ['intake'],
              summary: 'Send an inquiry through a public form (no sign-in)',
              security: [],
              headers: {
                type: 'object',
                properties: { 'idempotency-key': { type: 'string', maxLength: 255 } },
              },
              response: {
                202: {
                  description: 'received',
                  type: 'object',
                  properties: { reference: { type: 'string' } },
                  required: ['reference'],
                },
                404: problem('no such active form'),
                422: problem('unknown or missing fields, or an Idempotency-Key used for another body'),
                429: problem('more than 10 submissions a minute from this address'),
              },
            },
          },
          async (request: SlugRequest, reply) => {
            const form = await formOf(database, request.params.slug);
            const header = request.headers['idempotency-key'];
            const idempotencyKey = typeof header === 'string' ? header : undefined;
            const { reference } = await oneAtATime(`${form.slug}\n${idempotencyKey}`, idempotencyKey, () =>
              receive(database, key.signing, form, request.body, {
                hosted: false,
                idempotencyKey,
                throttle: () => throttle(request, reply),
              }).then(counted),
            );
            // A plain HTML form on another site (the settings page's snippet) gets the page a person can read.
            if (/text\/html/.test(request.headers.accept ?? '')) return sendPage(reply, <ThankYou form={form} />, 202);
            return reply.code(202).send({ reference });
          },
        );
      },
      { prefix: '/api/v1/intake' },
    );

    // The hosted page.
    app.get('/f/:slug', async (request: SlugRequest, reply) => {
      const form = await formOf(database, request.params.slug);
      frameableBy(reply, form);
      return sendPage(
        reply,
        <HostedPage title="Contact us">
          <HostedForm form={form} values={{}} token={renderToken(key.signing, form)} />
        </HostedPage>,
      );
    });
    app.post('/f/:slug', { bodyLimit: BODY_LIMIT }, async (request: SlugRequest, reply) => {
      const form = await formOf(database, request.params.slug);
      frameableBy(reply, form);
      const body = (request.body ?? {}) as Record<string, unknown>;
      // A form sends empty boxes too: they are no answer.
      const sent = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== ''));
      try {
        counted(
          await receive(database, key.signing, form, sent, { hosted: true, throttle: () => throttle(request, reply) }),
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        return sendPage(
          reply,
          <HostedPage title="Contact us">
            <div class="flash flash-error" role="alert">
              <p>
                <strong>Please correct the fields below.</strong>
              </p>
            </div>
            <HostedForm form={form} values={sent} errors={error.errors} token={String(body[TOKEN] ?? '')} />
          </HostedPage>,
          422,
        );
      }
      return sendPage(reply, <ThankYou form={form} />);
    });
  };
}
