// The search and filter form of a list, derived from the declaration: one
// control for every field a person reads (the fields a list may show) — text
// as "contains", numbers as equal, states and choices as selects, references
// as a select of titles, date-times as a from–to range. A plain GET form that
// htmx also sends as the user types; empty controls are left out of the
// address (app.js drops them, the page redirects a plain form's).
import { columnChoices } from '../../../records/list-columns.ts';
import type { Choices } from '../../../records/references.ts';
import type { Row } from '../../../records/repository.ts';
import { type Field, optionsOf, type Resource, unsetWordOf } from '../../../schema/resource.ts';

type Query = Record<string, unknown>;

const PER_PAGE_CHOICES = [10, 25, 50, 100];
const DAY = 86_400_000;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** How a field is filtered on the form. */
type Control = 'state' | 'choice' | 'reference' | 'range' | 'number' | 'contains';

function controlOf(field: Field): Control | null {
  if (field.kind.options) return 'state';
  if (field.choices) return 'choice';
  if (field.target) return 'reference';
  if (field.kind.instant) return 'range';
  if (field.kind.integral) return 'number';
  if (field.kind.textual && field.kind.operators.includes('contains')) return 'contains';
  return null;
}

// Selects first (what a team filters by most), then the boxes to type in, then the date ranges.
const ORDER: Control[] = ['reference', 'state', 'choice', 'contains', 'number', 'range'];

/** The fields the form filters by, each with its control, in the order the form shows them. */
export function filterControls(resource: Resource): { field: Field; control: Control }[] {
  const all = columnChoices(resource).flatMap((field) => {
    const control = controlOf(field);
    return control ? [{ field, control }] : [];
  });
  return ORDER.flatMap((c) => all.filter((x) => x.control === c));
}

/** The ids the list is filtered by, per reference field: their titles are needed even past the picker's limit. */
export function filteredReferences(resource: Resource, query: Query): Row {
  const filter = isObject(query.filter) ? query.filter : {};
  return Object.fromEntries(
    resource.fields
      .filter((f) => f.target && typeof filter[f.name] === 'string' && /^\d+$/.test(filter[f.name] as string))
      .map((f) => [f.name, filter[f.name]]),
  );
}

/** A `YYYY-MM-DD` day from an instant or a day. */
const dayOf = (v: unknown) => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : '');
/** The day before a `lt` bound that is a midnight: the last day of the range (a saved view keeps `lt`). */
function lastDayBefore(v: unknown): string {
  const day = dayOf(v);
  if (!day || (typeof v === 'string' && v.length > 10 && !/T00:00(:00(\.000)?)?Z$/.test(v))) return '';
  const date = new Date(Date.parse(`${day}T00:00:00Z`) - DAY);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 10);
}

/** What each control shows: the address's value, in the page's spelling or the API's (a saved view's). */
function valuesOf(query: Query, field: Field, control: Control) {
  const filter = isObject(query.filter) ? query.filter : {};
  const spec = filter[field.name];
  const ops = isObject(spec) ? spec : {};
  if (control === 'range') {
    const from = isObject(query.from) ? text(query.from[field.name]) : '';
    const to = isObject(query.to) ? text(query.to[field.name]) : '';
    return [from || dayOf(ops.gte), to || lastDayBefore(ops.lt) || dayOf(ops.lte)];
  }
  if (control === 'contains') return [typeof spec === 'string' ? spec : text(ops.contains)];
  return [typeof spec === 'string' ? spec : text(ops.eq)];
}

function Control({
  field,
  control,
  query,
  choices,
}: {
  field: Field;
  control: Control;
  query: Query;
  choices: Choices;
}) {
  const [value = '', until = ''] = valuesOf(query, field, control);
  const id = `filter-${field.name}`;
  const name = `filter[${field.name}]`;
  const select = (options: { value: string; label: string }[]) => (
    <div class="field">
      <label for={id}>{field.label}</label>
      <select id={id} name={name}>
        {options.map((o) => (
          <option value={o.value} selected={value === o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
  const any = { value: '', label: 'Any' };
  switch (control) {
    case 'state':
      return select([
        any,
        ...optionsOf(field),
        ...(field.nullable ? [{ value: 'null', label: unsetWordOf(field) }] : []),
      ]);
    case 'choice':
      return select([any, ...field.choices!.map((c) => ({ value: c, label: c }))]);
    case 'reference':
      return select([
        any,
        { value: 'null', label: 'None' },
        ...(choices.get(field.target!.name) ?? []).map((c) => ({ value: c.id, label: c.title })),
      ]);
    case 'range':
      return (
        <fieldset class="range">
          <legend>{field.label}</legend>
          <div>
            <label for={`from-${field.name}`}>
              <span class="visually-hidden">{field.label} </span>from
            </label>
            <input id={`from-${field.name}`} type="date" name={`from[${field.name}]`} value={value} />
          </div>
          <div>
            <label for={`to-${field.name}`}>
              <span class="visually-hidden">{field.label} </span>to
            </label>
            <input id={`to-${field.name}`} type="date" name={`to[${field.name}]`} value={until} />
          </div>
        </fieldset>
      );
    case 'number':
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <input id={id} name={name} value={value} inputMode="numeric" autocomplete="off" />
        </div>
      );
    case 'contains':
      return (
        <div class="field">
          <label for={id}>
            {field.label} <span class="muted">contains</span>
          </label>
          <input id={id} name={`filter[${field.name}][contains]`} value={value} autocomplete="off" />
        </div>
      );
  }
}

export function Filters(props: { resource: Resource; query: Query; choices: Choices; columns?: string | null }) {
  const { resource, query, choices, columns } = props;
  const path = `/${resource.name}`;
  const controls = filterControls(resource);
  const active = controls.filter(({ field, control }) => valuesOf(query, field, control).some(Boolean)).length;
  return (
    // <search> is newer than some browsers the app supports; role="search" is the landmark they all know.
    // biome-ignore lint/a11y/useSemanticElements: see the line above
    <form
      method="get"
      action={path}
      role="search"
      class="card list-search"
      hx-get={path}
      hx-trigger="input changed delay:300ms from:#field-search, change, submit"
      hx-target="#results"
      hx-select="#results"
      hx-swap="outerHTML"
      hx-push-url="true"
    >
      <div class="filters search-row">
        <div class="field">
          <label for="field-search">Search {resource.plural}</label>
          <input
            id="field-search"
            type="search"
            name="search"
            value={String(query.search ?? '')}
            placeholder="Name, email, city…"
            autocomplete="off"
          />
        </div>
        <div class="field">
          <label for="field-per-page">Per page</label>
          <select id="field-per-page" name="per_page">
            {PER_PAGE_CHOICES.map((n) => (
              <option value={String(n)} selected={String(query.per_page ?? 25) === String(n)}>
                {n}
              </option>
            ))}
          </select>
        </div>
        {query.sort ? <input type="hidden" name="sort" value={String(query.sort)} /> : null}
        {columns ? <input type="hidden" name="columns" value={columns} /> : null}
        <div class="actions">
          <button type="submit">Apply</button>
          <a href={path} class="button button-secondary">
            Clear
          </a>
        </div>
        {/* The filters fold away (a phone would scroll past a screenful of them); open while any is set. Closed,
            the summary ends the search line; open, they take the lines below it. */}
        <details class="more-filters" open={active > 0}>
          <summary>Filters{active ? ` (${active} set)` : ''}</summary>
          <div class="filters">
            {controls.map(({ field, control }) => (
              <Control field={field} control={control} query={query} choices={choices} />
            ))}
          </div>
        </details>
      </div>
    </form>
  );
}
