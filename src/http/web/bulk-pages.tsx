// The list page's bulk bar (views/bulk-bar.tsx) posts here: POST /{r}/bulk turns its choice (assign, stage, state,
// delete, export) into a bulk request for the same operation as POST /api/v1/{r}/bulk, and comes back to the list
// with a message ("Updated 25 inquiries; 2 could not be changed: …"). public/bulk.js asks for JSON instead and sends
// the work in parts, after asking GET /{r}/bulk/ids which records "all N matching" are. No SQL here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import qs from 'qs';
import type { Database } from '../../db/connection.ts';
import { formInput } from '../../derive/form-values.ts';
import { AppError, toProblem } from '../../errors.ts';
import { type BulkFailure, bulkIds, bulkRecords } from '../../records/bulk.ts';
import { authorize, listRecords } from '../../records/operations.ts';
import type { Row } from '../../records/repository.ts';
import { type Resource, stateFieldsOf } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { listQueryOf } from './record-pages.tsx';
import { sendPage } from './render.tsx';
import { BulkDeletePage } from './views/bulk-bar.tsx';
import { recordTitle, type Query } from './views/records.tsx';

type Form = Record<string, unknown>;

/** Failures named in a message; the rest are counted. */
const NAMED = 5;
/** A selection of rows exported by id: a page holds at most 100 rows, as many as a filter's `in` takes. */
const EXPORT_BY_ID = 100;
// As the list's own query string is parsed (app.ts).
const QUERY_OPTIONS = { depth: 2, parameterLimit: 100, arrayLimit: 0, allowPrototypes: false, strictDepth: false };

/** The ids a form sends: ticked boxes (`ids=1&ids=2` arrives as {0: '1', 1: '2'}) or one comma list (bulk.js). */
function idsOf(raw: unknown): string[] {
  const list = Array.isArray(raw)
    ? raw
    : typeof raw === 'object' && raw !== null
      ? Object.values(raw)
      : typeof raw === 'string'
        ? raw.split(',')
        : [];
  return list.map((v) => String(v).trim()).filter(Boolean);
}

const wantsJson = (request: FastifyRequest) => /application\/json/.test(request.headers.accept ?? '');
const count = (n: number) => n.toLocaleString('en-US');

/** A refusal of the whole request, as the bar's message says it. */
const refused = (message: string, errors?: Record<string, string[]>) =>
  new AppError(422, 'validation_failed', message, errors);

/** The changes an update action asks for, from the bar's selects; a missing choice is a 422 saying which. */
function changesOf(resource: Resource, action: string, form: Form): Row {
  const assignee = resource.fields.find((f) => f.assignee && f.fillable);
  if (action === 'assign' && assignee) {
    const to = String(form[assignee.name] ?? '');
    if (!to) throw refused('Choose whom to assign them to.', { [assignee.name]: ['is required'] });
    return formInput(resource, { [assignee.name]: to === 'none' ? '' : to }, [assignee]);
  }
  if (action === 'stage' && resource.field('stage_id')) {
    const to = String(form.stage_id ?? '');
    if (!to) throw refused('Choose the stage to move them to.', { stage_id: ['is required'] });
    return formInput(resource, { stage_id: to }, [resource.field('stage_id')!]);
  }
  if (action === 'state') {
    const field = stateFieldsOf(resource).find((f) => f.name === form.state_field);
    if (!field) throw refused('Choose which state to set.', { state_field: ['names no state of these records'] });
    const value = String(form.state_value ?? '');
    if (!['true', 'false', 'null'].includes(value))
      throw refused('Choose the value to set.', { state_value: ['must be true, false or null'] });
    return { [field.name]: value === 'null' ? null : value === 'true' };
  }
  throw refused('Choose what to do with them.', { action: ['must be assign, stage, state, delete or export'] });
}

/** How the bar names the records: the ticked ids, or the list's query ("all N matching"). */
function targetOf(form: Form): { ids: string[] } | { query: string } {
  if (form.scope === 'query') return { query: String(form.query ?? '') };
  const ids = idsOf(form.ids);
  if (ids.length === 0) throw refused('Tick at least one row first.', { ids: ['must list at least one id'] });
  return { ids };
}

/** The list query the page's own query string stands for (its date ranges as the API reads them), without paging. */
function listQueryString(pageQuery: string): string {
  const { page: _page, per_page: _perPage, ...rest } = listQueryOf(qs.parse(pageQuery, QUERY_OPTIONS) as Query);
  return qs.stringify(rest);
}

export function bulkPages(database: Database, resource: Resource, trashDays: number) {
  const base = `/${resource.name}`;
  const noun = (n: number) => `${count(n)} ${n === 1 ? resource.singular : resource.name}`;
  /** Only a page of this list is gone back to. */
  const backOf = (form: Form) => {
    const back = String(form.back ?? '');
    return back === base || back.startsWith(`${base}?`) ? back : base;
  };

  /** The titles of the failed records that still exist, for the message. */
  async function titled(request: FastifyRequest, failed: readonly BulkFailure[]) {
    const named = failed.slice(0, 100);
    const titles = new Map<string, string>();
    if (named.length) {
      const { data } = await listRecords(contextOf(database, request), resource, {
        filter: { id: { in: named.map((f) => String(f.id)).join(',') } },
        per_page: '100',
      });
      for (const record of data) titles.set(String(record.id), recordTitle(resource, record));
    }
    return failed.map((f) => ({
      id: String(f.id),
      title: titles.get(String(f.id)) ?? `${resource.label} #${String(f.id)}`,
      reason: f.reason,
    }));
  }

  /** "Updated 25 inquiries; 2 could not be changed: Ann (not yours), Bo (not yours)." */
  function message(action: 'update' | 'delete', done: number, failed: { title: string; reason: string }[]) {
    const head =
      action === 'update'
        ? `Updated ${noun(done)}`
        : `Moved ${noun(done)} to the trash${done ? `, where you can restore them for ${trashDays} days` : ''}`;
    if (failed.length === 0) return `${head}.`;
    const listed = failed.slice(0, NAMED).map((f) => `${f.title} (${f.reason})`);
    const more = failed.length > NAMED ? `, and ${count(failed.length - NAMED)} more` : '';
    const verb = action === 'update' ? 'changed' : 'deleted';
    if (done === 0) return `None of the ${noun(failed.length)} could be ${verb}: ${listed.join(', ')}${more}.`;
    return `${head}; ${count(failed.length)} could not be ${verb}: ${listed.join(', ')}${more}.`;
  }

  /** A refused request in words: its detail, or each field's messages when the detail says no more. */
  const explain = (error: AppError) =>
    error.detail !== 'The bulk request has invalid fields.'
      ? error.detail
      : `${Object.entries(error.errors ?? {})
          .map(([name, messages]) => {
            const field = resource.field(name.replace(/^changes\./, ''));
            const what = { query: 'The list', ids: 'The selection' }[name] ?? field?.label ?? name;
            return `${what} ${messages.join('; ')}`;
          })
          .join('. ')}.`;

  const problem = (reply: FastifyReply, error: AppError) =>
    reply
      .code(error.status)
      .type('application/problem+json; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .send(JSON.stringify(toProblem(error)));

  return async function plugin(app: FastifyInstance) {
    const csrf = { preHandler: app.csrfProtection };

    // The records "all N matching" stands for, for bulk.js to send in parts: the page's query, as JSON.
    app.get(`${base}/bulk/ids`, async (request, reply) => {
      try {
        const ids = await bulkIds(contextOf(database, request), resource, listQueryOf(request.query as Query));
        return reply.header('Cache-Control', 'no-store').send({ ids: ids.map(String) });
      } catch (error) {
        if (error instanceof AppError && error.status < 500) return problem(reply, error);
        throw error;
      }
    });

    app.post(`${base}/bulk`, csrf, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const json = wantsJson(request);
      const back = backOf(form);
      const ctx = contextOf(database, request);
      const action = String(form.action ?? '');
      // A role that may change none of these records is refused before anything else is looked at.
      authorize(ctx, resource, 'update', true);
      try {
        const target = targetOf(form);
        const named = 'query' in target ? { query: listQueryString(target.query) } : target;
        if (action === 'export') {
          const where =
            'query' in named
              ? named.query
              : named.ids.length <= EXPORT_BY_ID
                ? qs.stringify({ filter: { id: { in: named.ids.join(',') } } })
                : null;
          if (where === null) throw refused(`Export at most ${EXPORT_BY_ID} ticked rows, or all matching.`);
          return reply.redirect(`${base}/export.csv${where ? `?${where}` : ''}`, 303);
        }
        if (action === 'delete' && form.confirmed !== '1' && !json) {
          const ids = 'ids' in named ? named.ids : await bulkIds(ctx, resource, qs.parse(named.query, QUERY_OPTIONS));
          const fields: Record<string, string> = { back };
          if ('ids' in target) fields.ids = target.ids.join(',');
          else Object.assign(fields, { scope: 'query', query: target.query });
          return sendPage(
            reply,
            <BulkDeletePage
              ctx={pageContext(request, reply)}
              resource={resource}
              count={ids.length}
              fields={fields}
              trashDays={trashDays}
            />,
          );
        }
        const deleting = action === 'delete';
        const outcome = await bulkRecords(ctx, resource, {
          ...named,
          action: deleting ? 'delete' : 'update',
          ...(deleting ? {} : { changes: changesOf(resource, action, form) }),
        });
        const failed = await titled(request, outcome.failed);
        const text = message(outcome.action, outcome.done, failed);
        if (json) return reply.header('Cache-Control', 'no-store').send({ done: outcome.done, failed, message: text });
        return redirectWith(reply, back, { kind: outcome.done || !failed.length ? 'success' : 'error', text });
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        if (json) return problem(reply, error);
        // A role that may change nothing gets the error page; a request the bar made wrong comes back with why.
        if (error.status !== 422) throw error;
        return redirectWith(reply, back, { kind: 'error', text: `Nothing was changed. ${explain(error)}` });
      }
    });
  };
}
