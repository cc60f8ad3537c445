// Page routes for every records resource: index, detail, new/edit forms,
// delete, and the inquiry state toggles. They call the same operations as the
// JSON API; no SQL here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren } from 'preact';
import type { Database } from '../../db/connection.ts';
import { formInput } from '../../derive/form-values.ts';
import { AppError, type FieldErrors } from '../../errors.ts';
import {
  authorize,
  authorizePick,
  may,
  createRecord,
  deleteRecord,
  getRecord,
  listRecords,
  recordActivity,
  restoreChange,
  type ListResult,
  updateRecord,
} from '../../records/operations.ts';
import { choicesOf, referenceChoices } from '../../records/references.ts';
import type { Row } from '../../records/repository.ts';
import { annotationsOf, optionsOf, quickAddsOf, type Resource, unsetWordOf } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith, safeNext } from './context.ts';
import type { KeptForms } from './kept-form.ts';
import { listStateOf } from './list-pages.tsx';
import { RevealPage } from './views/pages.tsx';
import { listQueryOf, withoutEmptyParams } from './list-query.ts';
import { filteredReferences } from './views/list-filters.tsx';
import { sendFragment, sendPage } from './render.tsx';
import { markSeen } from '../../records/notifications.ts';
import { ChoiceOptions } from './views/form.tsx';
import { type Flash, FlashMessage, type PageContext } from './views/layout.tsx';
import { LinkedRecord, linkToBase, sharedFields } from './views/linked.tsx';
import {
  ActivityPanel,
  ConflictPage,
  DeletePage,
  DetailPage,
  IndexPage,
  type Query,
  RecordForm,
  recordTitle,
  DONE_FIELD,
  Results,
  StateToggle,
} from './views/records.tsx';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type Form = Record<string, unknown>;

// The page's query as list parameters lives beside the list's other address helpers; imported from here too.
export { listQueryOf } from './list-query.ts';

/** A control may show less than is stored (a date input, the day of an instant): sending back what it showed is not a
 * change. */
function withoutUnchanged(resource: Resource, input: Form, before: Form): Form {
  const out = { ...input };
  for (const [name, value] of Object.entries(input)) {
    const field = resource.field(name);
    if (field && typeof value === 'string' && before[name] != null && field.kind.toInput(before[name]) === value)
      delete out[name];
  }
  return out;
}

/**
 * An empty date box whose trigger is being set (assigned_date when assigned_to changes) means
 * "no date given": left out, so the server fills in now, as it does for the API.
 */
function withDefaultDates(resource: Resource, input: Form, before?: Form): Form {
  const out = { ...input };
  for (const field of resource.fields) {
    const trigger = field.defaultNowWhen;
    if (!trigger || out[field.name] !== null) continue;
    const triggerSet =
      out[trigger] !== undefined && out[trigger] !== null && String(out[trigger]) !== String(before?.[trigger] ?? '');
    if (triggerSet) delete out[field.name];
  }
  return out;
}

const sameText = (a: unknown, b: unknown) =>
  String(a ?? '').replaceAll('\r\n', '\n') === String(b ?? '').replaceAll('\r\n', '\n');

/**
 * What an edit form changed, read against what it showed (`_was`): the fields the user changed (`mine`, as sent), and
 * those a colleague changed too since, to something else (`overlap`). Null for a form that does not say what it
 * showed.
 */
function editOf(resource: Resource, form: Form, now: Row): { mine: Form; overlap: string[] } | null {
  let was: Record<string, string>;
  try {
    was = typeof form._was === 'string' ? (JSON.parse(form._was) as Record<string, string>) : {};
  } catch {
    return null;
  }
  if (typeof was !== 'object' || was === null || Object.keys(was).length === 0) return null;
  const mine: Form = {};
  const overlap: string[] = [];
  for (const field of resource.writable) {
    const sent = form[field.name];
    if (typeof sent !== 'string' || !(field.name in was)) continue;
    if (field.kind.writeOnly ? sent === '' : sameText(sent, was[field.name])) continue;
    mine[field.name] = sent;
    const theirs = field.kind.toInput(now[field.name]);
    if (!sameText(was[field.name], theirs) && !sameText(sent, theirs)) overlap.push(field.name);
  }
  return { mine, overlap };
}

const KEPT_NOTE = 'Your session had ended, so this was not saved. What you typed is back: check it and save again.';

const fieldErrors = (error: unknown): FieldErrors | null =>
  error instanceof AppError && error.status === 422 ? (error.errors ?? { '': [error.detail] }) : null;

/** More of a record's page under its fields, for one resource (a webhook's deliveries). */
export type DetailExtra = (request: FastifyRequest, record: Row, page: PageContext) => Promise<ComponentChildren>;

export function recordPages(
  database: Database,
  resource: Resource,
  kept: KeptForms,
  trashDays: number,
  detailExtra?: DetailExtra,
) {
  return async function plugin(app: FastifyInstance) {
    const csrf = { preHandler: app.csrfProtection };
    const choices = (rows: readonly Row[] = []) => referenceChoices(database, resource, rows);
    const ctxOf = (request: FastifyRequest) => contextOf(database, request);
    const base = `/${resource.name}`;

    app.get(base, async (request, reply) => {
      // A plain form sends its empty fields too: the list's address leaves them out.
      const clean = withoutEmptyParams(request.url);
      if (clean !== null) return reply.redirect(clean, 303);
      const query = request.query as Query;
      let result: ListResult = { data: [], meta: { page: 1, per_page: 25, total: 0, last_page: 1 } };
      let problem: FieldErrors | undefined;
      try {
        result = await listRecords(ctxOf(request), resource, listQueryOf(query));
      } catch (error) {
        problem = fieldErrors(error) ?? undefined;
        if (!problem) throw error;
      }
      const props = {
        ctx: pageContext(request, reply),
        resource,
        result,
        query,
        choices: await choices([...result.data, filteredReferences(resource, query)]),
        problem,
        list: await listStateOf(database, request, resource, query),
      };
      // htmx asks for the results only (live search, filters, paging) at the address it then pushes into the
      // history; a browser gets the whole page. Back and Forward load that address again, and Chromium took the
      // fragment it had cached for it: sendPage and sendFragment say Vary: HX-Request, the fragment is no-store.
      if (request.headers['hx-request'] && request.headers['hx-target'] === 'results')
        return sendFragment(reply, <Results {...props} />);
      return sendPage(reply, <IndexPage {...props} />);
    });

    const formPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      values: Form,
      options: { record?: Form; errors?: FieldErrors; etag?: string; was?: string; note?: string } = {},
    ) =>
      sendPage(
        reply,
        <RecordForm
          ctx={pageContext(request, reply)}
          resource={resource}
          values={values}
          choices={await choices([values])}
          {...options}
        />,
        options.errors ? 422 : 200,
      );

    app.get(`${base}/new`, async (request, reply) => {
      // The empty form reads no record, so no operation checks access: check it here (agents get 403 on users).
      authorize(ctxOf(request), resource, 'create');
      const typed = kept.take(request, reply);
      if (typed) return formPage(request, reply, typed, { note: KEPT_NOTE });
      // A new form starts with the defaults the API would fill in; "Created by" with the viewer (an empty select would
      // send "nobody").
      const initial = Object.fromEntries(
        resource.writable.flatMap((f) =>
          f.defaultActor
            ? [[f.name, String(request.user!.id)]]
            : f.default !== undefined && !f.kind.writeOnly
              ? [[f.name, f.kind.toInput(f.default)]]
              : [],
        ),
      );
      // A record of the resource this one extends can start one: its shared fields are copied in.
      const from = (request.query as Query).from;
      const base = resource.base;
      if (base && typeof from === 'string') {
        const { record } = await getRecord(ctxOf(request), base, from);
        const copied = Object.fromEntries(
          base.writable
            .filter((f) => resource.field(f.name)?.fillable && !f.defaultActor)
            .map((f) => [f.name, record[f.name]]),
        );
        // And linked to it (an inquiry to its contact).
        const link = linkToBase(resource);
        if (link) copied[link.name] = record[base.primaryKey.name];
        return formPage(
          request,
          reply,
          { ...initial, ...copied },
          { note: `Copied from the ${base.singular} “${recordTitle(base, record)}”.` },
        );
      }
      return formPage(request, reply, initial);
    });

    app.post(base, csrf, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      try {
        const { record, notice, reveal } = await createRecord(
          ctxOf(request),
          resource,
          withDefaultDates(resource, formInput(resource, form)),
        );
        if (reveal) {
          const title = `${recordTitle(resource, record)} was created`;
          const next = `${base}/${String(record.id)}`;
          reply.header('cache-control', 'no-store');
          return sendPage(
            reply,
            <RevealPage ctx={pageContext(request, reply)} title={title} reveal={reveal} next={next} />,
          );
        }
        return redirectWith(reply, `${base}/${String(record.id)}`, {
          kind: 'success',
          text: `${recordTitle(resource, record)} was created.${notice ? ` ${notice}` : ''}`,
        });
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors) throw error;
        return formPage(request, reply, form, { errors });
      }
    });

    // The options of a picker that names records of this resource, narrowed by its search box (htmx).
    app.get(`${base}/choices`, async (request, reply) => {
      authorizePick(ctxOf(request), resource);
      const { q, selected } = request.query as { q?: unknown; selected?: unknown };
      const picked = typeof selected === 'string' ? selected : '';
      const found = await choicesOf(
        database,
        resource,
        picked ? [picked] : [],
        typeof q === 'string' ? q.slice(0, 100) : '',
      );
      return sendFragment(reply, <ChoiceOptions choices={found} selected={picked} />);
    });

    /** The record's timeline, with the titles of the references its changes name. */
    const activityOf = async (request: FastifyRequest, id: string, record: Row, cursor?: string) => {
      const activity = await recordActivity(ctxOf(request), resource, id, cursor);
      // The references the changes name are shown by title too: each change as a row before and a row after.
      const sides = activity.data.flatMap(({ changes = {} }) =>
        [0, 1].map((side) => Object.fromEntries(Object.entries(changes).map(([name, pair]) => [name, pair[side]]))),
      );
      return { activity, choices: await choices([record, ...sides]) };
    };

    app.get(`${base}/:id`, async (request: IdRequest, reply) => {
      const ctx = ctxOf(request);
      const { record } = await getRecord(ctx, resource, request.params.id);
      // Seeing the record reads what told the viewer about it.
      if (request.user)
        await markSeen(database.db, request.user.id, resource.name, BigInt(String(record[resource.primaryKey.name])));
      // A has-many panel per reference to this resource that the viewer may read (agents see no users lists);
      // notes show in the timeline instead.
      const panels = await Promise.all(
        resource.referencedBy
          .filter(({ resource: other }) => may(ctx.actor, other, 'read') && !other.decl.timelineAction)
          .map(async ({ resource: other, field }) => ({
            resource: other,
            field,
            result: await listRecords(ctx, other, {
              filter: { [field.name]: String(record.id) },
              sort: '-id',
              per_page: '10',
            }),
          })),
      );
      const cursor = (request.query as { activity?: string }).activity;
      const { activity, choices: shown } = await activityOf(request, request.params.id, record, cursor);
      // The record it belongs to (an inquiry's contact), side by side where they differ.
      const link = linkToBase(resource);
      const linked = link && record[link.name] !== null ? await baseRecordOf(request, record) : undefined;
      const page = pageContext(request, reply);
      const linkedChoices = linked ? await choices([record, linked]) : shown;
      return sendPage(
        reply,
        <DetailPage
          ctx={page}
          resource={resource}
          record={record}
          choices={shown}
          panels={panels}
          activity={activity}
          extra={
            detailExtra ? (
              await detailExtra(request, record, page)
            ) : linked ? (
              <LinkedRecord
                resource={resource}
                record={record}
                linked={linked}
                choices={linkedChoices}
                csrf={page.csrf}
                locale={page.locale}
                canCopyTo={may(ctx.actor, resource.base!, 'update', linked)}
                canCopyFrom={may(ctx.actor, resource, 'update', record)}
              />
            ) : undefined
          }
        />,
      );
    });

    /** The record this one belongs to (an inquiry's contact), if it is there and the reader may see it. */
    const baseRecordOf = async (request: FastifyRequest, record: Row): Promise<Row | undefined> => {
      const link = linkToBase(resource)!;
      try {
        return (await getRecord(ctxOf(request), resource.base!, String(record[link.name]))).record;
      } catch (error) {
        if (error instanceof AppError && (error.status === 404 || error.status === 403)) return undefined;
        throw error;
      }
    };

    // Copies the chosen shared fields from a record to the one it belongs to, or back (each a logged update).
    if (linkToBase(resource))
      app.post(`${base}/:id/copy`, csrf, async (request: IdRequest, reply) => {
        const back = `${base}/${request.params.id}`;
        // Whether this viewer may change the record at all is said before what was sent is looked at.
        const { record } = await getRecord(ctxOf(request), resource, request.params.id, 'update');
        const linked = await baseRecordOf(request, record);
        const form = (request.body ?? {}) as Form;
        const asked = new Set([form.fields ?? []].flat().map(String));
        const fields = sharedFields(resource).filter((f) => asked.has(f.name));
        const toBase = form.direction === 'to_base';
        if (!linked || fields.length === 0 || (!toBase && form.direction !== 'from_base'))
          return redirectWith(reply, back, { kind: 'error', text: 'Choose the fields to copy, and which way.' });
        const [from, target, targetResource] = toBase ? [record, linked, resource.base!] : [linked, record, resource];
        const values = Object.fromEntries(fields.map((f) => [f.name, from[f.name] ?? null]));
        try {
          await updateRecord(ctxOf(request), targetResource, String(target[targetResource.primaryKey.name]), values);
        } catch (error) {
          const errors = fieldErrors(error);
          if (!errors) throw error;
          return redirectWith(reply, back, { kind: 'error', text: Object.values(errors).flat().join(' ') });
        }
        const names = fields.map((f) => f.label).join(', ');
        const where = toBase ? `to the ${resource.base!.singular}` : `from the ${resource.base!.singular}`;
        return redirectWith(reply, back, { kind: 'success', text: `Copied ${names} ${where}.` });
      });

    // Undo one change of the timeline: its fields get back the values they had before it.
    app.post(`${base}/:id/restore`, csrf, async (request: IdRequest, reply) => {
      // An undo offered by a list's message goes back to that list; one offered elsewhere (a task done on an
      // inquiry's page), back there.
      const asked = (request.body as Form | undefined)?.back;
      const back = typeof asked === 'string' && asked ? safeNext(asked) : `${base}/${request.params.id}#activity`;
      try {
        await restoreChange(ctxOf(request), resource, request.params.id, request.body);
      } catch (error) {
        const errors = fieldErrors(error);
        if (!errors) throw error;
        return redirectWith(reply, back, { kind: 'error', text: Object.values(errors).flat().join(' ') });
      }
      return redirectWith(reply, back, { kind: 'success', text: 'The change was undone.' });
    });

    // A note (or other annotation) added from the record's page: htmx gets the new timeline, a plain form comes back.
    for (const { resource: other, field } of annotationsOf(resource)) {
      app.post(`${base}/:id/${other.name}`, csrf, async (request: IdRequest, reply) => {
        const path = `${base}/${request.params.id}`;
        const { record } = await getRecord(ctxOf(request), resource, request.params.id);
        const form = (request.body ?? {}) as Form;
        const text = other.title.name;
        let flash: Flash = { kind: 'success', text: `Your ${other.singular} was added.` };
        try {
          await createRecord(ctxOf(request), other, { [text]: form[text], [field.name]: record.id });
        } catch (error) {
          const errors = fieldErrors(error);
          if (!errors) throw error;
          flash = {
            kind: 'error',
            text: `The ${other.singular} was not added: it ${Object.values(errors).flat().join('; ')}.`,
          };
        }
        if (!request.headers['hx-request']) return redirectWith(reply, `${path}#activity`, flash);
        const { activity, choices: shown } = await activityOf(request, request.params.id, record);
        return sendFragment(
          reply,
          <ActivityPanel
            ctx={pageContext(request, reply)}
            resource={resource}
            record={record}
            path={path}
            activity={activity}
            choices={shown}
            notice={flash}
          />,
        );
      });
    }

    // A record added from the page of one it references (a task on an inquiry's page), with the few fields the
    // resource asks for there (quickAdd); the reference is this record. Back to the panel, with a message.
    for (const { resource: other, field } of quickAddsOf(resource)) {
      app.post(`${base}/:id/${other.name}`, csrf, async (request: IdRequest, reply) => {
        const { record } = await getRecord(ctxOf(request), resource, request.params.id);
        const back = `${base}/${request.params.id}#${other.name}-${field.name}`;
        const form = (request.body ?? {}) as Form;
        try {
          const input = formInput(other, form, other.quickAdd);
          const { record: added } = await createRecord(ctxOf(request), other, { ...input, [field.name]: record.id });
          return redirectWith(reply, back, { kind: 'success', text: `${recordTitle(other, added)} was added.` });
        } catch (error) {
          const errors = fieldErrors(error);
          if (!errors) throw error;
          const said = Object.entries(errors).map(([name, m]) => `${other.field(name)?.label ?? name} ${m.join('; ')}`);
          return redirectWith(reply, back, {
            kind: 'error',
            text: `The ${other.singular} was not added: ${said.join('; ')}.`,
          });
        }
      });
    }

    // Done in one click (a task): an update like any other, logged, and its message offers to take it back.
    if (resource.field(DONE_FIELD)?.fillable)
      app.post(`${base}/:id/done`, csrf, async (request: IdRequest, reply) => {
        const back = safeNext((request.body as Form | undefined)?.back ?? `${base}/${request.params.id}`);
        const { record, changeId } = await updateRecord(ctxOf(request), resource, request.params.id, {
          [DONE_FIELD]: new Date().toISOString(),
        });
        return redirectWith(reply, back, {
          kind: 'success',
          text: `${recordTitle(resource, record)} is done.`,
          ...(changeId
            ? { undo: { action: `${base}/${request.params.id}/restore`, change_id: String(changeId), back } }
            : {}),
        });
      });

    app.get(`${base}/:id/edit`, async (request: IdRequest, reply) => {
      const { record, etag } = await getRecord(ctxOf(request), resource, request.params.id, 'update');
      const typed = kept.take(request, reply);
      // The ETag and the shown values of when the typing began: a change someone saved since is still caught on save.
      if (typed) {
        return formPage(request, reply, typed, { record, etag: typed._etag ?? etag, was: typed._was, note: KEPT_NOTE });
      }
      return formPage(request, reply, record, { record, etag });
    });

    app.post(`${base}/:id`, csrf, async (request: IdRequest, reply) => {
      const form = (request.body ?? {}) as Form;
      let etag = typeof form._etag === 'string' ? form._etag : undefined;
      const current = await getRecord(ctxOf(request), resource, request.params.id);
      const edit = editOf(resource, form, current.record);
      if (edit && etag !== undefined && etag !== current.etag) {
        // Someone saved since the form was shown: only a field both changed, differently, is a conflict.
        if (edit.overlap.length) {
          return sendPage(
            reply,
            <ConflictPage
              ctx={pageContext(request, reply)}
              resource={resource}
              theirs={current.record}
              mine={edit.mine}
              overlap={edit.overlap}
              etag={current.etag}
              choices={await choices([current.record, edit.mine])}
            />,
            409,
          );
        }
        etag = current.etag;
      }
      const input = withDefaultDates(
        resource,
        withoutUnchanged(resource, formInput(resource, edit ? edit.mine : form), current.record),
        current.record,
      );
      try {
        const { record } = await updateRecord(ctxOf(request), resource, request.params.id, input, etag);
        return redirectWith(reply, `${base}/${String(record.id)}`, {
          kind: 'success',
          text: 'Your changes were saved.',
        });
      } catch (error) {
        if (error instanceof AppError && error.status === 412) {
          const theirs = await getRecord(ctxOf(request), resource, request.params.id);
          const mine = Object.fromEntries(Object.entries(form).filter(([k]) => resource.field(k)?.fillable));
          return sendPage(
            reply,
            <ConflictPage
              ctx={pageContext(request, reply)}
              resource={resource}
              theirs={theirs.record}
              mine={mine}
              etag={theirs.etag}
              choices={await choices([theirs.record, mine])}
            />,
            409,
          );
        }
        const errors = fieldErrors(error);
        if (!errors) throw error;
        const was = typeof form._was === 'string' ? form._was : undefined;
        return formPage(request, reply, form, { record: current.record, errors, etag, was });
      }
    });

    /** The delete page; a user with assigned work is offered whom to give it to. */
    const deletePage = async (request: IdRequest, reply: FastifyReply, errors?: FieldErrors) => {
      const ctx = ctxOf(request);
      const { record } = await getRecord(ctx, resource, request.params.id, 'delete');
      const work = await Promise.all(
        resource.referencedBy
          .filter(({ field }) => field.assignee)
          .map(async ({ resource: other, field }) => ({
            resource: other,
            count: (await listRecords(ctx, other, { filter: { [field.name]: String(record.id) }, per_page: '1' })).meta
              .total!,
          })),
      );
      const held = work.filter((w) => w.count > 0);
      const heirs = held.length
        ? (await listRecords(ctx, resource, { filter: { active: 'true' }, sort: 'name', per_page: '100' })).data.filter(
            (r) => String(r.id) !== String(record.id),
          )
        : [];
      return sendPage(
        reply,
        <DeletePage
          ctx={pageContext(request, reply)}
          resource={resource}
          record={record}
          trashDays={resource.trash ? trashDays : undefined}
          work={held}
          heirs={heirs}
          errors={errors}
        />,
        errors ? 422 : 200,
      );
    };

    app.get(`${base}/:id/delete`, deletePage);

    app.post(`${base}/:id/delete`, csrf, async (request: IdRequest, reply) => {
      const { record } = await getRecord(ctxOf(request), resource, request.params.id);
      const form = (request.body ?? {}) as Form;
      try {
        await deleteRecord(ctxOf(request), resource, request.params.id, undefined, { reassign_to: form.reassign_to });
      } catch (error) {
        const errors = fieldErrors(error);
        if (errors || (error instanceof AppError && error.code === 'has_assignments'))
          return deletePage(request, reply, errors ?? { reassign_to: [(error as AppError).detail] });
        if (error instanceof AppError && error.status === 409)
          return redirectWith(reply, `${base}/${request.params.id}`, { kind: 'error', text: error.detail });
        throw error;
      }
      const where = resource.trash ? ` It is in the trash for ${trashDays} days, if you need it back.` : '';
      // Deleted from elsewhere (a saved view, from its list): back there.
      const next = typeof form.next === 'string' && form.next ? safeNext(form.next) : base;
      return redirectWith(reply, next, {
        kind: 'success',
        text: `${recordTitle(resource, record)} was deleted.${where}`,
      });
    });

    // Not set → Yes → No → Not set, for the tri-state fields of the list.
    app.post(
      `${base}/:id/cycle/:field`,
      csrf,
      async (request: FastifyRequest<{ Params: { id: string; field: string } }>, reply) => {
        const field = resource.field(request.params.field);
        const options = field?.fillable && field.kind.options ? optionsOf(field) : undefined;
        if (!field || !options) throw new AppError(404, 'not_found', 'There is no such state to change.');
        const { record: before } = await getRecord(ctxOf(request), resource, request.params.id);
        // Not set, then each option in turn, then Not set again.
        const steps = [null, ...options];
        const at = steps.findIndex((o) => (o?.value ?? '') === field.kind.toInput(before[field.name]));
        const next = steps[(at + 1) % steps.length] ?? null;
        const { record, changeId } = await updateRecord(ctxOf(request), resource, request.params.id, {
          [field.name]: next ? next.json : null,
        });
        const referer = request.headers.referer ? new URL(request.headers.referer) : undefined;
        const back = referer?.pathname.startsWith(base) ? referer.pathname + referer.search : base;
        // Nothing is asked before the change; its message offers to take it back.
        const flash: Flash = {
          kind: 'success',
          text: `${field.label} of ${recordTitle(resource, record)} is now ${next?.label ?? unsetWordOf(field)}.`,
          ...(changeId
            ? { undo: { action: `${base}/${request.params.id}/restore`, change_id: String(changeId), back } }
            : {}),
        };
        if (request.headers['hx-request']) {
          const { csrf } = pageContext(request, reply);
          return sendFragment(
            reply,
            <>
              <StateToggle resource={resource} record={record} field={field} csrf={csrf} />
              <FlashMessage flash={flash} csrf={csrf} oob />
            </>,
          );
        }
        return redirectWith(reply, back, flash);
      },
    );
  };
}
