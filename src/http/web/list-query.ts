// A list page's address: its query as the list operation reads it (date
// ranges from the page's from/to boxes), as a saved view keeps it, and
// without the empty parameters a plain form sends.
import type { Resource } from '../../schema/resource.ts';
import { hrefWith, type Query } from './views/records.tsx';

const nextDay = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** The page's query as list parameters: empty filters dropped, date ranges inclusive of the "to" day. */
export function listQueryOf(query: Query): Query {
  const out: Query = {};
  for (const key of ['search', 'sort', 'page', 'per_page'] as const)
    if (query[key] !== undefined && query[key] !== '') out[key] = query[key];
  const filter: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((query.filter ?? {}) as Record<string, unknown>)) {
    // An operator left empty (`filter[city][contains]=`) is no filter either.
    const kept =
      typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== '' && v !== undefined))
        : value;
    if (kept !== '' && kept !== undefined && !(typeof kept === 'object' && Object.keys(kept!).length === 0))
      filter[name] = kept;
  }
  for (const [name, value] of Object.entries((query.from ?? {}) as Record<string, unknown>))
    if (typeof value === 'string' && value) filter[name] = { ...(filter[name] as object), gte: value };
  for (const [name, value] of Object.entries((query.to ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value))
      filter[name] = { ...(filter[name] as object), lt: nextDay(value) };
    else if (typeof value === 'string' && value) filter[name] = { ...(filter[name] as object), lt: value };
  }
  if (Object.keys(filter).length) out.filter = filter;
  return out;
}

/**
 * The list's query as a saved view keeps it: search, filters and sort as the API reads them (date ranges as
 * `gte`/`lt`), the page size when it is not the default; never the page.
 */
export function viewQueryOf(query: Query): string {
  const { page: _page, per_page, ...rest } = listQueryOf(query);
  const kept = per_page !== undefined && String(per_page) !== '25' ? { ...rest, per_page } : rest;
  return hrefWith('', kept).replace(/^\?/, '');
}

/** The address of a list with a query string and columns (null: the viewer's own). */
export function listHref(resource: Resource, queryString: string, columns?: string | null): string {
  const params = new URLSearchParams(queryString);
  params.delete('columns');
  if (columns) params.set('columns', columns);
  const text = params.toString();
  return text ? `/${resource.name}?${text}` : `/${resource.name}`;
}

/**
 * The same address without its empty parameters (`filter[city]=`, `search=`), which a plain form sends for every
 * field left empty; null when it has none.
 */
export function withoutEmptyParams(url: string): string | null {
  const at = url.indexOf('?');
  if (at < 0) return null;
  const params = new URLSearchParams(url.slice(at + 1));
  const kept = [...params].filter(([, value]) => value !== '');
  if (kept.length === [...params].length) return null;
  const text = new URLSearchParams(kept).toString();
  return text ? `${url.slice(0, at)}?${text}` : url.slice(0, at);
}
