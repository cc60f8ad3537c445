// The search over contacts and inquiries: the results page (what the header's
// box sends, views/search-box.tsx) and the suggestions the box shows as you type.
import type { ComponentChildren } from 'preact';
import type { FieldErrors } from '../../../errors.ts';
import type { SearchAnswer } from '../../search.ts';
import { Layout, type PageContext } from './layout.tsx';
import { hrefWith } from './records.tsx';

/** "3", or "1,000+" when the count stopped there. */
const amount = (group: SearchAnswer): string => `${group.total.toLocaleString('en-US')}${group.more ? '+' : ''}`;

/** "3 contacts", "1 inquiry", "1,000+ contacts". */
const counted = (group: SearchAnswer, singular: string) =>
  `${amount(group)} ${group.total === 1 && !group.more ? singular : group.resource}`;

const seeAll = (group: SearchAnswer, q: string) => hrefWith(`/${group.resource}`, { search: q });

/** Words for a group count by its resource, in the singular ("1 inquiry"). */
const SINGULAR: Record<string, string> = { contacts: 'contact', inquiries: 'inquiry' };
const singularOf = (group: SearchAnswer) => SINGULAR[group.resource] ?? group.resource;

/** What was found, in a sentence: "2 contacts and 1 inquiry match “ada”." */
export function summaryOf(groups: readonly SearchAnswer[], q: string): string {
  const found = groups.filter((g) => g.total > 0).map((g) => counted(g, singularOf(g)));
  if (found.length === 0) return `No ${groups.map((g) => g.resource).join(' or ') || 'records'} match “${q}”.`;
  const list = found.length > 1 ? `${found.slice(0, -1).join(', ')} and ${found.at(-1)}` : found[0];
  return `${list} match “${q}”.`;
}

/** One choice of the suggestions: the focus stays in the box, which names it (aria-activedescendant). */
function Option({ id, href, children }: { id: string; href: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/useFocusableInteractive: the combobox keeps the focus and points at the chosen option
    <div role="option" id={id} aria-selected="false" class="gs-option" data-href={href}>
      {children}
    </div>
  );
}

/**
 * The suggestions for the box: one group per resource that has matches, each option a record (its page in
 * data-href) and a last one for the whole list. Options hold no links (a listbox option is one thing to choose).
 */
export function Suggestions({ groups, q }: { groups: readonly SearchAnswer[]; q: string }) {
  const found = groups.filter((g) => g.total > 0);
  return (
    <div data-summary={summaryOf(groups, q)} data-count={String(found.length)}>
      {found.map((group) => (
        // biome-ignore lint/a11y/useSemanticElements: a group of options in a listbox (ARIA), not a form's fieldset
        <div role="group" aria-labelledby={`gs-group-${group.resource}`} class="gs-group">
          <div role="presentation" id={`gs-group-${group.resource}`} class="gs-heading">
            {group.label}
            <span class="gs-total">{amount(group)}</span>
          </div>
          {group.results.map((hit) => (
            <Option id={`gs-${group.resource}-${String(hit.id)}`} href={hit.url}>
              <span class="gs-title">{hit.title}</span>
              {hit.subtitle ? <span class="gs-subtitle">{hit.subtitle}</span> : null}
            </Option>
          ))}
          <Option id={`gs-${group.resource}-all`} href={seeAll(group, q)}>
            <span class="gs-all">See all {counted(group, singularOf(group))}</span>
          </Option>
        </div>
      ))}
    </div>
  );
}

export interface SearchPageProps {
  ctx: PageContext;
  q: string;
  groups: readonly SearchAnswer[] | null;
  errors?: FieldErrors;
}

/** The results page: what the box sends without the script (Enter, or the button), grouped by resource. */
export function SearchPage({ ctx, q, groups, errors }: SearchPageProps) {
  const problem = errors?.q?.join('; ') ?? (errors ? Object.values(errors).flat().join('; ') : undefined);
  return (
    <Layout ctx={ctx} title={q ? `Search: ${q}` : 'Search'}>
      <h1>{q && groups ? <>Results for “{q}”</> : 'Search'}</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: <search> is newer than some browsers the app supports */}
      <form method="get" action="/search" role="search" aria-label="Search again" class="card search-form">
        <label for="search-q">Search contacts and inquiries</label>
        <div class="search-form-row">
          <input
            id="search-q"
            type="search"
            name="q"
            value={q}
            maxlength={200}
            autocomplete="off"
            aria-invalid={problem ? 'true' : undefined}
            aria-describedby={problem ? 'search-q-error' : 'search-q-hint'}
          />
          <button type="submit">Search</button>
        </div>
        {problem ? (
          <p id="search-q-error" class="field-error">
            The search {problem}.
          </p>
        ) : (
          <p id="search-q-hint" class="field-hint">
            Every word must occur in a name, email, phone, city, detail…; a number also finds a ticket.
          </p>
        )}
      </form>
      {groups ? (
        <>
          <p class="muted" role="status">
            {summaryOf(groups, q)}
          </p>
          {groups.map((group) => (
            <section class="card search-group" aria-labelledby={`results-${group.resource}`}>
              <h2 id={`results-${group.resource}`}>
                {group.label} <span class="muted">({amount(group)})</span>
              </h2>
              {group.results.length ? (
                <ul class="search-results">
                  {group.results.map((hit) => (
                    <li>
                      <a href={hit.url}>{hit.title}</a>
                      {hit.subtitle ? <span class="muted">{hit.subtitle}</span> : null}
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="muted">No {group.resource} match.</p>
              )}
              {group.total > 0 ? (
                <p>
                  <a href={seeAll(group, q)}>See all {counted(group, singularOf(group))}</a>
                </p>
              ) : null}
            </section>
          ))}
        </>
      ) : null}
    </Layout>
  );
}
