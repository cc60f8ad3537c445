// Small pages that are the same for every resource: errors and messages.
import type { PageContext } from './layout.tsx';
import { Layout } from './layout.tsx';

export function MessagePage({
  ctx,
  title,
  status,
  children,
}: {
  ctx: PageContext;
  title: string;
  status?: number;
  children: preact.ComponentChildren;
}) {
  return (
    <Layout ctx={ctx} title={title}>
      <section class="card narrow">
        <h1>{title}</h1>
        {status ? <p class="muted">Error {status}</p> : null}
        {children}
        <p>
          <a href="/">Back to the dashboard</a>
        </p>
      </section>
    </Layout>
  );
}

/** What a create shows once (a webhook's secret): on a page of its own, never in a flash cookie or the address. */
export function RevealPage({
  ctx,
  title,
  reveal,
  note,
  next,
}: {
  ctx: PageContext;
  title: string;
  reveal: Readonly<Record<string, string>>;
  note?: string;
  next: string;
}) {
  return (
    <Layout ctx={ctx} title={title}>
      <section class="card narrow">
        <h1>{title}</h1>
        <p>Copy it now: it is shown only this once.</p>
        {note ? <p>{note}</p> : null}
        {Object.entries(reveal).map(([name, value]) => (
          <p key={name}>
            <label>
              {name.replaceAll('_', ' ')}
              <input type="text" readonly value={value} class="secret" />
            </label>
          </p>
        ))}
        <p>
          <a class="button" href={next}>
            Done
          </a>
        </p>
      </section>
    </Layout>
  );
}
