// What a list page shows besides its records: the columns its viewer chose
// (POST /{r}/columns, and "Reset to default"), and the saved views of the list
// (POST /{r}/views) — their own and those the team shares. Plain forms with the
// CSRF token; they work without JavaScript. A view is deleted through the
// generic POST /views/:id/delete, which comes back here by its `next` field.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { columnsOf, resetListColumns, saveListColumns, storedColumns } from '../../records/list-columns.ts';
import { authorize, createRecord, listRecords, may } from '../../records/operations.ts';
import { referenceChoices } from '../../records/references.ts';
import type { Row } from '../../records/repository.ts';
import { view } from '../../resources/view.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { redirectWith } from './context.ts';
import { listHref, viewQueryOf } from './list-query.ts';
import type { ListState, SavedView } from './views/list-tools.tsx';
import type { Query } from './views/records.tsx';

/** Whether a resource's lists keep saved views (the views declaration names the resources it serves). */
export const keepsViews = (resource: Resource) => view.field('resource')?.choices?.includes(resource.name) ?? false;

/** Several values of one form field (`columns=a&columns=b` arrives as {0: a, 1: b}) as a list. */
function listOf(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') return Object.values(value);
  return [value];
}

/** The viewer's columns (the address's, a saved view's, come first) and the list's saved views. */
export async function listStateOf(
  database: Database,
  request: FastifyRequest,
  resource: Resource,
  query: Query,
): Promise<ListState> {
  const ctx = contextOf(database, request);
  const asked = typeof query.columns === 'string' ? columnsOf(resource, query.columns) : [];
  const stored = await storedColumns(ctx, resource);
  const viewQuery = viewQueryOf(query);
  const columnsParam = asked.length ? asked.map((f) => f.name).join(',') : null;
  const state: ListState = {
    columns: asked.length ? asked : (stored ?? resource.listColumns),
    columnsParam,
    custom: stored !== null,
    viewQuery,
    all: viewQuery === '' && !columnsParam,
  };
  if (!keepsViews(resource) || !may(ctx.actor, view, 'read')) return state;
  const me = String(ctx.actor!.id);
  const mine = { filter: { resource: resource.name, created_by: me }, sort: 'name', per_page: '100' };
  const shared = {
    filter: { resource: resource.name, shared: 'true', created_by: { ne: me } },
    sort: 'name',
    per_page: '100',
  };
  // Listed for everyone as for its owner: their own, then the team's; an admin's list is not everyone's views.
  const rows = [...(await listRecords(ctx, view, mine)).data, ...(await listRecords(ctx, view, shared)).data];
  const owners = (await referenceChoices(database, view, rows)).get('users') ?? [];
  state.views = rows.map((r: Row): SavedView => {
    const columns = typeof r.columns === 'string' && r.columns ? r.columns : null;
    const ownQuery = String(r.query ?? '');
    return {
      id: String(r.id),
      name: String(r.name),
      href: listHref(resource, ownQuery, columns),
      shared: r.shared === true,
      owner: String(r.created_by) === me ? null : (owners.find((o) => o.id === String(r.created_by))?.title ?? null),
      mayDelete: may(ctx.actor, view, 'delete', r),
      current: ownQuery === viewQuery && (columns ?? null) === columnsParam,
    };
  });
  return state;
}

const messagesOf = (error: unknown) => {
  if (!(error instanceof AppError) || error.status !== 422) throw error;
  return Object.values(error.errors ?? { '': [error.detail] })
    .flat()
    .join('; ');
};

export function listPages(database: Database, resource: Resource) {
  return async function plugin(app: FastifyInstance) {
    const csrf = { preHandler: app.csrfProtection };
    const base = `/${resource.name}`;
    const formOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;
    /** Back to the list as it was (its query string in `back`), showing the viewer's own columns. */
    const back = (request: FastifyRequest) => {
      const asked = formOf(request).back;
      return listHref(resource, typeof asked === 'string' ? asked : '', null);
    };
    const done = (reply: FastifyReply, to: string, text: string, kind: 'success' | 'error' = 'success') =>
      redirectWith(reply, to, { kind, text });

    app.post(`${base}/columns`, csrf, async (request, reply) => {
      const ctx = contextOf(database, request);
      const form = formOf(request);
      if (form.reset) {
        await resetListColumns(ctx, resource);
        return done(reply, back(request), 'The list shows its default columns again.');
      }
      try {
        const fields = await saveListColumns(ctx, resource, listOf(form.columns));
        return done(reply, back(request), `Your columns were saved: ${fields.map((f) => f.label).join(', ')}.`);
      } catch (error) {
        return done(reply, back(request), `The columns were not saved: ${messagesOf(error)}.`, 'error');
      }
    });

    if (!keepsViews(resource)) return;

    app.post(`${base}/views`, csrf, async (request, reply) => {
      const ctx = contextOf(database, request);
      authorize(ctx, resource);
      const form = formOf(request);
      const name = typeof form.name === 'string' ? form.name.trim() : '';
      // The list as it was when "Save view" was pressed, read again so that only list parameters are kept.
      const query = new URLSearchParams(typeof form.query === 'string' ? form.query : '');
      query.delete('columns');
      query.delete('page');
      const columns = columnsOf(resource, form.columns)
        .map((f) => f.name)
        .join(',');
      try {
        await createRecord(ctx, view, {
          name,
          resource: resource.name,
          query: query.toString() || null,
          columns: columns || null,
          shared: form.shared === 'true' || form.shared === 'on',
        });
      } catch (error) {
        return done(reply, back(request), `The view was not saved: ${messagesOf(error)}.`, 'error');
      }
      return done(reply, listHref(resource, query.toString(), columns || null), `The view “${name}” was saved.`);
    });
  };
}
