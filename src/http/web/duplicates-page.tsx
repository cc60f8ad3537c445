// The duplicates page: groups of contacts that look like one person, each with what makes them one; for those who
// may merge, a form per group to pick the contact to keep and, where the members differ, whose value wins. A merge
// comes back with an Undo in its message.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import {
  type DuplicateGroup,
  type DuplicateReason,
  findDuplicates,
  mergeableFields,
  mergeContacts,
  undoMerge,
} from '../../records/duplicates.ts';
import { may } from '../../records/operations.ts';
import { type Choices, referenceChoices } from '../../records/references.ts';
import type { Row } from '../../records/repository.ts';
import { contact } from '../../resources/index.ts';
import type { Field } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith, safeNext } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { Layout, type PageContext } from './views/layout.tsx';
import { recordTitle, Value } from './views/records.tsx';

const BASE = `/${contact.name}`;
const REASONS: Record<DuplicateReason, string> = {
  email: 'Same email',
  phone: 'Same phone',
  name_city: 'Same name and city',
};

const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
const same = (a: unknown, b: unknown) => String(a ?? '') === String(b ?? '');

/** The fields a merge may choose for whose members differ; the rest hold one value already. */
const differing = (fields: readonly Field[], members: readonly Row[]) =>
  fields.filter((f) => members.some((m) => !same(m[f.name], members[0]![f.name])));

/** Whose value a field takes unless chosen otherwise: the kept contact's (the first), or the first that holds one. */
const defaultSource = (field: Field, members: readonly Row[]) =>
  members.find((m) => !isBlank(m[field.name])) ?? members[0]!;

function GroupCard(props: { ctx: PageContext; group: DuplicateGroup; index: number; choices: Choices }) {
  const { ctx, group, index, choices } = props;
  const members = group.contacts;
  const viewer = ctx.viewer!;
  const merging = may(viewer, contact, 'delete');
  const fields = differing(merging ? mergeableFields(viewer) : contact.writable.filter((f) => f.inView), members);
  const heading = `group-${index}`;
  // A value inside a choice is text: a link there (mailto:, tel:) would take the click meant for the radio.
  const value = (f: Field, m: Row) =>
    isBlank(m[f.name]) ? (
      <span class="muted">—</span>
    ) : (
      <Value field={{ ...f, format: undefined }} value={m[f.name]} choices={choices} locale={ctx.locale} />
    );
  const table = (
    <div class="table-wrap">
      <table class="merge-table">
        <caption class="visually-hidden">
          {merging ? 'Pick the contact to keep and, for each field, whose value wins' : 'The contacts of this group'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            {members.map((m) => (
              <th scope="col">
                <a href={`${BASE}/${String(m.id)}`}>{recordTitle(contact, m)}</a>{' '}
                <span class="muted">#{String(m.id)}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {merging ? (
            <tr>
              <th scope="row">Keep</th>
              {members.map((m, i) => (
                <td>
                  <label class="choice">
                    <input type="radio" name="keep" value={String(m.id)} checked={i === 0} required />
                    Keep <span class="visually-hidden">{recordTitle(contact, m)}</span> #{String(m.id)}
                  </label>
                </td>
              ))}
            </tr>
          ) : null}
          {fields.map((f) => {
            const winner = defaultSource(f, members);
            return (
              <tr>
                <th scope="row">{f.label}</th>
                {members.map((m) => (
                  <td>
                    {merging ? (
                      <label class="choice">
                        <input type="radio" name={`fields[${f.name}]`} value={String(m.id)} checked={m === winner} />
                        <span class="visually-hidden">{`${f.label} from #${String(m.id)}:`}</span> {value(f, m)}
                      </label>
                    ) : (
                      value(f, m)
                    )}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
  return (
    <section class="card duplicate-group" aria-labelledby={heading}>
      <h2 id={heading} class="group-reasons">
        {group.reasons.map((r) => `${REASONS[r.by]}: ${r.value}`).join(' · ')}
      </h2>
      {merging ? (
        <form method="post" action={`${BASE}/merge`}>
          <CsrfInput token={ctx.csrf} />
          <input type="hidden" name="ids" value={members.map((m) => String(m.id)).join(',')} />
          {table}
          <p class="muted">The others’ inquiries, notes and tasks move to the one kept; the others go to the trash.</p>
          <button type="submit">Merge {members.length} contacts</button>
        </form>
      ) : (
        table
      )}
    </section>
  );
}

/** A merge as the page's form sends it: the group's ids, the one kept, and whose value each field takes. */
function mergeBodyOf(body: Row) {
  const ids = String(body.ids ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const keep = typeof body.keep === 'string' ? body.keep : undefined;
  return { keep, merge: ids.filter((id) => id !== keep), fields: body.fields ?? {} };
}

/** A refusal in words for the message: the problem's detail and each field's messages. */
const sentenceOf = (error: AppError) =>
  [
    error.detail,
    ...Object.entries(error.errors ?? {}).map(([field, messages]) => `${field} ${messages.join('; ')}`),
  ].join(' ');

/** A refusal the page answers with a message (the others are pages of their own: not allowed, not found). */
const refusedWith = (error: unknown, statuses: number[]): error is AppError =>
  error instanceof AppError && statuses.includes(error.status);

export function duplicatesPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    app.get(`${BASE}/duplicates`, async (request: FastifyRequest<{ Querystring: Row }>, reply) => {
      const found = await findDuplicates(contextOf(database, request), request.query);
      const page = pageContext(request, reply);
      const choices = await referenceChoices(
        database,
        contact,
        found.data.flatMap((g) => g.contacts),
      );
      return sendPage(
        reply,
        <Layout ctx={page} title="Duplicate contacts">
          <p>
            <a href={BASE}>← All contacts</a>
          </p>
          <h1>Duplicate contacts</h1>
          <p class="muted">
            Contacts that share an email address or a phone number (however written), or the same name in the same city.
          </p>
          {found.data.length === 0 ? (
            <p class="card">No duplicates found.</p>
          ) : (
            found.data.map((group, i) => <GroupCard ctx={page} group={group} index={i} choices={choices} />)
          )}
          {found.meta.next_cursor ? (
            <p>
              <a href={`${BASE}/duplicates?cursor=${found.meta.next_cursor}`}>More duplicates</a>
            </p>
          ) : null}
        </Layout>,
      );
    });

    app.post(`${BASE}/merge`, { preHandler: app.csrfProtection }, async (request, reply) => {
      const body = mergeBodyOf((request.body ?? {}) as Row);
      try {
        const { record, mergeId } = await mergeContacts(contextOf(database, request), body);
        const n = body.merge.length;
        return redirectWith(reply, `${BASE}/duplicates`, {
          kind: 'success',
          text: `Merged ${n} ${n === 1 ? contact.singular : contact.plural} into ${recordTitle(contact, record)}.`,
          undo: {
            action: `${BASE}/merge/${mergeId}/undo`,
            change_id: String(mergeId),
            back: `${BASE}/${String(record.id)}`,
          },
        });
      } catch (error) {
        if (!refusedWith(error, [409, 410, 422])) throw error;
        return redirectWith(reply, `${BASE}/duplicates`, { kind: 'error', text: sentenceOf(error) });
      }
    });

    app.post<{ Params: { merge_id: string }; Body: Row }>(
      `${BASE}/merge/:merge_id/undo`,
      { preHandler: app.csrfProtection },
      async (request, reply: FastifyReply) => {
        try {
          const kept = await undoMerge(contextOf(database, request), request.params.merge_id);
          const back = safeNext(request.body?.back);
          return redirectWith(reply, back === '/' ? `${BASE}/${String(kept.id)}` : back, {
            kind: 'success',
            text: `The merge into ${recordTitle(contact, kept)} is undone: the merged contacts are back.`,
          });
        } catch (error) {
          if (!refusedWith(error, [409, 410])) throw error;
          return redirectWith(reply, `${BASE}/duplicates`, { kind: 'error', text: error.detail });
        }
      },
    );
  };
}
