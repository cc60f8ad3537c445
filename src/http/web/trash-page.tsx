// The trash page: what the viewer may restore, newest deletion first, each with
// what its deletion took along; a button brings one back with its id and links.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { listTrash, restoreFromTrash } from '../../records/trash.ts';
import { resources } from '../../resources/index.ts';
import { kinds } from '../../schema/kinds.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { Layout } from './views/layout.tsx';

const labelOf = (name: string) => resources.find((r) => r.name === name)?.label ?? name;
const plural = (name: string, n: number) =>
  n === 1 ? (resources.find((r) => r.name === name)?.singular ?? name) : name;

export function trashPage(database: Database, trashDays: number) {
  return async function plugin(app: FastifyInstance) {
    app.get('/trash', async (request: FastifyRequest<{ Querystring: { cursor?: string } }>, reply) => {
      const cursor = typeof request.query.cursor === 'string' ? request.query.cursor : undefined;
      const trash = await listTrash(contextOf(database, request), trashDays, cursor);
      const page = pageContext(request, reply);
      return sendPage(
        reply,
        <Layout ctx={page} title="Trash">
          <h1>Trash</h1>
          <p class="muted">
            Deleted contacts, inquiries and notes stay here for {trashDays} days. Restoring one brings it back with its
            id, its notes and its links.
          </p>
          {trash.data.length === 0 ? (
            <p class="card">The trash is empty.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">What</th>
                    <th scope="col">Deleted</th>
                    <th scope="col">By</th>
                    <th scope="col">
                      <span class="visually-hidden">Restore</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {trash.data.map((item) => {
                    const along = Object.entries(item.with).map(([name, n]) => `${n} ${plural(name, n)}`);
                    return (
                      <tr>
                        <td>
                          <span class="muted">{labelOf(item.resource)}</span> {item.title}
                          {along.length ? <span class="muted"> · with {along.join(', ')}</span> : null}
                        </td>
                        <td>
                          <time datetime={item.deleted_at}>
                            {kinds.dateTime.display(item.deleted_at, page.locale).text}
                          </time>
                        </td>
                        <td>{item.deleted_by?.name ?? '—'}</td>
                        <td>
                          <form method="post" action={`/trash/${String(item.change_id)}/restore`} class="inline">
                            <CsrfInput token={page.csrf} />
                            <button type="submit" class="button-secondary">
                              Restore <span class="visually-hidden">{item.title}</span>
                            </button>
                          </form>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          {trash.meta.next_cursor ? (
            <p>
              <a href={`/trash?cursor=${trash.meta.next_cursor}`}>Older</a>
            </p>
          ) : null}
        </Layout>,
      );
    });

    app.post<{ Params: { change_id: string } }>(
      '/trash/:change_id/restore',
      { preHandler: app.csrfProtection },
      async (request, reply) => {
        try {
          const { resource, record } = await restoreFromTrash(
            contextOf(database, request),
            request.params.change_id,
            trashDays,
          );
          const id = String(record[resource.primaryKey.name]);
          return redirectWith(reply, `/${resource.name}/${id}`, {
            kind: 'success',
            text: `${String(record[resource.title.name] ?? `${resource.label} #${id}`)} is back.`,
          });
        } catch (error) {
          if (!(error instanceof AppError) || (error.status !== 409 && error.status !== 410)) throw error;
          return redirectWith(reply, '/trash', { kind: 'error', text: error.detail });
        }
      },
    );
  };
}
