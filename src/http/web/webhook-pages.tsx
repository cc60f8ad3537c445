// A webhook's page beyond its fields: its delivery log (status, attempts, last
// answer, latency, the answer's first lines), a resend for each delivery that is
// not waiting, "Send a test event", and "Rotate the secret", whose new secret is
// shown once on a page of its own. Thin: src/webhooks/deliveries.ts does the work.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import type { Row } from '../../records/repository.ts';
import { kinds } from '../../schema/kinds.ts';
import { listDeliveries, resendDelivery, rotateSecret, sendTestEvent } from '../../webhooks/deliveries.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import type { PageContext } from './views/layout.tsx';
import { RevealPage } from './views/pages.tsx';

type ById = FastifyRequest<{ Params: { id: string } }>;

/** The delivery log and the webhook's actions, under its fields on its page. */
export async function webhookPanel(database: Database, request: FastifyRequest, record: Row, page: PageContext) {
  const { csrf, locale } = page;
  const id = String(record.id);
  const { data } = await listDeliveries(contextOf(database, request), id, {});
  const when = (at: string | null) => (at ? <time datetime={at}>{kinds.dateTime.display(at, locale).text}</time> : '—');
  return (
    <section class="card webhook-deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="actions webhook-actions">
        <form method="post" action={`/webhooks/${id}/test`}>
          <CsrfInput token={csrf} />
          <button type="submit">Send a test event</button>
        </form>
        <form method="post" action={`/webhooks/${id}/secret`}>
          <CsrfInput token={csrf} />
          <button type="submit" class="button-secondary">
            Rotate the secret
          </button>
        </form>
      </div>
      {data.length === 0 ? (
        <p class="muted">Nothing sent yet: events this endpoint asked for appear here as they happen.</p>
      ) : (
        <section class="table-wrap" tabindex={0} aria-label="Deliveries, newest first">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
                <th scope="col">Latency</th>
                <th scope="col">Last try</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {data.map((d) => (
                <tr key={String(d.id)}>
                  <td>{d.event}</td>
                  <td>
                    <span class={`badge status-${d.status}`}>{d.status}</span>
                    {d.status === 'pending' && d.next_attempt_at ? <> next {when(d.next_attempt_at)}</> : null}
                  </td>
                  <td>{d.attempts}</td>
                  <td class="cell-text">
                    {d.last_status_code ?? d.last_error ?? '—'}
                    {d.response_excerpt ? (
                      <details>
                        <summary>answer</summary>
                        <pre>{d.response_excerpt}</pre>
                      </details>
                    ) : null}
                  </td>
                  <td>{d.latency_ms === null ? '—' : `${d.latency_ms} ms`}</td>
                  <td>{when(d.last_attempt_at)}</td>
                  <td>
                    {d.status === 'pending' ? null : (
                      <form method="post" action={`/webhooks/${id}/deliveries/${String(d.id)}/resend`}>
                        <CsrfInput token={csrf} />
                        <button type="submit" class="button-secondary">
                          Resend
                        </button>
                      </form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}

export function webhookPages(database: Database) {
  return async function plugin(app: FastifyInstance) {
    const csrf = { preHandler: app.csrfProtection };
    const ctxOf = (request: FastifyRequest) => contextOf(database, request);

    app.post('/webhooks/:id/test', csrf, async (request: ById, reply) => {
      await sendTestEvent(ctxOf(request), request.params.id);
      return redirectWith(reply, `/webhooks/${request.params.id}`, {
        kind: 'success',
        text: 'A test event is on its way: its delivery shows below.',
      });
    });

    app.post(
      '/webhooks/:id/deliveries/:delivery_id/resend',
      csrf,
      async (request: FastifyRequest<{ Params: { id: string; delivery_id: string } }>, reply) => {
        await resendDelivery(ctxOf(request), request.params.id, request.params.delivery_id);
        return redirectWith(reply, `/webhooks/${request.params.id}`, {
          kind: 'success',
          text: 'The delivery is sent again.',
        });
      },
    );

    app.post('/webhooks/:id/secret', csrf, async (request: ById, reply) => {
      const { secret, previous_until } = await rotateSecret(ctxOf(request), request.params.id);
      const ctx = pageContext(request, reply);
      const until = kinds.dateTime.display(previous_until, ctx.locale).text;
      reply.header('cache-control', 'no-store');
      return sendPage(
        reply,
        <RevealPage
          ctx={ctx}
          title="The webhook has a new secret"
          reveal={{ secret }}
          note={`The old secret signs too until ${until}, so the receiver can switch without missing a message.`}
          next={`/webhooks/${request.params.id}`}
        />,
      );
    });
  };
}
