// The settings page (admins): the lists the team picks from (pipeline stages, sources, services) and the assignment
// rules, kept on their own record pages, with a dry run of the rules; the words of the state fields (Status: Closed /
// Open / New), kept here.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { currentLabels, type Labels, STATE_WORDS, saveLabels } from '../../records/settings.ts';
import { choicesOf } from '../../records/references.ts';
import { dryRun } from '../../resources/assignment.ts';
import { MATCH_KEYS } from '../../resources/assignment-rule.ts';
import {
  assignmentRule,
  inquiry,
  intakeForm,
  recordResources,
  service,
  source,
  stage,
  webhook,
} from '../../resources/index.ts';
import { droppedCounts } from '../../resources/intake.ts';
import { kinds } from '../../schema/kinds.ts';
import { stateFieldsOf } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { Layout } from './views/layout.tsx';

const WORD_LABELS: Record<(typeof STATE_WORDS)[number], string> = {
  label: 'Field label',
  true: 'Yes means',
  false: 'No means',
  null: 'Not set means',
};
const DEFAULT_WORDS = { label: '', true: 'Yes', false: 'No', null: 'Not set' };

type Form = Record<string, unknown>;

export function settingsPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    const csrf = { preHandler: app.csrfProtection };

    app.get('/settings', async (request, reply) => {
      if (request.actor?.role !== 'admin') throw new AppError(403, 'forbidden', 'Only admins may change the settings.');
      const labels = currentLabels(recordResources);
      // "Which rule would take this inquiry?": the fields tried, when the form was sent.
      const query = request.query as Record<string, unknown>;
      const asked = Object.fromEntries(
        MATCH_KEYS.flatMap((k) => (typeof query[k] === 'string' && query[k] ? [[k, query[k]]] : [])),
      );
      const tried = query.try ? await dryRun(database.db, asked) : undefined;
      const [services, sources, forms, dropped] = await Promise.all([
        choicesOf(database, service),
        choicesOf(database, source),
        database.db
          .selectFrom('intake_forms')
          .select(['id', 'name', 'slug', 'fields', 'required', 'active'])
          .orderBy('name')
          .execute(),
        droppedCounts(database.db),
      ]);
      const origin = `${request.protocol}://${request.host}`;
      const page = pageContext(request, reply);
      return sendPage(
        reply,
        <Layout ctx={page} title="Settings">
          <h1>Settings</h1>
          <section class="card">
            <h2>The team</h2>
            <ul>
              <li>
                <a href="/users">Users</a>: invite, change roles, deactivate.
              </li>
              <li>
                <a href="/activity">Activity</a>: the audit log of every change and sign-in.
              </li>
            </ul>
          </section>
          <section class="card">
            <h2>Lists the team picks from</h2>
            <ul>
              <li>
                <a href={`/${stage.name}?sort=position`}>Pipeline stages</a>: add, rename, reorder (position), archive.
              </li>
              <li>
                <a href={`/${source.name}`}>Sources</a>: where inquiries come from.
              </li>
              <li>
                <a href={`/${service.name}`}>Services</a>: what they are about.
              </li>
            </ul>
          </section>
          <section class="card" id="intake" aria-labelledby="intake-heading">
            <h2 id="intake-heading">Inquiries from your website</h2>
            <p>
              <a href={`/${intakeForm.name}`}>Intake forms</a>: public forms that bring inquiries in by themselves. Each
              is a page of its own, or a snippet for your site; spam is thrown away and counted.
            </p>
            {forms.map((f) => {
              const asked = [
                ...new Set([...JSON.parse(f.fields ?? '[]'), ...JSON.parse(f.required ?? '[]')]),
              ] as string[];
              const iframe =
                `<iframe src="${origin}/f/${f.slug}" title="${f.name}" ` +
                'style="width:100%;min-height:40rem;border:0"></iframe>';
              const html = [
                `<form method="post" action="${origin}/api/v1/intake/${f.slug}">`,
                ...asked.map((name) => `  <label>${inquiry.field(name)?.label ?? name} <input name="${name}"></label>`),
                // The trap field: people never see it; a program that fills in every box does.
                '  <input name="website" tabindex="-1" autocomplete="off" aria-hidden="true"' +
                  ' style="position:absolute;left:-10000px">',
                '  <button type="submit">Send</button>',
                '</form>',
              ].join('\n');
              return (
                <details class="intake-form">
                  <summary>
                    {f.name} {f.active ? null : <span class="muted">(inactive)</span>} ·{' '}
                    <span class="muted">{dropped.get(String(f.id)) ?? 0} dropped as spam</span>
                  </summary>
                  <p>
                    The page: <a href={`/f/${f.slug}`}>{`${origin}/f/${f.slug}`}</a> ·{' '}
                    <a href={`/${intakeForm.name}/${String(f.id)}/edit`}>Edit the form</a>
                  </p>
                  <div class="field">
                    <label for={`snippet-frame-${String(f.id)}`}>Embed the page (allow your site in its origins)</label>
                    <textarea id={`snippet-frame-${String(f.id)}`} readOnly rows={3}>
                      {iframe}
                    </textarea>
                  </div>
                  <div class="field">
                    <label for={`snippet-form-${String(f.id)}`}>Or paste a plain HTML form</label>
                    <textarea id={`snippet-form-${String(f.id)}`} readOnly rows={asked.length + 4}>
                      {html}
                    </textarea>
                  </div>
                </details>
              );
            })}
          </section>
          <section class="card" id="assignment" aria-labelledby="assignment-heading">
            <h2 id="assignment-heading">Who gets new inquiries</h2>
            <p>
              <a href={`/${assignmentRule.name}?sort=position`}>Assignment rules</a>: tried in order, the first that
              matches a new inquiry without an assignee gives it to one of its team members (in turn, the least busy, or
              the first who can; skipping who is deactivated or at capacity) and sets when it should be answered.
            </p>
            <form method="get" action="/settings#assignment">
              <input type="hidden" name="try" value="1" />
              <h3>Which rule would take this inquiry?</h3>
              <div class="filters">
                {(['country', 'inquiry_country'] as const).map((k) => (
                  <div class="field">
                    <label for={`try-${k}`}>{inquiry.field(k)!.label}</label>
                    <input id={`try-${k}`} name={k} maxLength={255} value={String(asked[k] ?? '')} />
                  </div>
                ))}
                {(
                  [
                    ['service_id', services],
                    ['source_id', sources],
                  ] as const
                ).map(([k, options]) => (
                  <div class="field">
                    <label for={`try-${k}`}>{inquiry.field(k)!.label}</label>
                    <select id={`try-${k}`} name={k}>
                      <option value="">Any</option>
                      {options.map((o) => (
                        <option value={o.id} selected={String(asked[k] ?? '') === o.id}>
                          {o.title}
                        </option>
                      ))}
                    </select>
                  </div>
                ))}
              </div>
              <button type="submit" class="button-secondary">
                Try the rules
              </button>
            </form>
            {tried ? (
              <p class="flash flash-info" role="status">
                {tried.rule === null ? (
                  'No active rule matches: the inquiry would stay unassigned.'
                ) : (
                  <>
                    “{tried.rule.name}” would take it and give it to{' '}
                    {tried.user ? tried.user.name : 'nobody (everyone is deactivated or at capacity)'}
                    {tried.due_at
                      ? `, to be answered by ${kinds.dateTime.display(tried.due_at, page.locale).text}`
                      : ''}
                    .
                  </>
                )}
              </p>
            ) : null}
          </section>
          <section class="card" id="webhooks" aria-labelledby="webhooks-heading">
            <h2 id="webhooks-heading">Other programs</h2>
            <p>
              <a href={`/${webhook.name}`}>Webhooks</a>: tell a chat channel, an invoicing system or a dashboard about
              new and changed contacts, inquiries, notes and tasks as they happen, signed as Standard Webhooks says,
              retried for a day when the receiver is away. Each webhook's page shows what was sent and how it went.
            </p>
          </section>
          <form method="post" action="/settings" class="card">
            <CsrfInput token={page.csrf} />
            <h2>Words of the states</h2>
            <p class="muted">
              What each state field and its values are called on every page and in GET /schema (e.g. Status: Closed,
              Open, New). Leave a box empty for the default.
            </p>
            {recordResources.flatMap((r) =>
              stateFieldsOf(r).map((f) => {
                const key = `${r.name}.${f.name}`;
                return (
                  <fieldset class="settings-words">
                    <legend>
                      {r.label}: {f.label} <code>{f.name}</code>
                    </legend>
                    {STATE_WORDS.map((w) => (
                      <div class="field">
                        <label for={`${key}-${w}`}>{WORD_LABELS[w]}</label>
                        <input
                          id={`${key}-${w}`}
                          name={`${key}.${w}`}
                          maxLength={50}
                          value={labels[key]?.[w] ?? ''}
                          placeholder={DEFAULT_WORDS[w] || undefined}
                        />
                      </div>
                    ))}
                  </fieldset>
                );
              }),
            )}
            <button type="submit">Save words</button>
          </form>
        </Layout>,
      );
    });

    app.post('/settings', csrf, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const input: Labels = {};
      for (const [name, value] of Object.entries(form)) {
        const at = name.lastIndexOf('.');
        if (at < 0) continue;
        const key = name.slice(0, at);
        input[key] = { ...input[key], [name.slice(at + 1)]: String(value) };
      }
      try {
        await saveLabels(contextOf(database, request), recordResources, input);
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 422) throw error;
        const text = Object.entries(error.errors ?? {})
          .map(([k, m]) => `${k} ${m.join(', ')}`)
          .join('; ');
        return redirectWith(reply, '/settings', { kind: 'error', text: `Nothing was saved: ${text}.` });
      }
      return redirectWith(reply, '/settings', { kind: 'success', text: 'The words were saved.' });
    });
  };
}
