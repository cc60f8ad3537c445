// Reads list parameters (search, filter, sort, page/per_page, cursor) against a
// resource declaration. Every problem is reported under the parameter's name.
import { FieldErrorBag } from '../errors.ts';
import { FILTER_OPS, type FilterOp } from '../schema/kinds.ts';
import type { Field, Resource } from '../schema/resource.ts';

export interface Filter {
  field: Field;
  op: FilterOp;
  /** A kind value; an array for `in`; a boolean for `null`; null for "is null". */
  value: unknown;
  /** A filter of the resource's own (ResourceDecl.filters), by name: `value` says whether its condition holds. */
  named?: string;
}

export interface SortKey {
  field: Field;
  desc: boolean;
}

export type Paging =
  | { mode: 'page'; page: number; perPage: number }
  | { mode: 'cursor'; perPage: number; after: unknown[] | null };

export interface ListPlan {
  /** The resource listed; a cursor carries its name so it cannot be replayed on another list. */
  resourceName: string;
  words: string[];
  filters: Filter[];
  /** Ends with the primary key, the tie-break. */
  sort: SortKey[];
  paging: Paging;
  /** Set by the operation, never by a query: the reader sees only these records (ResourceDecl.readScope). */
  scope?: ReadScope;
}

/** The records a reader may see: those one of `owners` names them in, or whose `sharedWhen` is true. */
export interface ReadScope {
  owners: readonly Field[];
  actorId: bigint;
  sharedWhen?: Field;
}

export const PER_PAGE = { default: 25, max: 100 };
const MAX_IN_VALUES = 100;
const MAX_WORDS = 10;
const PARAMS = new Set(['search', 'filter', 'sort', 'page', 'per_page', 'cursor']);

type Query = Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseFilterValue(field: Field, op: FilterOp, raw: string, bag: FieldErrorBag, key: string): unknown {
  if (op === 'null') {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    bag.add(key, 'must be true or false');
    return undefined;
  }
  if (op === 'contains') return raw;
  const one = (text: string): unknown => {
    // `null` means "no value" for every kind but text, where it is a word like any other.
    if (text === 'null' && !field.kind.textual && (op === 'eq' || op === 'ne' || op === 'in')) return null;
    const parsed = field.kind.fromQuery(text, field);
    if (!parsed.ok) {
      bag.add(key, parsed.message);
      return undefined;
    }
    return parsed.value;
  };
  if (op !== 'in') return one(raw);
  const items = raw.split(',');
  if (items.length > MAX_IN_VALUES) {
    bag.add(key, `must list at most ${MAX_IN_VALUES} values`);
    return undefined;
  }
  return items.map(one);
}

function parseFilters(resource: Resource, raw: unknown, bag: FieldErrorBag): Filter[] {
  if (raw === undefined) return [];
  if (!isPlainObject(raw)) {
    bag.add('filter', 'must be written as filter[field]=value or filter[field][op]=value');
    return [];
  }
  const filters: Filter[] = [];
  for (const [name, spec] of Object.entries(raw)) {
    if (resource.decl.filters && Object.hasOwn(resource.decl.filters, name)) {
      const holds = spec === 'true' ? true : spec === 'false' ? false : undefined;
      if (holds === undefined) bag.add(`filter[${name}]`, 'must be true or false');
      else filters.push({ field: resource.primaryKey, op: 'eq', value: holds, named: name });
      continue;
    }
    const field = resource.field(name);
    if (!field || field.hidden) {
      bag.add(`filter[${name}]`, 'is not a field of this resource');
      continue;
    }
    // `filter[f]=a&filter[f]=b` arrives as {0: a, 1: b}: a repeated value, not operators.
    if (isPlainObject(spec) && Object.keys(spec).every((k) => /^\d+$/.test(k))) {
      bag.add(`filter[${name}]`, 'must be given once, as a single value');
      continue;
    }
    const entries: [string, unknown][] = isPlainObject(spec) ? Object.entries(spec) : [['eq', spec]];
    for (const [op, value] of entries) {
      const key = isPlainObject(spec) ? `filter[${name}][${op}]` : `filter[${name}]`;
      if (!(FILTER_OPS as readonly string[]).includes(op)) {
        bag.add(key, `is not an operator; use one of ${FILTER_OPS.join(', ')}`);
        continue;
      }
      if (!field.kind.operators.includes(op as FilterOp)) {
        bag.add(key, `is not supported for a ${field.kind.seedType} field`);
        continue;
      }
      if (typeof value !== 'string') {
        bag.add(key, 'must be given once, as a single value');
        continue;
      }
      const parsed = parseFilterValue(field, op as FilterOp, value, bag, key);
      if (parsed !== undefined && !(Array.isArray(parsed) && parsed.includes(undefined)))
        filters.push({ field, op: op as FilterOp, value: parsed });
    }
  }
  return filters;
}

function parseSort(resource: Resource, raw: unknown, bag: FieldErrorBag): SortKey[] {
  const keys: SortKey[] = [];
  if (raw !== undefined && typeof raw !== 'string') bag.add('sort', 'must be a comma-separated list of fields');
  const text = typeof raw === 'string' && raw !== '' ? raw : `-${resource.primaryKey.name}`;
  for (const part of text.split(',')) {
    const desc = part.startsWith('-');
    const name = desc ? part.slice(1) : part;
    const field = resource.field(name);
    if (!field || field.hidden) {
      bag.add('sort', `${name || '(empty)'} is not a field of this resource`);
      continue;
    }
    if (keys.some((k) => k.field === field)) {
      bag.add('sort', `${name} is given twice`);
      continue;
    }
    keys.push({ field, desc });
  }
  // Ties are broken by the primary key, in the direction of the last key.
  const pk = resource.primaryKey;
  if (!keys.some((k) => k.field === pk)) keys.push({ field: pk, desc: keys.at(-1)?.desc ?? true });
  else keys.splice(keys.findIndex((k) => k.field === pk) + 1);
  return keys;
}

function parsePositive(raw: unknown, name: string, max: number, fallback: number, bag: FieldErrorBag): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max))
    bag.add(name, max >= 1e9 ? 'must be a whole number from 1' : `must be a whole number from 1 to ${max}`);
  return n;
}

/**
 * The canonical spelling of a list's order, which a cursor carries so it cannot be replayed on another list or sort.
 */
function sortSignature(resourceName: string, sort: SortKey[]): string {
  return `${resourceName}:${sort.map((k) => (k.desc ? '-' : '') + k.field.name).join(',')}`;
}

export function encodeCursor(plan: ListPlan, row: Record<string, unknown>): string {
  const values = plan.sort.map((k) => {
    const v = row[k.field.name];
    return v === null || v === undefined ? null : String(v);
  });
  return Buffer.from(JSON.stringify({ s: sortSignature(plan.resourceName, plan.sort), v: values })).toString(
    'base64url',
  );
}

function decodeCursor(raw: string, resourceName: string, sort: SortKey[], bag: FieldErrorBag): unknown[] | null {
  const invalid = () => {
    bag.add(
      'cursor',
      'is not a cursor this list gave out (it is opaque; pass meta.next_cursor back unchanged, with the same sort)',
    );
    return null;
  };
  // Node's decoder skips characters outside the alphabet: accept only the exact text we gave out.
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return invalid();
  const bytes = Buffer.from(raw, 'base64url');
  if (bytes.toString('base64url') !== raw) return invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(bytes.toString('utf8'));
  } catch {
    return invalid();
  }
  if (
    !isPlainObject(decoded) ||
    decoded.s !== sortSignature(resourceName, sort) ||
    !Array.isArray(decoded.v) ||
    decoded.v.length !== sort.length
  )
    return invalid();
  const values: unknown[] = [];
  for (const [i, key] of sort.entries()) {
    const v: unknown = decoded.v[i];
    if (v === null && !key.field.primary) {
      values.push(null);
      continue;
    }
    if (typeof v !== 'string') return invalid();
    const parsed = key.field.kind.fromQuery(v, key.field);
    if (!parsed.ok) return invalid();
    values.push(parsed.value);
  }
  return values;
}

export function parseListQuery(resource: Resource, query: Query): ListPlan {
  const bag = new FieldErrorBag();
  for (const key of Object.keys(query)) if (!PARAMS.has(key)) bag.add(key, 'is not a list parameter');
  const search = query.search;
  if (search !== undefined && typeof search !== 'string') bag.add('search', 'must be given once, as text');
  const words = typeof search === 'string' ? search.split(/\s+/u).filter(Boolean) : [];
  if (words.length > MAX_WORDS) bag.add('search', `must have at most ${MAX_WORDS} words`);
  for (const word of words) {
    if (word.includes('\u0000') || !word.isWellFormed()) bag.add('search', 'must be valid text');
  }
  const filters = parseFilters(resource, query.filter, bag);
  const sort = parseSort(resource, query.sort, bag);
  const perPage = parsePositive(query.per_page, 'per_page', PER_PAGE.max, PER_PAGE.default, bag);
  let paging: Paging;
  if (query.cursor !== undefined) {
    if (query.page !== undefined) bag.add('page', 'cannot be combined with cursor');
    if (typeof query.cursor !== 'string') {
      bag.add('cursor', 'must be given once');
    }
    const after =
      typeof query.cursor === 'string' && query.cursor !== ''
        ? decodeCursor(query.cursor, resource.name, sort, bag)
        : null;
    paging = { mode: 'cursor', perPage, after };
  } else {
    paging = { mode: 'page', page: parsePositive(query.page, 'page', 1e9, 1, bag), perPage };
  }
  bag.throwIfAny('The list parameters are invalid.');
  return { resourceName: resource.name, words, filters, sort, paging };
}
