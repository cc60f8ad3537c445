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
