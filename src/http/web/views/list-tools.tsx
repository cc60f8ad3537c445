// Above a list's table: its saved views (the viewer's own, then those the team
// shares), the column chooser and "Save view". Each is a plain form in a
// <details>, so everything works without JavaScript; they sit inside the
// results, so a live search or filter renders them again with the new query.
import type { Field, Resource } from '../../../schema/resource.ts';
import { columnChoices } from '../../../records/list-columns.ts';
import { CsrfInput } from './form.tsx';
import type { PageContext } from './layout.tsx';

export interface SavedView {
  id: string;
  name: string;
  /** The list with the view's query and columns. */
  href: string;
  shared: boolean;
  /** Whose it is, when not the viewer's. */
  owner: string | null;
  mayDelete: boolean;
  /** The list shows exactly this view now. */
  current: boolean;
}

/** What the list page knows about how its viewer sees it. */
export interface ListState {
  /** The columns shown, in order. */
  columns: readonly Field[];
  /** The columns the address asks for (a saved view's), as field names; null: the viewer's own. */
  columnsParam: string | null;
  /** The viewer has chosen their own columns (else the declaration's). */
  custom: boolean;
  /** The list's query as a view keeps it (search, filters, sort); also where a form comes back to. */
  viewQuery: string;
  /** The list as it opens: no search, no filter, the viewer's columns. */
  all: boolean;
  /** The saved views of the list; undefined when the resource keeps none. */
  views?: SavedView[];
}

function SavedViews({ ctx, resource, list }: { ctx: PageContext; resource: Resource; list: ListState }) {
  const here = `/${resource.name}${list.viewQuery ? `?${list.viewQuery}` : ''}`;
  return (
    <nav class="saved-views" aria-label={`Saved views of ${resource.name}`}>
      <ul>
        <li>
          <a href={`/${resource.name}`} aria-current={list.all ? 'page' : undefined}>
            All {resource.plural}
          </a>
        </li>
        {list.views!.map((v) => (
          <li>
            <a href={v.href} aria-current={v.current ? 'page' : undefined}>
              {v.name}
            </a>
            {v.shared ? <span class="view-tag">{v.owner ? `shared by ${v.owner}` : 'shared'}</span> : null}
            {v.mayDelete ? (
              <form method="post" action={`/views/${v.id}/delete`} class="inline">
                <CsrfInput token={ctx.csrf} />
                <input type="hidden" name="next" value={here} />
                <button type="submit" class="link-button view-delete" aria-label={`Delete the view “${v.name}”`}>
                  ×
                </button>
              </form>
            ) : null}
          </li>
        ))}
      </ul>
    </nav>
  );
}

function ColumnChooser({ ctx, resource, list }: { ctx: PageContext; resource: Resource; list: ListState }) {
  // The columns shown first, in their order (a save keeps it), then the others in the declaration's.
  const shown = new Set(list.columns);
  const ordered = [...list.columns, ...columnChoices(resource).filter((f) => !shown.has(f))];
  return (
    <details class="list-tool">
      <summary>Columns</summary>
      <form method="post" action={`/${resource.name}/columns`} class="list-tool-panel">
        <CsrfInput token={ctx.csrf} />
        <input type="hidden" name="back" value={list.viewQuery} />
        <fieldset>
          <legend>Columns to show</legend>
          <ul class="column-choices">
            {ordered.map((f) => (
              <li>
                <label>
                  <input type="checkbox" name="columns" value={f.name} checked={shown.has(f)} /> {f.label}
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
        {list.columnsParam ? (
          <p class="field-hint">These are the view’s columns; saving makes them your own for this list.</p>
        ) : null}
        <div class="actions">
          <button type="submit">Save columns</button>
          <button type="submit" name="reset" value="1" class="button-secondary">
            Reset to default
          </button>
        </div>
      </form>
    </details>
  );
}

function SaveView({ ctx, resource, list }: { ctx: PageContext; resource: Resource; list: ListState }) {
  return (
    <details class="list-tool">
      <summary>Save view</summary>
      <form method="post" action={`/${resource.name}/views`} class="list-tool-panel">
        <CsrfInput token={ctx.csrf} />
        <input type="hidden" name="query" value={list.viewQuery} />
        <input type="hidden" name="columns" value={list.columns.map((f) => f.name).join(',')} />
        <div class="field">
          <label for="view-name">Name of the view</label>
          <input id="view-name" name="name" required maxLength={100} autocomplete="off" />
        </div>
        <div class="field">
          <label class="check">
            <input type="checkbox" name="shared" value="true" /> Share with the team
          </label>
        </div>
        <p class="field-hint">It keeps the search, the filters, the sort and the columns shown now.</p>
        <button type="submit">Save view</button>
      </form>
    </details>
  );
}

export function ListTools({ ctx, resource, list }: { ctx: PageContext; resource: Resource; list: ListState }) {
  return (
    <div class="list-tools">
      {list.views ? <SavedViews ctx={ctx} resource={resource} list={list} /> : <span />}
      <div class="list-tool-buttons">
        <ColumnChooser ctx={ctx} resource={resource} list={list} />
        {list.views ? <SaveView ctx={ctx} resource={resource} list={list} /> : null}
      </div>
    </div>
  );
}
