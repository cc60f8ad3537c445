// Deterministic fake contacts and inquiries for `leadbook seed` and the bench:
// the same seed gives the same rows, on any machine. Names carry accents,
// cities (500) make an equality filter match about 0.2% of rows, and details
// hold words the bench searches for at known rates:
//   `solar` in about 1% of rows, `warehouse` in about 1%, both in about 0.1%,
// sometimes written `Solar` or `SOLAR`. A few details hold text that trips up
// naive search code: `%`, `_`, `\`, emoji.
// With a pipeline (`leadbook seed --pipeline`) each inquiry is linked to one of
// the contacts, the inquiries are spread evenly over the stages, and those
// assigned (3 in 4) go to 8 of the agents: about a tenth of them each.

/** A small, fast, seedable PRNG (mulberry32): uniform numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed for one stream of one seed (FNV-1a), so contacts do not depend on how many inquiries follow. */
function streamSeed(seed: number, stream: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${seed}:${stream}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const FIRST_NAMES = [
  'José',
  'Zoë',
  'Łukasz',
  'Søren',
  'Björn',
  'Chloé',
  'Renée',
  'François',
  'Mónica',
  'Ágnes',
  'Zoltán',
  'Siobhán',
  'Seán',
  'Anaïs',
  'Noël',
  'Håkon',
  'Åsa',
  'Jürgen',
  'Dagmar',
  'Yūki',
  'Priya',
  'Arjun',
  'Ngozi',
  'Chidi',
  'Amara',
  'Mei',
  'Wei',
  'Minh',
  'Thảo',
  'Ólafur',
  'Þóra',
  'Çağla',
  'Emma',
  'Olivia',
  'Ava',
  'Sophia',
  'Isabella',
  'Mia',
  'Amelia',
  'Harper',
  'Liam',
  'Noah',
  'Oliver',
  'Elijah',
  'James',
  'William',
  'Benjamin',
  'Lucas',
  'Henry',
  'Theo',
  'Grace',
  'Hannah',
  'Laura',
  'Sarah',
  'Anna',
  'Maria',
  'Elena',
  'Sofía',
  'Lucía',
  'Martina',
  'Giulia',
  'Chiara',
  'Matteo',
  'Lorenzo',
  'Pierre',
  'Camille',
  'Léa',
  'Hugo',
  'Louis',
  'Inès',
  'Fatima',
  'Omar',
  'Youssef',
  'Layla',
  'Aisha',
  'Kwame',
  'Kofi',
  'Ana',
  'João',
  'Tomás',
  'Katarzyna',
  'Piotr',
  'Agnieszka',
  'Dmitri',
  'Olga',
  'Ivan',
  'Nikolai',
  'Tatiana',
  'Hiroshi',
  'Sakura',
  'Ji-woo',
  'Min-jun',
  'Raúl',
  'Joaquín',
  'Xavier',
  'Zeynep',
  'Emre',
];

const LAST_NAMES = [
  'García',
  'Müller',
  'Kowalczyk',
  'Wiśniewski',
  'Dvořák',
  'Nguyễn',
  'Ødegaard',
  'Çelik',
  'Şahin',
  'Gonçalves',
  'Ólafsson',
  'Þórsson',
  'Ærøe',
  'Lefèvre',
  'Béranger',
  'Núñez',
  'Sørensen',
  'Åberg',
  'Jäger',
  'Schröder',
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Miller',
  'Davis',
  'Wilson',
  'Taylor',
  'Anderson',
  'Thomas',
  'Moore',
  'Martin',
  'Jackson',
  'White',
  'Harris',
  'Clark',
  'Lewis',
  'Walker',
  'Hall',
  'Young',
  'King',
  'Wright',
  'Scott',
  'Green',
  'Baker',
  'Adams',
  'Nelson',
  'Hill',
  'Campbell',
  'Mitchell',
  'Roberts',
  'Carter',
  'Phillips',
  'Evans',
  'Turner',
  'Rossi',
  'Russo',
  'Ferrari',
  'Esposito',
  'Bianchi',
  'Romano',
  'Dubois',
  'Moreau',
  'Laurent',
  'Fernández',
  'López',
  'Martínez',
  'Sánchez',
  'Pérez',
  'Gómez',
  'Silva',
  'Santos',
  'Oliveira',
  'Pereira',
  'Nowak',
  'Ivanov',
  'Petrov',
  'Tanaka',
  'Suzuki',
  'Watanabe',
  'Kim',
  'Lee',
  'Park',
  'Chen',
  'Wang',
  'Li',
  'Zhang',
  'Okafor',
  'Mensah',
  'Haddad',
  'Khan',
  'Patel',
  'Singh',
  'Kaur',
  "O'Brien",
  'MacDonald',
  'Murphy',
  'Kelly',
];

/** Country, its telephone code, and a few of its real cities (the rest of the 500 are made up). */
const COUNTRY_TABLE: [country: string, dial: string, cities: string[]][] = [
  ['United States', '1', ['New York', 'Chicago', 'Austin']],
  ['Canada', '1', ['Toronto', 'Montréal', 'Québec']],
  ['Mexico', '52', ['Mérida', 'Querétaro']],
  ['Brazil', '55', ['São Paulo', 'Florianópolis']],
  ['Argentina', '54', ['Córdoba', 'Rosario']],
  ['Chile', '56', ['Valparaíso']],
  ['Colombia', '57', ['Bogotá', 'Medellín']],
  ['Peru', '51', ['Lima']],
  ['United Kingdom', '44', ['London', 'Bristol', 'Leeds']],
  ['Ireland', '353', ['Dublin', 'Cork']],
  ['France', '33', ['Paris', 'Besançon', 'Orléans']],
  ['Germany', '49', ['Düsseldorf', 'München', 'Köln']],
  ['Austria', '43', ['Wien', 'Graz']],
  ['Switzerland', '41', ['Zürich', 'Genève']],
  ['Italy', '39', ['Roma', 'Forlì']],
  ['Spain', '34', ['Málaga', 'Cádiz', 'Logroño']],
  ['Portugal', '351', ['Lisboa', 'Évora']],
  ['Netherlands', '31', ['Utrecht', 'Den Haag']],
  ['Belgium', '32', ['Liège', 'Gent']],
  ['Denmark', '45', ['Ærøskøbing', 'Aarhus', 'Køge']],
  ['Norway', '47', ['Tromsø', 'Bodø']],
  ['Sweden', '46', ['Malmö', 'Göteborg', 'Umeå']],
  ['Finland', '358', ['Jyväskylä', 'Turku']],
  ['Iceland', '354', ['Reykjavík', 'Akureyri']],
  ['Poland', '48', ['Łódź', 'Kraków', 'Gdańsk']],
  ['Czechia', '420', ['Brno', 'Plzeň']],
  ['Hungary', '36', ['Pécs', 'Győr']],
  ['Romania', '40', ['Brașov', 'Timișoara']],
  ['Greece', '30', ['Thessaloniki', 'Patra']],
  ['Turkey', '90', ['İzmir', 'Eskişehir']],
  ['Egypt', '20', ['Alexandria']],
  ['Morocco', '212', ['Fès', 'Marrakech']],
  ['Nigeria', '234', ['Lagos', 'Abuja']],
  ['Ghana', '233', ['Accra', 'Kumasi']],
  ['Kenya', '254', ['Nairobi', 'Mombasa']],
  ['South Africa', '27', ['Cape Town', 'Durban']],
  ['India', '91', ['Bengaluru', 'Pune', 'Chennai']],
  ['Pakistan', '92', ['Lahore']],
  ['Bangladesh', '880', ['Dhaka']],
  ['China', '86', ['Shenzhen', 'Chengdu']],
  ['Japan', '81', ['Ōsaka', 'Sapporo', 'Kyōto']],
  ['South Korea', '82', ['Busan', 'Daejeon']],
  ['Vietnam', '84', ['Hà Nội', 'Đà Nẵng']],
  ['Thailand', '66', ['Chiang Mai']],
  ['Indonesia', '62', ['Surabaya']],
  ['Philippines', '63', ['Cebu']],
  ['Australia', '61', ['Melbourne', 'Perth']],
  ['New Zealand', '64', ['Wellington', 'Tauranga']],
  ['United Arab Emirates', '971', ['Dubai']],
  ['Israel', '972', ['Haifa']],
];

export const COUNTRIES: readonly string[] = COUNTRY_TABLE.map(([c]) => c);

const CITY_PREFIXES = [
  'Ash',
  'Birch',
  'Bram',
  'Clay',
  'Dun',
  'East',
  'Elm',
  'Fair',
  'Glen',
  'Hart',
  'Holly',
  'Kings',
  'Lang',
  'Marsh',
  'Mill',
  'North',
  'Oak',
  'Red',
  'Rose',
  'South',
  'Stan',
  'Stone',
  'West',
  'Whit',
  'Wood',
];
const CITY_SUFFIXES = [
  'ford',
  'field',
  'ton',
  'bury',
  'wick',
  'ham',
  'ley',
  'dale',
  'mouth',
  'stead',
  'port',
  'bridge',
  'well',
  'worth',
  'brook',
  'haven',
  'moor',
  'gate',
  'ridge',
  'caster',
];

/**
 * 500 cities, each with its country: the real ones first, then made-up English-sounding towns spread over the
 * countries.
 */
export const CITIES: readonly { city: string; country: string; dial: string }[] = (() => {
  const out: { city: string; country: string; dial: string }[] = [];
  for (const [country, dial, cities] of COUNTRY_TABLE) for (const city of cities) out.push({ city, country, dial });
  let i = 0;
  for (const suffix of CITY_SUFFIXES) {
    for (const prefix of CITY_PREFIXES) {
      if (out.length === 500) return out;
      const [country, dial] = COUNTRY_TABLE[i++ % COUNTRY_TABLE.length]!;
      // Mill + ley is Milley, not Millley.
      const joined = prefix.endsWith(suffix[0]!.repeat(2)) ? prefix + suffix.slice(1) : prefix + suffix;
      out.push({ city: joined, country, dial });
    }
  }
  return out;
})();

const STREETS = [
  'High Street',
  'Station Road',
  'Church Lane',
  'Mill Road',
  'Park Avenue',
  'Harbour Street',
  'Market Square',
  'Rue de la Paix',
  'Rue du Faubourg',
  'Calle Mayor',
  'Avenida da Liberdade',
  'Hauptstraße',
  'Königsallee',
  'ul. Długa',
  'ul. Piękna',
  'Via Roma',
  'Via Garibaldi',
  'Rua Augusta',
  'Strøget',
  'Drottninggatan',
  'Váci utca',
  'Bahnhofstraße',
  'Elm Street',
  'Maple Drive',
  'Oak Lane',
  'Queen Street',
  'King Street',
  'Victoria Road',
  'Långgatan',
  'Nørregade',
];

const OCCUPATIONS = [
  'Purchasing manager',
  'Facilities director',
  'Office manager',
  'Architect',
  'Site engineer',
  'Procurement lead',
  'Operations manager',
  'Chief financial officer',
  'Owner',
  'Electrician',
  'Project manager',
  'Accountant',
  'Teacher',
  'Nurse',
  'Farmer',
  'Logistics coordinator',
  'Energy consultant',
  'Property developer',
  'Shop owner',
  'IT manager',
  'Head of sustainability',
  'Plant manager',
  'Hotel manager',
  'Restaurateur',
  'Dentist',
  'Pharmacist',
  'Lawyer',
  'Civil servant',
  'School bursar',
  'Estate agent',
  'Builder',
  'Plumber',
  'Café owner',
  'Researcher',
  'Designer',
  'Marketing director',
  'Sales lead',
  'Fleet manager',
  'Retired',
  'Student',
];

const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example', 'corp.example', 'test.example'];

// Words for details; none holds `solar` or `warehouse`, so the planted rates are the only ones.
const WORDS = (
  'need quote for roof panels office install visit call back next week price delivery contract renewal heating ' +
  'insulation windows meeting site survey budget approved urgent follow up asked about financing options battery ' +
  'storage inverter grid connection permit planning approval maintenance plan warranty extension replacement ' +
  'broken unit noisy pump boiler service annual check energy audit savings estimate compare suppliers discount ' +
  'bulk order fleet chargers parking lot lighting upgrade led fixtures timeline spring summer autumn winter ' +
  'tenant landlord building school hospital farm barn factory shop restaurant hotel depot garage workshop ' +
  'referral from neighbour website form trade fair newsletter existing customer second site expansion budget ' +
  'cut postponed until board decision pending tender document sent signed invoice paid deposit balance due ' +
  'café naïve façade jalapeño déjà crème brûlée über résumé smörgåsbord piñata fiancée coöperate'
).split(' ');

/** Text that naive search code gets wrong (LIKE wildcards, escapes, emoji). */
const TRICKY = [
  '100% sure',
  '50%_off',
  'under_score',
  'C:\\temp\\quotes',
  'back\\slash',
  '☀️ sunny roof',
  '🏭 → 🚚',
  'Zoë’s café',
];

export const PLANTED = { one: 'solar', two: 'warehouse' } as const;
/** Rates of the planted words, per row. */
export const RATES = { both: 0.001, oneOnly: 0.009, twoOnly: 0.009, tricky: 0.01 } as const;

/** Rows are created over these three years (UTC). */
export const TIME_SPAN = { start: Date.UTC(2023, 0, 1), end: Date.UTC(2026, 0, 1) } as const;
const DAY = 86_400_000;

const localParts = new Map<string, string>();

/**
 * `José Núñez` → `jose.nunez`: what a mail address made from a name looks like (cached: it is asked a million times).
 */
function emailLocalPart(first: string, last: string): string {
  const key = `${first}.${last}`;
  let local = localParts.get(key);
  if (local === undefined) {
    local = key
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/ł/g, 'l')
      .replace(/æ/g, 'ae')
      .replace(/ø/g, 'o')
      .replace(/þ/g, 'th')
      .replace(/[^a-z.-]/g, '');
    localParts.set(key, local);
  }
  return local;
}

export type FakeRow = Record<string, string | number | bigint | boolean | null>;

/** Where fake records come from and what they are about: the names `leadbook seed` adds when they are missing. */
export const SOURCES: readonly string[] = [
  'Website',
  'Referral',
  'Trade fair',
  'Newsletter',
  'Phone call',
  'Partner',
  'Social media',
  'Advertisement',
  'Walk-in',
  'Existing customer',
];
export const SERVICES: readonly string[] = [
  'Roof panels',
  'Heat pump',
  'Battery storage',
  'EV chargers',
  'LED lighting',
  'Insulation',
  'Windows',
  'Boiler service',
  'Energy audit',
  'Maintenance plan',
  'Inverter replacement',
  'Grid connection',
  'Ventilation',
  'Smart meters',
  'Water heating',
  'Fleet charging',
  'Façade upgrade',
  'Planning permit',
  'Financing',
  'Warranty extension',
];

/** The ids of the sources and services the fake records name, in the order of SOURCES and SERVICES. */
export interface FakeLookups {
  sourceIds: readonly number[];
  serviceIds: readonly number[];
}

/** The ids a fresh database gives SOURCES and SERVICES (1, 2, …): what the generator names unless told otherwise. */
const FIRST_IDS: FakeLookups = {
  sourceIds: SOURCES.map((_, i) => i + 1),
  serviceIds: SERVICES.map((_, i) => i + 1),
};

/** A generator of contact rows for one seed; `next()` gives the next one. */
export class ContactFaker {
  protected readonly rand: () => number;
  private planted = 0;
  private serial = 0;

  constructor(
    seed: number,
    protected readonly agentIds: readonly number[],
    private readonly lookups: FakeLookups = FIRST_IDS,
    stream = 'contacts',
  ) {
    if (agentIds.length === 0) throw new Error('the fake data needs at least one team user id');
    if (lookups.sourceIds.length === 0 || lookups.serviceIds.length === 0)
      throw new Error('the fake data needs at least one source id and one service id');
    this.rand = prng(streamSeed(seed, stream));
  }

  protected int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }

  protected pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)]!;
  }

  protected maybe<T>(probability: number, value: () => T): T | null {
    return this.rand() < probability ? value() : null;
  }

  /** A planted word, sometimes capitalised or shouted (search is case-insensitive). */
  private plant(word: string): string {
    const k = this.planted++ % 10;
    return k === 0 ? word[0]!.toUpperCase() + word.slice(1) : k === 5 ? word.toUpperCase() : word;
  }

  private detail(): string {
    const words: string[] = [];
    const count = this.int(6, 15);
    for (let i = 0; i < count; i++) words.push(this.pick(WORDS));
    const r = this.rand();
    const planted =
      r < RATES.both
        ? [PLANTED.one, PLANTED.two]
        : r < RATES.both + RATES.oneOnly
          ? [PLANTED.one]
          : r < RATES.both + RATES.oneOnly + RATES.twoOnly
            ? [PLANTED.two]
            : [];
    for (const word of planted) words.splice(this.int(0, words.length), 0, this.plant(word));
    if (this.rand() < RATES.tricky) words.splice(this.int(0, words.length), 0, this.pick(TRICKY));
    const text = words.join(' ');
    return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
  }

  private budget(): string {
    const n = this.int(1, 250);
    switch (this.int(0, 5)) {
      case 0:
        return `€${n},000`;
      case 1:
        return `$${n}k`;
      case 2:
        return `${n} 000 EUR`;
      case 3:
        return `£${n},500`;
      case 4:
        return `Under $${n * 1000}`;
      default:
        return 'To be discussed';
    }
  }

  private phone(dial: string): string {
    const digits = (n: number) => String(this.int(10 ** (n - 1), 10 ** n - 1));
    return `+${dial} ${digits(3)} ${digits(3)} ${digits(4)}`;
  }

  /** The next contact row, with every column of `contacts` but `id`. */
  next(): FakeRow {
    this.serial++;
    const first = this.pick(FIRST_NAMES);
    const last = this.pick(LAST_NAMES);
    const place = this.pick(CITIES);
    const local = emailLocalPart(first, last);
    const created = TIME_SPAN.start + Math.floor(this.rand() * (TIME_SPAN.end - TIME_SPAN.start));
    const updated = this.rand() < 0.5 ? created : created + Math.floor(this.rand() * 90 * DAY);
    return {
      name: `${first} ${last}`,
      email: `${local}${this.serial}@${this.pick(DOMAINS)}`,
      phone: this.maybe(0.95, () => this.phone(place.dial)),
      occupation: this.maybe(0.9, () => this.pick(OCCUPATIONS)),
      address: this.maybe(0.95, () => `${this.int(1, 300)} ${this.pick(STREETS)}`),
      country: place.country,
      city: place.city,
      service_id: this.pick(this.lookups.serviceIds),
      source_id: this.pick(this.lookups.sourceIds),
      detail: this.detail(),
      budget: this.maybe(0.75, () => this.budget()),
      created_by: this.pick(this.agentIds),
      created_at: new Date(created).toISOString(),
      updated_at: new Date(updated).toISOString(),
    };
  }
}

const TWO_POW_53 = 2n ** 53n;

/** What inquiries are linked to and spread over with a pipeline: ids the database gave contacts and stages. */
export interface FakePipeline {
  contactIds: readonly number[];
  stageIds: readonly number[];
}

/** With a pipeline, assigned inquiries go to the first this many agents. */
export const PIPELINE_ASSIGNEES = 8;

/** Inquiries: a contact's fields, then the inquiry's own eight (with a pipeline: its contact and stage too). */
export class InquiryFaker extends ContactFaker {
  /** Drawn from for the pipeline's fields only, so that every other field is the same with a pipeline or without. */
  private readonly pipelineRand: () => number;
  private readonly assignees: readonly number[];

  constructor(
    seed: number,
    agentIds: readonly number[],
    lookups?: FakeLookups,
    private readonly pipeline?: FakePipeline,
  ) {
    super(seed, agentIds, lookups, 'inquiries');
    if (pipeline && pipeline.stageIds.length === 0) throw new Error('a pipeline needs at least one stage id');
    this.pipelineRand = prng(streamSeed(seed, 'pipeline'));
    this.assignees = agentIds.slice(0, PIPELINE_ASSIGNEES);
  }

  /** An inquiry's contact, stage and assignee in the pipeline (its assignee only when it has one). */
  private placed(assignedTo: FakeRow[string]): FakeRow {
    const from = (ids: readonly number[]) => ids[Math.floor(this.pipelineRand() * ids.length)]!;
    const { contactIds, stageIds } = this.pipeline!;
    return {
      contact_id: contactIds.length ? from(contactIds) : null,
      stage_id: from(stageIds),
      assigned_to: assignedTo === null ? null : from(this.assignees),
    };
  }

  private triState(): boolean | null {
    const r = this.rand();
    return r < 0.2 ? null : r < 0.6;
  }

  private ticketId(): bigint | null {
    const r = this.rand();
    if (r < 0.1) return null;
    // About one ticket in ten has an id beyond 2^53, which a JavaScript number cannot hold exactly.
    if (r < 0.2) return TWO_POW_53 + (BigInt(this.int(0, 2 ** 30)) << 20n) + BigInt(this.int(0, 2 ** 20 - 1));
    return BigInt(this.int(100_000, 999_999_999));
  }

  override next(): FakeRow {
    const row = super.next();
    const created = Date.parse(row.created_at as string);
    const assignedTo = this.maybe(0.75, () => this.pick(this.agentIds));
    const ticketId = this.ticketId();
    return {
      ...row,
      inquiry_country: this.rand() < 0.7 ? row.country! : this.pick(COUNTRIES),
      inquiry_status: this.triState(),
      status: this.triState(),
      inquiry_type: this.triState(),
      assigned_to: assignedTo,
      assigned_date: assignedTo === null ? null : new Date(created + Math.floor(this.rand() * 7 * DAY)).toISOString(),
      ticket_id: ticketId,
      ticket_date: ticketId === null ? null : new Date(created + Math.floor(this.rand() * 2 * DAY)).toISOString(),
      ...(this.pipeline ? this.placed(assignedTo) : {}),
    };
  }
}

/** The team the fake records are created by and assigned to: 20 agents, the same for every seed. */
export const AGENTS: readonly { name: string; frist_name: string; last_name: string; email: string }[] = [
  ['Ana', 'Ribeiro'],
  ['Bartosz', 'Wójcik'],
  ['Chiara', 'Conti'],
  ['Dévi', 'Raman'],
  ['Eero', 'Mäkinen'],
  ['Fiona', 'Byrne'],
  ['Gustavo', 'Peña'],
  ['Hélène', 'Girard'],
  ['Ines', 'Köhler'],
  ['Jonas', 'Lindqvist'],
  ['Kemal', 'Aydın'],
  ['Lena', 'Novák'],
  ['Marcus', 'Reid'],
  ['Nadia', 'Haddad'],
  ['Oskar', 'Berg'],
  ['Paula', 'Ortiz'],
  ['Quentin', 'Marchand'],
  ['Rosa', 'Delgado'],
  ['Sven', 'Ødegård'],
  ['Tamsin', 'Hughes'],
].map(([first, last], i) => ({
  name: `${first} ${last}`,
  frist_name: first!,
  last_name: last!,
  email: `agent${String(i + 1).padStart(2, '0')}@team.example`,
}));
