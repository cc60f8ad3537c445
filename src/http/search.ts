// The search across contacts and inquiries, as both doors answer it: the JSON
// API (GET /api/v1/search) and the pages (the header's box, /search).
import type { Context } from '../records/context.ts';
import { type SearchTarget, searchRecords } from '../records/search.ts';
import { contact, inquiry } from '../resources/index.ts';

/** What the search box searches, in the order the groups are shown. */
export const SEARCHED: readonly SearchTarget[] = [
  { resource: contact, subtitle: [['email', 'phone']] },
  { resource: inquiry, subtitle: [['email', 'phone'], ['stage_id']] },
];

export interface SearchResult {
  id: bigint;
  title: string;
  subtitle: string | null;
  /** The record's page. */
  url: string;
}

export interface SearchAnswer {
  resource: string;
  label: string;
  total: number;
  /** More than `total` match: the count stopped there. */
  more: boolean;
  results: SearchResult[];
}

export const groupLabel = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** The groups for `q` and `limit` (a 422 names either). */
export async function searchFor(ctx: Context, query: Record<string, unknown>): Promise<SearchAnswer[]> {
  const groups = await searchRecords(ctx, SEARCHED, query);
  return groups.map(({ resource, total, more, results }) => ({
    resource: resource.name,
    label: groupLabel(resource.name),
    total,
    more,
    results: results.map((hit) => ({ ...hit, url: `/${resource.name}/${String(hit.id)}` })),
  }));
}
