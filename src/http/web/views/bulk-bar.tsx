// Bulk actions on a list page (contacts, inquiries): a checkbox per row and one for the page in the table, and a bar
// below it, one <form> (POST /{r}/bulk) with the CSRF token: assign, change stage, set a state, export, delete. The
// row checkboxes belong to the form through its id. Without JavaScript the bar is always there and a choice posts
// the ticked rows (or, ticked in the bar, every row the list matches), then comes back with a message; a deletion
// asks on a page first. public/bulk.js shows the bar only once something is ticked, offers "Select all N matching",
// asks before a deletion in the bar itself, and sends the work in parts with a progress bar.
import type { ListResult } from '../../../records/operations.ts';
import { may } from '../../../records/operations.ts';
import { BULK_MAX, offersBulk } from '../../../records/bulk.ts';
import type { Choices } from '../../../records/references.ts';
import { optionsOf, type Resource, stateFieldsOf, unsetWordOf } from '../../../schema/resource.ts';
import { CsrfInput } from './form.tsx';
import { Layout, type PageContext } from './layout.tsx';

export const BULK_FORM = 'bulk-form';

type Query = Record<string, unknown>;

/** What the viewer may do with a list's records in bulk; null when nothing (a viewer), or the list has no bar. */
export function bulkAbilities(ctx: PageContext, resource: Resource) {
  const viewer = ctx.viewer;
  if (!viewer || !offersBulk(resource)) return null;
  const abilities = {
    update: may(viewer, resource, 'update', true),
    delete: may(viewer, resource, 'delete', true),
    export: may(viewer, resource, 'export'),
  };
  return abilities.update || abilities.delete || abilities.export ? abilities : null;
}

const encode = (params: URLSearchParams, key: string, value: unknown) => {
  if (value === undefined || value === null || value === '') return;
  if (typeof value === 'object') for (const [k, v] of Object.entries(value)) encode(params, `${key}[${k}]`, v);
  else params.append(key, String(value));
};

/** The page's list parameters that say which records it lists (not which page of them), as a query string. */
export function matchingQuery(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (!['page', 'per_page'].includes(key)) encode(params, key, value);
  return params.toString();
}

/** The header's "select all on this page" box: JavaScript shows it (it cannot do anything without). */
export function SelectPageBox({ count }: { count: number }) {
  return (
    <input
      type="checkbox"
      class="bulk-check"
      data-bulk-page
      hidden
      aria-label={`Select all ${count} ${count === 1 ? 'row' : 'rows'} on this page`}
    />
  );
}

/** A row's box, which sends its id with the bar's form. */
export function SelectRowBox({ id, title }: { id: string; title: string }) {
  return (
    <input
      type="checkbox"
      class="bulk-check"
      name="ids"
      value={id}
      form={BULK_FORM}
      data-bulk-row
      aria-label={`Select ${title}`}
    />
  );
}

const plural = (resource: Resource, n: number) => (n === 1 ? resource.singular : resource.name);

/** One action of the bar that needs a choice: it opens above the bar (a <details>, so it works without JS). */
function Menu({ label, children, danger }: { label: string; children: preact.ComponentChildren; danger?: boolean }) {
  return (
    <details class="bulk-menu" data-bulk-menu>
      <summary class={danger ? 'button button-danger' : 'button button-secondary'}>{label}</summary>
      <div class="bulk-pop">{children}</div>
    </details>
  );
}

export function BulkBar(props: {
  ctx: PageContext;
  resource: Resource;
  result: ListResult;
  query: Query;
  choices: Choices;
}) {
  const { ctx, resource, result, query, choices } = props;
  const abilities = bulkAbilities(ctx, resource);
  if (!abilities) return null;
  const script = <script src="/assets/bulk.js" defer></script>;
  if (result.data.length === 0) return script;
  const total = result.meta.total ?? result.data.length;
  const onPage = result.data.length;
  const assignee = abilities.update ? resource.fields.find((f) => f.assignee && f.fillable && f.target) : undefined;
  const stage = abilities.update ? resource.fields.find((f) => f.name === 'stage_id' && f.target) : undefined;
  const states = abilities.update ? stateFieldsOf(resource) : [];
  // After the work, back to this very page of the list.
  const here = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) encode(here, key, value);
  const back = here.size ? `/${resource.name}?${here}` : `/${resource.name}`;
  return (
    <>
      <form
        id={BULK_FORM}
        method="post"
        action={`/${resource.name}/bulk`}
        class="bulk-bar"
        aria-label={`Bulk actions on ${resource.name}`}
        data-total={String(total)}
        data-singular={resource.singular}
        data-plural={resource.name}
        data-resource={resource.name}
      >
        <CsrfInput token={ctx.csrf} />
        <input type="hidden" name="query" value={matchingQuery(query)} />
        <input type="hidden" name="back" value={back} />
        <div class="bulk-selection">
          <p class="bulk-count" data-bulk-count aria-live="polite">
            Tick the {resource.name} to act on, then choose what to do.
          </p>
          {total > BULK_MAX ? (
            <p class="bulk-note muted">
              Narrow the list to {BULK_MAX.toLocaleString('en-US')} or fewer to act on all that match.
            </p>
          ) : total > onPage ? (
            <>
              <label class="bulk-scope" data-bulk-scope>
                <input type="checkbox" name="scope" value="query" /> All {total.toLocaleString('en-US')} matching{' '}
                {plural(resource, total)}
              </label>
              <button type="button" class="link-button" data-bulk-all hidden>
                Select all {total.toLocaleString('en-US')} matching {plural(resource, total)}
              </button>
            </>
          ) : null}
          <button type="button" class="link-button" data-bulk-clear hidden>
            Clear selection
          </button>
        </div>
        <div class="bulk-actions">
          {assignee ? (
            <Menu label="Assign">
              <label for="bulk-assignee">{assignee.label}</label>
              <select id="bulk-assignee" name={assignee.name} data-bulk-needed>
                <option value="">Choose a teammate…</option>
                <option value="none">Nobody (unassign)</option>
                {(choices.get(assignee.target!.name) ?? []).map((c) => (
                  <option value={c.id}>{c.title}</option>
                ))}
              </select>
              <button type="submit" name="action" value="assign">
                Assign
              </button>
            </Menu>
          ) : null}
          {stage ? (
            <Menu label="Change stage">
              <label for="bulk-stage">{stage.label}</label>
              <select id="bulk-stage" name={stage.name} data-bulk-needed>
                <option value="">Choose a stage…</option>
                {(choices.get(stage.target!.name) ?? []).map((c) => (
                  <option value={c.id}>{c.title}</option>
                ))}
              </select>
              <button type="submit" name="action" value="stage">
                Move
              </button>
            </Menu>
          ) : null}
          {states.length ? (
            <Menu label="Set state">
              <label for="bulk-state-field">State</label>
              <select id="bulk-state-field" name="state_field">
                {states.map((f) => (
                  <option value={f.name}>{f.label}</option>
                ))}
              </select>
              <label for="bulk-state-value">Value</label>
              <select id="bulk-state-value" name="state_value">
                {/* The words of the first field; bulk.js puts each field's own words in when the field changes. */}
                {[...optionsOf(states[0]!), { value: 'null', label: unsetWordOf(states[0]!) }].map((o) => (
                  <option value={o.value}>{o.label}</option>
                ))}
              </select>
              {states.map((f) => (
                <template data-bulk-words={f.name}>
                  {[...optionsOf(f), { value: 'null', label: unsetWordOf(f) }].map((o) => (
                    <option value={o.value}>{o.label}</option>
                  ))}
                </template>
              ))}
              <button type="submit" name="action" value="state">
                Set
              </button>
            </Menu>
          ) : null}
          {abilities.export ? (
            <button type="submit" name="action" value="export" class="button-secondary">
              Export CSV
            </button>
          ) : null}
          {abilities.delete ? (
            <Menu label="Delete" danger>
              <p data-bulk-delete-text>Move the selected {resource.name} to the trash? You can restore them there.</p>
              <button type="submit" name="action" value="delete" class="button-danger">
                Move to the trash
              </button>
            </Menu>
          ) : null}
        </div>
        <div class="bulk-progress" data-bulk-progress hidden>
          <label for="bulk-progress-bar" data-bulk-progress-label>
            Working…
          </label>
          <progress id="bulk-progress-bar" max={100} value={0}></progress>
          <span data-bulk-progress-text aria-hidden="true"></span>
        </div>
      </form>
      {script}
    </>
  );
}

/** Asked before a deletion sent without JavaScript: how many go to the trash, and for how long. */
export function BulkDeletePage(props: {
  ctx: PageContext;
  resource: Resource;
  count: number;
  /** The form's fields to send again (ids or scope and query, back), with `confirmed`. */
  fields: Record<string, string>;
  trashDays: number;
}) {
  const { ctx, resource, count, fields, trashDays } = props;
  const what = `${count.toLocaleString('en-US')} ${plural(resource, count)}`;
  return (
    <Layout ctx={ctx} title={`Delete ${what}`}>
      <section class="card narrow">
        <h1>Delete {what}?</h1>
        <p>
          They go to the trash with their notes for {trashDays} days; until then you can restore them, with their links,
          from the Trash page.
        </p>
        <form method="post" action={`/${resource.name}/bulk`} class="actions">
          <CsrfInput token={ctx.csrf} />
          {Object.entries(fields).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <input type="hidden" name="action" value="delete" />
          <input type="hidden" name="confirmed" value="1" />
          <button type="submit" class="button-danger">
            Move {what} to the trash
          </button>
          <a href={fields.back ?? `/${resource.name}`}>Cancel</a>
        </form>
      </section>
    </Layout>
  );
}
