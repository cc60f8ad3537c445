// One search over several resources at once (the header's search box): each
// resource the caller may read is listed with the lists' own `search=`, so the
// words mean the same everywhere and are answered by the same trigram index,
// and only a few records of each come back, with how many match in all.
import { sql } from 'kysely';
import { asRecordTables } from '../db/tables.ts';
import { AppError, type FieldErrors, FieldErrorBag } from '../errors.ts';
import type { Resource } from '../schema/resource.ts';
import type { Context } from './context.ts';
import { listRecords, may } from './operations.ts';
import type { Row } from './repository.ts';

/** A resource searched, and what a result says under its title. */
export interface SearchTarget {
  resource: Resource;
  /**
   * The parts of the line under the title, joined by " · ": each the first of its fields that holds a value; a
   * reference shows the title of the record it names (an inquiry's stage by name).
   */
  subtitle: readonly (readonly string[])[];
}

export interface SearchHit {
  id: bigint;
  title: string;
  subtitle: string | null;
}

export interface SearchGroup {
  resource: Resource;
  /** How many records match in all, at most SEARCH_COUNT_CAP; `results` holds the first few, newest first. */
  total: number;
  /** More than `total` match (the count stopped at SEARCH_COUNT_CAP). */
  more: boolean;
  results: SearchHit[];
}

export const SEARCH_LIMIT = { default: 5, max: 20 };
/** Matches counted per group: past it a group says "1,000+" (counting every match of a common word costs a scan). */
export const SEARCH_COUNT_CAP = 1000;
/** Characters (code points) a search may have: the box is for a few words, not a document. */
export const MAX_SEARCH_LENGTH = 200;
const PARAMS = new Set(['q', 'limit']);

/** The request's `q` and `limit`, or a 422 naming each bad one. */
function readSearch(query: Record<string, unknown>): { q: string; limit: number } {
  const bag = new FieldErrorBag();
  for (const key of Object.keys(query)) if (!PARAMS.has(key)) bag.add(key, 'is not a search parameter');
  const raw = query.q;
  let q = '';
  if (raw !== undefined && typeof raw !== 'string') bag.add('q', 'must be given once, as text');
  else if (typeof raw !== 'string' || raw.trim() === '') bag.add('q', 'is needed: type a word to search for');
  else if ([...raw].length > MAX_SEARCH_LENGTH) bag.add('q', `must be at most ${MAX_SEARCH_LENGTH} characters`);
  else q = raw.trim();
  let limit = SEARCH_LIMIT.default;
  if (query.limit !== undefined && query.limit !== '') {
    const n = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (n >= 1 && n <= SEARCH_LIMIT.max) limit = n;
    else bag.add('limit', `must be a whole number from 1 to ${SEARCH_LIMIT.max}`);
  }
  bag.throwIfAny('The search parameters are invalid.');
  return { q, limit };
}

/** The list's complaints about its `search` and `per_page` are about this request's `q` and `limit`. */
function asSearchError(error: unknown): unknown {
  if (!(error instanceof AppError) || error.status !== 422 || !error.errors) return error;
  const names: Record<string, string> = { search: 'q', per_page: 'limit' };
  const errors: FieldErrors = {};
  for (const [key, messages] of Object.entries(error.errors)) errors[names[key] ?? key] = messages;
  return new AppError(422, error.code, 'The search parameters are invalid.', errors);
}

const holds = (v: unknown) => v !== null && v !== undefined && String(v).trim() !== '';

/** The titles of the records `ids` name in `target`, by id (one query). */
async function titlesOf(ctx: Context, target: Resource, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const pk = target.primaryKey.name;
  const rows = await asRecordTables(ctx.database.db)
    .selectFrom(target.table)
    .select([pk, sql.ref(target.title.name).as('title')])
    .where(pk, 'in', ids)
    .execute();
  return new Map(rows.map((r) => [String(r[pk]), String(r.title ?? `#${String(r[pk])}`)]));
}

/** The title of a record as a person reads it: its name, else "Contact #12". */
function titleOf(resource: Resource, record: Row): string {
  const name = record[resource.title.name];
  if (typeof name === 'string' && name.trim()) return name;
  const label = resource.singular.charAt(0).toUpperCase() + resource.singular.slice(1);
  return `${label} #${String(record[resource.primaryKey.name])}`;
}

async function hitsOf(ctx: Context, target: SearchTarget, rows: Row[]): Promise<SearchHit[]> {
  const { resource } = target;
  // References shown by title: the ids the rows name, looked up once per referenced resource.
  const references = target.subtitle.flat().flatMap((name) => {
    const field = resource.field(name);
    return field?.target ? [field] : [];
  });
  const titles = new Map<string, Map<string, string>>();
  for (const field of references) {
    const ids = [...new Set(rows.filter((r) => holds(r[field.name])).map((r) => String(r[field.name])))];
    titles.set(field.name, await titlesOf(ctx, field.target!, ids));
  }
  const shown = (record: Row, name: string): string | null => {
    const value = record[name];
    if (!holds(value)) return null;
    return titles.get(name)?.get(String(value)) ?? String(value);
  };
  return rows.map((record) => {
    const parts = target.subtitle.flatMap((names) => {
      const first = names.map((n) => shown(record, n)).find((v) => v !== null);
      return first ? [first] : [];
    });
    return {
      id: BigInt(record[resource.primaryKey.name] as bigint),
      title: titleOf(resource, record),
      subtitle: parts.length ? parts.join(' · ') : null,
    };
  });
}

/**
 * Searches every target the caller may read for `q` (the lists' search words), answering the first `limit`
 * records of each and how many match; a target the caller may not read is left out.
 */
export async function searchRecords(
  ctx: Context,
  targets: readonly SearchTarget[],
  query: Record<string, unknown>,
): Promise<SearchGroup[]> {
  if (!ctx.actor)
    throw new AppError(
      401,
      'unauthenticated',
      'Sign in, or send a personal access token as Authorization: Bearer <token>.',
    );
  const { q, limit } = readSearch(query);
  const readable = targets.filter((t) => may(ctx.actor, t.resource, 'read'));
  try {
    return await Promise.all(
      readable.map(async (target) => {
        const list = await listRecords(
          ctx,
          target.resource,
          { search: q, per_page: String(limit) },
          { countAtMost: SEARCH_COUNT_CAP },
        );
        const total = list.meta.total ?? 0;
        return {
          resource: target.resource,
          total: Math.min(total, SEARCH_COUNT_CAP),
          more: total > SEARCH_COUNT_CAP,
          results: await hitsOf(ctx, target, list.data),
        };
      }),
    );
  } catch (error) {
    throw asSearchError(error);
  }
}
