// The bench scenarios: what each one asks of the app (a list query, a body)
// and of the floor (its route), in one place for the runner, the load
// generator and the SQL capture.
import qs from 'qs';
import { encodeCursor, parseListQuery } from '../src/derive/list-query.ts';
import { contact } from '../src/resources/contact.ts';

export const SCENARIOS = [
  'get',
  'page1',
  'deep-offset',
  'deep-cursor',
  'search1',
  'search2',
  'filter-eq',
  'filter-range',
  'sort-name',
  'create',
  'patch',
  'storm',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Scenarios that list records; floor and app must return the same ids for them. */
export const READ_SCENARIOS = [
  'page1',
  'deep-offset',
  'deep-cursor',
  'search1',
  'search2',
  'filter-eq',
  'filter-range',
  'sort-name',
] as const satisfies readonly ScenarioName[];
export type ReadScenario = (typeof READ_SCENARIOS)[number];

export const LABELS: Record<ScenarioName, string> = {
  get: 'get by id',
  page1: 'list page 1 with total',
  'deep-offset': 'deep page by offset',
  'deep-cursor': 'deep page by cursor',
  search1: 'search one word',
  search2: 'search two words',
  'filter-eq': 'filter equality (city)',
  'filter-range': 'filter date range (1 month)',
  'sort-name': 'sort by name, page 1',
  create: 'create',
  patch: 'patch',
  storm: 'get by id under a sign-in storm',
};

export const SEARCH_ONE = 'solar';
export const SEARCH_TWO = 'solar warehouse';
export const PER_PAGE = 25;

/** What the scenarios need to know about the seeded data. */
export interface ScenarioParams {
  /** Any existing contact id (the SQL capture uses it). */
  sampleId: number;
  /** The page whose first row is the deep row (90% down the default order). */
  deepPage: number;
  /** The id of the row just before the deep row: the cursor points after it. */
  cursorAfterId: number;
  city: string;
  monthStart: string;
  monthEnd: string;
}

/** The cursor the app gives out for the default order (-id) after the row with this id. */
export function cursorAfter(id: number | bigint): string {
  const plan = parseListQuery(contact, { cursor: '' });
  return encodeCursor(plan, { id: BigInt(id) });
}

/** The list query the app is sent, as its query-string parser gives it to the operation. */
export function appQuery(scenario: ReadScenario, p: ScenarioParams): Record<string, unknown> {
  switch (scenario) {
    case 'page1':
      return {};
    case 'deep-offset':
      return { page: String(p.deepPage) };
    case 'deep-cursor':
      return { cursor: cursorAfter(p.cursorAfterId) };
    case 'search1':
      return { search: SEARCH_ONE };
    case 'search2':
      return { search: SEARCH_TWO };
    case 'filter-eq':
      return { filter: { city: p.city } };
    case 'filter-range':
      return { filter: { created_at: { gte: p.monthStart, lt: p.monthEnd } } };
    case 'sort-name':
      return { sort: 'name' };
  }
}

export function appPath(scenario: ReadScenario, p: ScenarioParams): string {
  const query = qs.stringify(appQuery(scenario, p), { encodeValuesOnly: true });
  return `/api/v1/contacts${query ? `?${query}` : ''}`;
}

/** The floor's route for a read scenario. */
export function floorPath(scenario: ReadScenario, p: ScenarioParams): string {
  const offset = (p.deepPage - 1) * PER_PAGE;
  const query: Record<ReadScenario, Record<string, string>> = {
    page1: {},
    'deep-offset': { offset: String(offset) },
    'deep-cursor': { after: String(p.cursorAfterId) },
    search1: { q: SEARCH_ONE },
    search2: { q: SEARCH_TWO },
    'filter-eq': { city: p.city },
    'filter-range': { gte: p.monthStart, lt: p.monthEnd },
    'sort-name': {},
  };
  const text = new URLSearchParams(query[scenario]).toString();
  return `/s/${scenario}${text ? `?${text}` : ''}`;
}

/** A valid new contact; `n` makes it distinct. */
export function createBody(n: number | string): Record<string, unknown> {
  return {
    name: `Bench Contact ${n}`,
    email: `bench.contact.${n}@example.com`,
    phone: '+44 20 7946 0000',
    occupation: 'Purchasing manager',
    address: '12 Harbour Street',
    country: 'United Kingdom',
    city: 'Bristol',
    service_id: 3,
    source_id: 2,
    detail: 'Asked for a quote on rooftop panels for two depots',
    budget: '£15,000',
  };
}

/** A change that always differs from the stored value (`n` counts requests). */
export function patchBody(n: number | string): Record<string, unknown> {
  return { occupation: `Analyst ${n}` };
}
