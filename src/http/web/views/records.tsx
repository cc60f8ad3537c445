// Index, detail, form, conflict and delete views of any declared resource:
// columns are the fields *in index*, the detail shows the fields *in view*,
// the form the fields *in form*, each with its declared label and input.
import type { Entry, SecurityEvent, Timeline, TimelineAction } from '../../../records/change-log.ts';
import type { Choices } from '../../../records/references.ts';
import type { FieldErrors } from '../../../errors.ts';
import { type ListResult, may } from '../../../records/operations.ts';
import type { Row } from '../../../records/repository.ts';
import { offersMerge } from '../../../records/duplicates.ts';
import { recordResources } from '../../../resources/index.ts';
import {
  annotationsOf,
  type Field,
  optionsOf,
  quickAddsOf,
  type Resource,
  unsetWordOf,
} from '../../../schema/resource.ts';
import { formats } from '../../../schema/formats.ts';
import { kinds } from '../../../schema/kinds.ts';
import { BulkBar, bulkAbilities, SelectPageBox, SelectRowBox } from './bulk-bar.tsx';
import { CsrfInput, ErrorSummary, FieldInput } from './form.tsx';
import { Filters } from './list-filters.tsx';
import { type ListState, ListTools } from './list-tools.tsx';
import { type Flash, Layout, type PageContext } from './layout.tsx';

export type Query = Record<string, unknown>;

const title = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `query` with `changes` applied, as a query string (empty values dropped). */
export function hrefWith(path: string, query: Query, changes: Query = {}): string {
  const params = new URLSearchParams();
  const add = (key: string, value: unknown) => {
    if (value === undefined || value === null || value === '') return;
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) add(`${key}[${k}]`, v);
    else params.append(key, String(value));
  };
  for (const [k, v] of Object.entries({ ...query, ...changes })) add(k, v);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export function recordTitle(resource: Resource, record: Row): string {
  const name = record[resource.title.name];
  return typeof name === 'string' && name.trim() ? name : `${title(resource.singular)} #${String(record.id)}`;
}

export const indexFields = (resource: Resource) => resource.visible.filter((f) => f.inIndex);
export const viewFields = (resource: Resource) => resource.visible.filter((f) => f.inView);
export const formFields = (resource: Resource) => resource.writable.filter((f) => f.inForm);

/** A field's value, and what showing it needs. */
interface ValueProps {
  field: Field;
  value: unknown;
  choices: Choices;
  locale: string;
}

export function Value({ field, value, choices, locale }: ValueProps) {
  if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
  const titleOf = (target: Resource, id: unknown) =>
    choices.get(target.name)?.find((c) => c.id === String(id))?.title ?? `#${String(id)}`;
  if (field.target) return <>{titleOf(field.target, value)}</>;
  if (field.listTarget && Array.isArray(value)) {
    const target = field.listTarget;
    return value.length ? value.map((id) => titleOf(target, id)).join(', ') : <span class="muted">—</span>;
  }
  if (field.kind.options) {
    const current = field.kind.toInput(value);
    return <>{optionsOf(field).find((o) => o.value === current)?.label ?? String(value)}</>;
  }
  const { text, datetime, dateOnly } = field.kind.display(value, locale);
  if (datetime)
    return (
      <time datetime={datetime} data-date-only={dateOnly ? 'true' : undefined}>
        {text}
      </time>
    );
  const href = field.format && formats[field.format].href(text);
  return href ? <a href={href}>{text}</a> : text;
}

/** A cell that steps through Not set and the kind's options (Not set → Yes → No → Not set) when pressed. */
export function StateToggle({
  resource,
  record,
  field,
  csrf,
}: {
  resource: Resource;
  record: Row;
  field: Field;
  csrf: string;
}) {
  const current = field.kind.toInput(record[field.name]);
  // The badge's colour follows the value (the kind's own word), its text the field's words.
  const option = field.kind.options?.find((o) => o.value === current);
  const label = option ? optionsOf(field).find((o) => o.value === current)!.label : unsetWordOf(field);
  const cls = option ? `badge-${option.label.toLowerCase()}` : 'badge-unset';
  const action = `/${resource.name}/${String(record.id)}/cycle/${field.name}`;
  return (
    <form method="post" action={action} class="inline" hx-post={action} hx-target="this" hx-swap="outerHTML">
      <CsrfInput token={csrf} />
      <button type="submit" class={`badge ${cls}`} aria-label={`${field.label}: ${label}. Change it`}>
        {label}
      </button>
    </form>
  );
}

interface IndexProps {
  ctx: PageContext;
  resource: Resource;
  result: ListResult;
  query: Query;
  choices: Choices;
  /** The list parameters did not parse: shown instead of the table. */
  problem?: FieldErrors;
  /** The element id htmx swaps (unique on the page). */
  id?: string;
  /** What an empty list says instead of "no match" (a dashboard list has no search to clear). */
  empty?: string;
  /** The viewer's columns and saved views (the list page; a dashboard list shows the default columns, no tools). */
  list?: ListState;
}

function SortHeader(props: { resource: Resource; field: Field; query: Query; lead?: preact.ComponentChildren }) {
  const { resource, field, query, lead } = props;
  if (!field.sortable)
    return (
      <th scope="col" class={`${widthOf(field)} unsorted`}>
        {lead}
        {field.label}
      </th>
    );
  const current = String(query.sort ?? '');
  const ascending = current === field.name;
  const descending = current === `-${field.name}`;
  const next = ascending ? `-${field.name}` : field.name;
  const state = ascending ? 'ascending' : descending ? 'descending' : undefined;
  return (
    <th scope="col" aria-sort={state} class={widthOf(field)}>
      {lead}
      <a href={hrefWith(`/${resource.name}`, query, { sort: next, page: undefined })}>
        {field.label}
        {ascending ? ' ▲' : descending ? ' ▼' : ''}
        <span class="visually-hidden">{ascending ? ', sorted ascending; sort descending' : ', sort ascending'}</span>
      </a>
    </th>
  );
}

function Pager({ resource, result, query }: { resource: Resource; result: ListResult; query: Query }) {
  const { page = 1, per_page, total = 0, last_page = 1 } = result.meta;
  const first = total === 0 ? 0 : (page - 1) * per_page + 1;
  const last = Math.min(total, page * per_page);
  const pages = [...new Set([1, page - 2, page - 1, page, page + 1, page + 2, last_page])]
    .filter((p) => p >= 1 && p <= last_page)
    .sort((a, b) => a - b);
  const link = (p: number) => hrefWith(`/${resource.name}`, query, { page: p === 1 ? undefined : p });
  return (
    <div class="pager">
      {/* Still announced after a live search when nothing matches; the empty box says it to the eye. */}
      <p aria-live="polite" class={total === 0 ? 'visually-hidden' : undefined}>
        {total === 0 ? 'No results' : `Showing ${first}–${last} of ${total}`}
      </p>
      {last_page > 1 ? (
        <nav aria-label="Pages">
          <ul>
            {page > 1 ? (
              <li>
                <a href={link(page - 1)} rel="prev">
                  Previous
                </a>
              </li>
            ) : null}
            {pages.map((p) => (
              <li>
                {p === page ? (
                  <span class="current" aria-current="page">
                    {p}
                  </span>
                ) : (
                  <a href={link(p)}>{p}</a>
                )}
              </li>
            ))}
            {page < last_page ? (
              <li>
                <a href={link(page + 1)} rel="next">
                  Next
                </a>
              </li>
            ) : null}
          </ul>
        </nav>
      ) : null}
    </div>
  );
}

/** A column's width in the list's fixed layout: short values get what they need, long text shares the rest. */
function widthOf(field: Field): string {
  if (field.kind.instant) return 'col-date';
  if (field.kind.options) return 'col-state';
  if (field.target) return 'col-ref';
  if (field.kind.integral) return 'col-number';
  if (field.format === 'phone') return 'col-phone';
  if (field.kind.textual && (field.max ?? 0) <= 100) return 'col-short';
  return 'col-text';
}

/** A value as plain text: what a cell's title shows when the cell cuts it to one line. */
function valueText(field: Field, value: unknown, choices: Choices, locale: string): string {
  if (value === null || value === undefined || value === '') return '';
  if (field.target)
    return choices.get(field.target.name)?.find((c) => c.id === String(value))?.title ?? `#${String(value)}`;
  if (field.kind.options) {
    const current = field.kind.toInput(value);
    return optionsOf(field).find((o) => o.value === current)?.label ?? String(value);
  }
  return field.kind.display(value, locale).text;
}

/** Past this many characters a cell may be cut: its title holds the whole text, and focus shows it. */
const CUT_AT = 24;

/**
 * One cell of a list: the first links to the record; a state is a toggle; any other value on one line, cut with an
 * ellipsis when long — the whole text is its title (hover) and shows when it has focus (it takes focus itself
 * unless it is a link).
 */
function Cell(props: {
  ctx: PageContext;
  resource: Resource;
  record: Row;
  field: Field;
  first: boolean;
  choices: Choices;
}) {
  const { ctx, resource, record, field, first, choices } = props;
  const value = record[field.name];
  if (first) {
    const shown =
      value === null || value === '' ? recordTitle(resource, record) : valueText(field, value, choices, ctx.locale);
    const href = `/${resource.name}/${String(record.id)}`;
    return (
      <a href={href} class="clip" title={shown.length > CUT_AT ? shown : undefined}>
        {shown}
      </a>
    );
  }
  if (field.kind.options && field.fillable)
    return <StateToggle resource={resource} record={record} field={field} csrf={ctx.csrf} />;
  const whole = valueText(field, value, choices, ctx.locale);
  const long = whole.length > CUT_AT;
  const linked = Boolean(field.format && value && formats[field.format].href(whole));
  return (
    <span class="clip" title={long ? whole : undefined} tabIndex={long && !linked ? 0 : undefined}>
      <Value field={field} value={value} choices={choices} locale={ctx.locale} />
    </span>
  );
}

export function Results(props: IndexProps) {
  const { ctx, resource, result, query, choices, problem, id = 'results', empty, list } = props;
  const fields = list?.columns ?? resource.listColumns;
  // The list page's rows can be ticked for a bulk action (views/bulk-bar.tsx); the dashboard's cannot.
  const bulk = id === 'results' && bulkAbilities(ctx, resource) !== null;
  if (problem) {
    return (
      <div id={id}>
        <div class="flash flash-error" role="alert">
          <p>These filters cannot be used:</p>
          <ul>
            {Object.entries(problem).map(([k, v]) => (
              <li>
                {k}: {v.join('; ')}
              </li>
            ))}
          </ul>
          <p>
            <a href={`/${resource.name}`}>Clear the filters</a>
          </p>
        </div>
      </div>
    );
  }
  return (
    <div id={id}>
      {list ? <ListTools ctx={ctx} resource={resource} list={list} /> : null}
      {result.data.length === 0 && empty ? (
        <div class="card empty">
          <p>{empty}</p>
        </div>
      ) : result.data.length === 0 ? (
        <div class="card empty">
          <p>
            No {resource.plural} match{query.search ? <> “{String(query.search)}”</> : null}.
          </p>
          <p>
            <a href={`/${resource.name}`}>Clear the search and filters</a>
          </p>
        </div>
      ) : (
        // Many columns scroll sideways in their box (the header then stays with the table, not the window).
        <div class={`table-wrap list-wrap${fields.length > 10 ? ' wide wider' : fields.length > 7 ? ' wide' : ''}`}>
          <table class="list-table">
            <caption class="visually-hidden">{title(resource.plural)}</caption>
            <thead>
              <tr>
                {fields.map((f, i) => (
                  <SortHeader
                    resource={resource}
                    field={f}
                    query={query}
                    lead={bulk && i === 0 ? <SelectPageBox count={result.data.length} /> : undefined}
                  />
                ))}
              </tr>
            </thead>
            <tbody>
              {result.data.map((record) => (
                <tr>
                  {fields.map((f, i) => (
                    <td data-label={f.label}>
                      {bulk && i === 0 ? (
                        <SelectRowBox id={String(record.id)} title={recordTitle(resource, record)} />
                      ) : null}
                      <Cell ctx={ctx} resource={resource} record={record} field={f} first={i === 0} choices={choices} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {bulk ? <BulkBar ctx={ctx} resource={resource} result={result} query={query} choices={choices} /> : null}
      <Pager resource={resource} result={result} query={query} />
    </div>
  );
}

export function IndexPage(props: IndexProps) {
  const { ctx, resource, query } = props;
  const exportQuery = { search: query.search, filter: query.filter, from: query.from, to: query.to, sort: query.sort };
  return (
    <Layout ctx={ctx} title={title(resource.plural)}>
      <div class="toolbar">
        <h1>{title(resource.plural)}</h1>
        <div class="actions">
          {may(ctx.viewer, resource, 'create') ? (
            <a class="button" href={`/${resource.name}/new`}>
              New {resource.singular}
            </a>
          ) : null}
          {may(ctx.viewer, resource, 'export') ? (
            <a class="button button-secondary" href={hrefWith(`/${resource.name}/export.csv`, exportQuery)}>
              Export CSV
            </a>
          ) : null}
          {may(ctx.viewer, resource, 'import') ? (
            <a class="button button-secondary" href={`/${resource.name}/import`}>
              Import CSV
            </a>
          ) : null}
          {offersMerge(resource) && may(ctx.viewer, resource, 'delete') ? (
            <a class="button button-secondary" href={`/${resource.name}/duplicates`}>
              Duplicates
            </a>
          ) : null}
        </div>
      </div>
      <Filters resource={resource} query={query} choices={props.choices} columns={props.list?.columnsParam} />
      <Results {...props} />
    </Layout>
  );
}

/** The records of another resource that reference this one through `field` (a user's assigned inquiries). */
export interface HasMany {
  resource: Resource;
  field: Field;
  result: ListResult;
}

/** A record that is done once its `done_at` is set (a task): the panels show its state and a Done button. */
export const DONE_FIELD = 'done_at';

function HasManyPanel(props: { ctx: PageContext; owner: Resource; record: Row; panel: HasMany }) {
  const { ctx, owner, record, panel } = props;
  const { resource, field, result } = panel;
  const total = result.meta.total ?? result.data.length;
  const ownerId = String(record[owner.primaryKey.name]);
  const all = `/${resource.name}?filter[${field.name}]=${ownerId}`;
  const heading = `${title(resource.plural)} · ${field.label}`;
  const done = resource.field(DONE_FIELD);
  const due = resource.field('due_at');
  const here = `/${owner.name}/${ownerId}`;
  const anchor = `${resource.name}-${field.name}`;
  return (
    <section class="card has-many" id={anchor} aria-label={heading}>
      <h2>
        {heading} <span class="muted">({total.toLocaleString('en-US')})</span>
      </h2>
      {result.data.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ul>
          {result.data.map((r) => {
            const isDone = done && r[DONE_FIELD] != null;
            return (
              <li class={isDone ? 'is-done' : undefined}>
                <a href={`/${resource.name}/${String(r.id)}`}>{recordTitle(resource, r)}</a>
                {due && r.due_at != null ? (
                  <span class="muted">
                    {' · due '}
                    <Value field={due} value={r.due_at} choices={new Map()} locale={ctx.locale} />
                  </span>
                ) : null}
                {isDone ? <span class="muted"> · done</span> : null}
                {done && !isDone && may(ctx.viewer, resource, 'update', r) ? (
                  <form method="post" action={`/${resource.name}/${String(r.id)}/done`} class="inline">
                    <CsrfInput token={ctx.csrf} />
                    <input type="hidden" name="back" value={`${here}#${anchor}`} />
                    <button type="submit" class="button-secondary">
                      Done<span class="visually-hidden"> {recordTitle(resource, r)}</span>
                    </button>
                  </form>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
      {total > result.data.length && (
        <p>
          <a href={all}>
            All {total.toLocaleString('en-US')} {resource.plural}
          </a>
        </p>
      )}
      {quickAddsOf(owner).some((q) => q.field === field) && may(ctx.viewer, resource, 'create') ? (
        // Added here in one step: the reference to this record is filled in.
        <form method="post" action={`${here}/${resource.name}`} class="quick-add">
          <CsrfInput token={ctx.csrf} />
          {resource.quickAdd.map((f) => (
            <FieldInput field={f} value={null} choices={new Map()} />
          ))}
          <button type="submit">Add {resource.singular}</button>
        </form>
      ) : null}
    </section>
  );
}

// Every action has its words: a new one does not compile without them.
const DONE: Record<TimelineAction | SecurityEvent, string> = {
  created: 'created it',
  updated: 'changed',
  deleted: 'deleted it',
  restored: 'restored',
  merged: 'merged others into this one',
  note: 'added a note',
  sign_in: 'signed in',
  sign_in_failed: 'failed to sign in',
  locked: 'locked after too many failed sign-ins',
  two_factor_enabled: 'turned two-factor on',
  two_factor_disabled: 'turned two-factor off',
  password_changed: 'changed the password',
  token_created: 'made an API token',
  token_revoked: 'revoked an API token',
  role_changed: 'changed the role',
  user_deactivated: 'deactivated the account',
  settings_changed: 'changed the settings',
  columns_chosen: 'chose the columns of a list',
};
const DOOR: Record<string, string> = {
  web: 'the web app',
  api: 'the API',
  import: 'a CSV import',
  cli: 'the command line',
};

/** A merge on the kept record's timeline: "merged 2 contacts into this one (#12, #15)". */
function mergedWords(resource: Resource, ids: readonly bigint[]): string {
  const what = ids.length === 1 ? resource.singular : resource.plural;
  return `merged ${ids.length} ${what} into this one (${ids.map((id) => `#${id}`).join(', ')})`;
}

/** A value in a change: "Not set" for a kind with options (a tri-state), else as the record page shows it. */
function ChangedValue({ field, value, choices, locale }: ValueProps) {
  if ((value === null || value === undefined) && field.kind.options) return <>{unsetWordOf(field)}</>;
  return <Value field={field} value={value} choices={choices} locale={locale} />;
}

/** Adding a note without leaving the page: htmx swaps the activity panel; without JS the form posts and comes back. */
function AddNote({ ctx, resource, path }: { ctx: PageContext; resource: Resource; path: string }) {
  return annotationsOf(resource)
    .filter(({ resource: other }) => may(ctx.viewer, other, 'create'))
    .map(({ resource: other }) => (
      <form
        method="post"
        action={`${path}/${other.name}`}
        class="add-note"
        hx-post={`${path}/${other.name}`}
        hx-target="#activity"
        hx-swap="outerHTML"
      >
        <CsrfInput token={ctx.csrf} />
        <label for={`new-${other.singular}`}>Add a {other.singular}</label>
        <textarea
          id={`new-${other.singular}`}
          name={other.title.name}
          rows={3}
          maxlength={other.title.max}
          required
          placeholder="Write a note; @name or @email tells a teammate"
        />
        <button type="submit">Add {other.singular}</button>
      </form>
    ));
}

/** A note on the timeline: its text as it is now; its author or an admin may edit or delete it. */
function NoteEntry({ ctx, resource, entry }: { ctx: PageContext; resource: Resource; entry: Entry }) {
  const note = entry.note;
  const notes = annotationsOf(resource).find((a) => a.resource.decl.timelineAction === entry.action)?.resource;
  if (!note || !notes) return null;
  // The entry's actor wrote it.
  const mine = may(ctx.viewer, notes, 'update', { created_by: entry.actor?.id ?? null });
  return (
    <>
      <p class="note-body">{note.body}</p>
      {mine ? (
        <p class="note-actions">
          <a href={`/${notes.name}/${String(note.id)}/edit`}>Edit</a> ·{' '}
          <a href={`/${notes.name}/${String(note.id)}/delete`}>Delete</a>
        </p>
      ) : null}
    </>
  );
}

/** The record's timeline, newest first: who changed what ("Status: Not set → Yes"), when, and through which door. */
export function ActivityPanel(props: {
  ctx: PageContext;
  resource: Resource;
  record: Row;
  path: string;
  activity: Timeline;
  choices: Choices;
  /** What adding a note did, when the panel is sent alone (htmx). */
  notice?: Flash;
}) {
  const { ctx, resource, record, path, activity, choices, notice } = props;
  const mayUndo = may(ctx.viewer, resource, 'update', record);
  return (
    <section class="card activity" id="activity" aria-label="Activity">
      <h2>Activity</h2>
      {notice ? (
        <p class={`flash flash-${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>
          {notice.text}
        </p>
      ) : null}
      <AddNote ctx={ctx} resource={resource} path={path} />
      {activity.data.length === 0 ? (
        <p class="muted">No changes recorded yet.</p>
      ) : (
        <ol class="activity-list">
          {activity.data.map((entry) => {
            const when = kinds.dateTime.display(entry.at, ctx.locale);
            return (
              <li>
                <p>
                  <strong>{entry.actor?.name ?? 'Someone'}</strong>{' '}
                  {entry.merged
                    ? mergedWords(resource, entry.merged)
                    : (DONE[entry.action as TimelineAction] ?? entry.action)}{' '}
                  <span class="muted">
                    · <time datetime={entry.at}>{when.text}</time> · through {DOOR[entry.via] ?? entry.via}
                  </span>
                </p>
                {entry.changes || entry.hidden_changed ? (
                  <ul>
                    {Object.entries(entry.changes ?? {}).map(([name, [from, to]]) => {
                      const field = resource.field(name);
                      if (!field) return null;
                      const shown = { field, choices, locale: ctx.locale };
                      return (
                        <li>
                          {field.label}: <ChangedValue {...shown} value={from} /> →{' '}
                          <ChangedValue {...shown} value={to} />
                        </li>
                      );
                    })}
                    {(entry.hidden_changed ?? []).map((name) => (
                      <li>{resource.field(name)?.label ?? name} changed</li>
                    ))}
                  </ul>
                ) : null}
                <NoteEntry ctx={ctx} resource={resource} entry={entry} />
                {mayUndo && entry.changes && (entry.action === 'updated' || entry.action === 'restored') ? (
                  <form method="post" action={`${path}/restore`} class="inline">
                    <CsrfInput token={ctx.csrf} />
                    <input type="hidden" name="change_id" value={String(entry.id)} />
                    <button type="submit" class="link-button">
                      Undo this change
                    </button>
                  </form>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
      {activity.meta.next_cursor ? (
        <p>
          <a href={`${path}?activity=${activity.meta.next_cursor}#activity`}>Older changes</a>
        </p>
      ) : null}
    </section>
  );
}

export function DetailPage(props: {
  ctx: PageContext;
  resource: Resource;
  record: Row;
  choices: Choices;
  extra?: preact.ComponentChildren;
  panels?: HasMany[];
  activity?: Timeline;
}) {
  const { ctx, resource, record, choices, extra, panels = [], activity } = props;
  const id = String(record.id);
  return (
    <Layout ctx={ctx} title={recordTitle(resource, record)}>
      <p>
        <a href={`/${resource.name}`}>← All {resource.plural}</a>
      </p>
      <div class="toolbar">
        <h1>{recordTitle(resource, record)}</h1>
        <div class="actions">
          {may(ctx.viewer, resource, 'update', record) ? (
            <a class="button" href={`/${resource.name}/${id}/edit`}>
              Edit
            </a>
          ) : null}
          {recordResources
            .filter((r) => r.base === resource && may(ctx.viewer, r, 'create'))
            .map((r) => (
              <a class="button button-secondary" href={`/${r.name}/new?from=${id}`}>
                Create {r.singular}
              </a>
            ))}
          {may(ctx.viewer, resource, 'delete', record) ? (
            <a class="button button-danger" href={`/${resource.name}/${id}/delete`}>
              Delete
            </a>
          ) : null}
        </div>
      </div>
      <section class="card" aria-label="Details">
        <dl class="record">
          {viewFields(resource).map((f) => (
            <>
              <dt>{f.label}</dt>
              <dd>
                <Value field={f} value={record[f.name]} choices={choices} locale={ctx.locale} />
              </dd>
            </>
          ))}
          {(['created_at', 'updated_at'] as const)
            .filter((n) => resource.field(n))
            .map((n) => (
              <>
                <dt>{n === 'created_at' ? 'Created' : 'Last changed'}</dt>
                <dd>
                  <Value field={resource.field(n)!} value={record[n]} choices={choices} locale={ctx.locale} />
                </dd>
              </>
            ))}
        </dl>
      </section>
      {panels.map((panel) => (
        <HasManyPanel ctx={ctx} owner={resource} record={record} panel={panel} />
      ))}
      {extra}
      {activity ? (
        <ActivityPanel
          ctx={ctx}
          resource={resource}
          record={record}
          path={`/${resource.name}/${id}`}
          activity={activity}
          choices={choices}
        />
      ) : null}
    </Layout>
  );
}

export interface FormProps {
  ctx: PageContext;
  resource: Resource;
  /** Absent for a new record. */
  record?: Row;
  values: Record<string, unknown>;
  errors?: FieldErrors;
  etag?: string;
  choices: Choices;
  /** Where a new record came from (an inquiry made from a contact). */
  note?: string;
  /** What the edit form first showed (JSON), carried through a failed save; default: the record's values. */
  was?: string;
}

/** What an edit form's controls show for a record: the text of each form field, as JSON. */
export const shownValues = (resource: Resource, record: Row) =>
  JSON.stringify(Object.fromEntries(formFields(resource).map((f) => [f.name, f.kind.toInput(record[f.name])])));

export function RecordForm({ ctx, resource, record, values, errors, etag, choices, note, was }: FormProps) {
  const editing = record !== undefined;
  const action = editing ? `/${resource.name}/${String(record.id)}` : `/${resource.name}`;
  const heading = editing ? `Edit ${recordTitle(resource, record)}` : `New ${resource.singular}`;
  return (
    <Layout ctx={ctx} title={heading}>
      <p>
        <a href={editing ? action : `/${resource.name}`}>← {editing ? 'Back' : `All ${resource.plural}`}</a>
      </p>
      <h1>{heading}</h1>
      {note ? <p class="flash flash-info">{note}</p> : null}
      <ErrorSummary errors={errors} />
      <form method="post" action={action} class="card" novalidate>
        <CsrfInput token={ctx.csrf} />
        {etag ? <input type="hidden" name="_etag" value={etag} /> : null}
        {/* What the form showed: a save sends only the fields the user changed, and a colleague's change to
            another field since is no conflict. */}
        {editing ? <input type="hidden" name="_was" value={was ?? shownValues(resource, record)} /> : null}
        <div class="form-grid">
          {formFields(resource)
            // Who created a record is the server's to say; an admin may correct it.
            .filter((f) => !f.defaultActor || ctx.viewer?.role === 'admin')
            .map((f, i) => (
              <FieldInput
                field={f}
                value={values[f.name]}
                errors={errors?.[f.name]}
                choices={choices}
                autoFocus={i === 0 && !errors}
                optionalPassword={editing && f.kind.writeOnly}
              />
            ))}
        </div>
        <div class="actions">
          <button type="submit">{editing ? 'Save changes' : `Create ${resource.singular}`}</button>
          <a href={editing ? action : `/${resource.name}`}>Cancel</a>
        </div>
      </form>
    </Layout>
  );
}

/** Someone saved first: both versions side by side, and the choice is the user's. */
export function ConflictPage({
  ctx,
  resource,
  theirs,
  mine,
  overlap,
  etag,
  choices,
}: {
  ctx: PageContext;
  resource: Resource;
  theirs: Row;
  /** The fields the user changed, as the form sent them. */
  mine: Record<string, unknown>;
  /** The fields both changed, differently (none known: every field of the form that differs). */
  overlap?: readonly string[];
  etag: string;
  choices: Choices;
}) {
  const id = String(theirs.id);
  const changed = formFields(resource).filter((f) =>
    overlap ? overlap.includes(f.name) : f.name in mine && String(mine[f.name] ?? '') !== String(theirs[f.name] ?? ''),
  );
  return (
    <Layout ctx={ctx} title="Someone else saved first">
      <h1>Someone else saved this {resource.singular} first</h1>
      <p class="flash flash-error" role="alert">
        While you were editing, another change to “{recordTitle(resource, theirs)}” was saved.{' '}
        {overlap ? `You both changed ${changed.map((f) => f.label).join(', ')}. ` : ''}Nothing of yours was written.
        Compare the two versions and choose.
      </p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Saved by the other person</th>
              <th scope="col">Your version</th>
            </tr>
          </thead>
          <tbody>
            {(changed.length ? changed : formFields(resource)).map((f) => (
              <tr>
                <th scope="row">{f.label}</th>
                <td>
                  <Value field={f} value={theirs[f.name]} choices={choices} locale={ctx.locale} />
                </td>
                <td>
                  {mine[f.name] === null || mine[f.name] === undefined || mine[f.name] === '' ? (
                    <span class="muted">—</span>
                  ) : (
                    String(mine[f.name])
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="actions spaced">
        <form method="post" action={`/${resource.name}/${id}`}>
          <CsrfInput token={ctx.csrf} />
          <input type="hidden" name="_etag" value={etag} />
          <input type="hidden" name="_was" value={shownValues(resource, theirs)} />
          {Object.entries(mine).map(([k, v]) => (
            <input type="hidden" name={k} value={v === null || v === undefined ? '' : String(v)} />
          ))}
          <button type="submit">Save my version over theirs</button>
        </form>
        <a class="button button-secondary" href={`/${resource.name}/${id}`}>
          Keep theirs
        </a>
        <a href={`/${resource.name}/${id}/edit`}>Start again from theirs</a>
      </div>
    </Layout>
  );
}

export function DeletePage(props: {
  ctx: PageContext;
  resource: Resource;
  record: Row;
  /** Set when the record goes to the trash. */
  trashDays?: number;
  /** The work assigned to a user, by resource: someone must take it over. */
  work?: { resource: Resource; count: number }[];
  heirs?: Row[];
  errors?: FieldErrors;
}) {
  const { ctx, resource, record, trashDays, work = [], heirs = [], errors } = props;
  const id = String(record.id);
  const title = recordTitle(resource, record);
  const what = work.map((w) => `${w.count} ${w.count === 1 ? w.resource.singular : w.resource.plural}`).join(' and ');
  return (
    <Layout ctx={ctx} title={`Delete ${title}`}>
      <section class="card narrow">
        <h1>Delete {title}?</h1>
        <ErrorSummary errors={errors} />
        {trashDays ? (
          <p>
            This {resource.singular} and its notes go to the trash for {trashDays} days; until then you can restore
            them, with their links, from the Trash page.
          </p>
        ) : (
          <p>
            This {resource.singular} will be removed for everyone. This cannot be undone.
            {resource.field('active') ? (
              <>
                {' '}
                To stop their sign-ins and keep their name on their work,{' '}
                <a href={`/${resource.name}/${id}/edit`}>deactivate</a> the account instead.
              </>
            ) : null}
          </p>
        )}
        <form method="post" action={`/${resource.name}/${id}/delete`} class="actions">
          <CsrfInput token={ctx.csrf} />
          {work.length ? (
            <div class="field">
              <label for="reassign_to">
                {title} still has {what} assigned. Give them to
              </label>
              <select
                id="reassign_to"
                name="reassign_to"
                required
                aria-invalid={errors?.reassign_to ? 'true' : undefined}
              >
                <option value="">Choose a teammate…</option>
                {heirs.map((h) => (
                  <option value={String(h.id)}>{String(h.name)}</option>
                ))}
              </select>
            </div>
          ) : null}
          <button type="submit" class="button-danger">
            Delete
          </button>
          <a href={`/${resource.name}/${id}`}>Cancel</a>
        </form>
      </section>
    </Layout>
  );
}
