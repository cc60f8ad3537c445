// Field kinds. Each kind owns everything about a value of its type: its JSON
// schema, its column on each dialect, how it is read from JSON, a form or CSV
// cell, a query string and a database row, how it is written back, how a page
// shows it and which control edits it. Adding a kind touches only this file.
import { type FormatName, formats } from './formats.ts';
import { fail, ok, parseDateTime, parseIntegerInRange, parseText, type Parsed } from './values.ts';

/** The databases a column is spelled for; db/ names its dialects after these. */
export const COLUMN_VARIANTS = ['sqlite', 'postgres', 'mysql'] as const;
export type ColumnVariant = (typeof COLUMN_VARIANTS)[number];
export type KindName =
  | 'string'
  | 'text'
  | 'integer'
  | 'bigInteger'
  | 'boolean'
  | 'dateTime'
  | 'list'
  | 'map'
  | 'password';
export type InputKind = 'text' | 'email' | 'url' | 'tel' | 'number' | 'checkbox' | 'date' | 'textarea' | 'password';
export const FILTER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'null'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** What a kind needs to know about the field it serves. */
export interface FieldShape {
  max?: number;
  primary: boolean;
  /** The only values a text field may hold. */
  choices?: readonly string[];
  format?: FormatName;
  /** A list of ids of this resource's records (a list field), instead of texts. */
  listOf?: string;
  /** The smallest value an integer field takes (a count, a number of minutes: 1). */
  min?: number;
  /** No two records share the value (a sample must differ per record). */
  unique?: boolean;
}

export type JsonSchema = Record<string, unknown>;

/** One of the few values a kind can hold (a boolean's Yes and No), as a form sends it and as JSON holds it. */
export interface KindOption {
  value: string;
  label: string;
  json: unknown;
}

/** A value as a page shows it; `datetime` marks an instant (the page's script shows it in the reader's time). */
export interface Shown {
  text: string;
  datetime?: string;
  dateOnly?: boolean;
}

export interface FieldKind {
  name: KindName;
  /** The seed's name for the type. */
  seedType: string;
  /** The seed's (Laravel's) rules for a value of this kind, as it writes them. */
  seedRules(max: number | undefined): string[];
  /** The length a field of this kind has when its declaration gives none. */
  defaultMax?: number;
  defaultInput: InputKind;
  /** Matched by substring in `search` and `contains`. */
  textual: boolean;
  /** Matched by equality in `search` when a word is an integer. */
  integral: boolean;
  operators: readonly FilterOp[];
  /** Schema of a non-null value in a response. */
  schema(field: FieldShape): JsonSchema;
  /** Schema of a non-null value accepted in a request, when wider than the response's. */
  inputSchema?(field: FieldShape): JsonSchema;
  column(field: FieldShape, variant: ColumnVariant): string;
  fromJson(raw: unknown, field: FieldShape): Parsed<unknown>;
  fromQuery(raw: string, field: FieldShape): Parsed<unknown>;
  fromDb(raw: unknown): unknown;
  /** The value as a query parameter (the connection adapts JS types a database cannot bind: booleans on SQLite). */
  toDb(value: unknown): unknown;
  /**
   * The PostgreSQL array many values go in as (src/db/dialect.ts, insertsArrays), when not text[]: the INSERT casts a
   * text to a text column as it would a VALUES list's (a varchar's length checked), but to no other type.
   */
  pgArray?: string;
  /** Turns a checked value into what is stored, when that takes work (a password hash). */
  beforeStore?(value: unknown): Promise<unknown>;
  /** What the text of a non-empty form control or CSV cell means as JSON input (unreadable text is passed on for
   * `fromJson` to refuse by name). */
  fromForm(raw: string): unknown;
  /** The text an HTML control holds for a stored value. */
  toInput(value: unknown): string;
  /** A stored, non-null value as a page shows it. */
  display(value: unknown, locale: string): Shown;
  /** The only values there are: drawn as a choice among them and "Not set", filtered by a select, stepped through by a
   * toggle on lists. */
  options?: readonly KindOption[];
  /** Holds an instant: can default to now, is filtered by a from–to range of dates. */
  instant?: true;
  /** Never read back: an empty box on an edit form keeps what is stored. */
  writeOnly?: true;
  /** The keyboard a phone offers. */
  inputMode?: 'numeric';
  /** A valid JSON input, the n-th of its kind, carrying `tag` where the kind can (for tests and fake data that must
   * recognise a value). */
  sample(field: FieldShape, n: number, tag: string): unknown;
}

const asText = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const plain = (value: unknown): Shown => ({ text: String(value) });
const trimmed = (raw: string): string => raw.trim();

const TEXT_OPS = FILTER_OPS;
const ORDERED_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null'] as const;
const BOOLEAN_OPS = ['eq', 'ne', 'in', 'null'] as const;

const INT32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
/** The largest id either database keeps (a signed 64-bit integer). */
export const MAX_ID = INT64.max;

const lengthRules = (max: number | undefined) => ['string', `max:${max}`];

function textKind(name: 'string' | 'text', seedType: string, defaultInput: InputKind, defaultMax?: number): FieldKind {
  return {
    name,
    seedType,
    defaultInput,
    textual: true,
    integral: false,
    operators: TEXT_OPS,
    seedRules: lengthRules,
    defaultMax,
    schema: (f) => ({
      type: 'string',
      maxLength: f.max,
      ...(f.choices ? { enum: f.choices } : {}),
      ...(f.format && formats[f.format].schemaFormat ? { format: formats[f.format].schemaFormat } : {}),
    }),
    // MySQL's `text` holds 64 KB; `longtext` holds what the other two's `text` does.
    column: (f, variant) => (name === 'string' ? `varchar(${f.max})` : variant === 'mysql' ? 'longtext' : 'text'),
    fromJson: (raw, f) => {
      const text = parseText(raw, f.max!);
      if (!text.ok) return text;
      if (f.choices && !f.choices.includes(text.value)) return fail(`must be one of ${f.choices.join(', ')}`);
      return f.format ? formats[f.format].parse(text.value) : text;
    },
    fromQuery: (raw, f) => parseText(raw, f.max!),
    fromDb: (raw) => raw,
    toDb: (value) => value,
    fromForm: (raw) => raw,
    toInput: asText,
    display: plain,
    sample(f, n, tag) {
      if (f.choices) return f.choices[n % f.choices.length];
      if (f.format) return formats[f.format].tagged(f.unique ? `${tag}-${n}` : tag);
      return [...`${tag} Zoë ✓ ${'x'.repeat(n % 40)}`].slice(0, f.max).join('').trim();
    },
  };
}

const integer: FieldKind = {
  name: 'integer',
  pgArray: 'int8[]',
  seedType: 'integer',
  defaultInput: 'number',
  textual: false,
  integral: true,
  operators: ORDERED_OPS,
  seedRules: () => [],
  schema: (f) => ({
    type: 'integer',
    format: 'int32',
    minimum: f.min ?? Number(INT32.min),
    maximum: Number(INT32.max),
  }),
  column: () => 'integer',
  fromJson(raw, f) {
    const n = parseIntegerInRange(raw, f.min === undefined ? INT32.min : BigInt(f.min), INT32.max, false);
    return n.ok ? ok(Number(n.value)) : n;
  },
  fromQuery(raw) {
    const n = parseIntegerInRange(raw, INT32.min, INT32.max, true);
    return n.ok ? ok(Number(n.value)) : n;
  },
  fromDb: (raw) => (raw === null ? null : Number(raw)),
  toDb: (value) => value,
  fromForm: (raw) => (/^\s*-?\d+\s*$/.test(raw) ? Number(raw.trim()) : raw),
  toInput: asText,
  display: plain,
  sample: (_f, n) => n % 100_000,
};

// 64-bit values must survive exactly: they travel as BigInt inside the app,
// and as a BigInt to both drivers (pg writes it as digits).
const bigInteger: FieldKind = {
  name: 'bigInteger',
  pgArray: 'int8[]',
  seedType: 'big integer',
  defaultInput: 'number',
  textual: false,
  integral: true,
  operators: ORDERED_OPS,
  seedRules: () => [],
  schema: () => ({ type: 'integer', format: 'int64' }),
  inputSchema: () => ({
    anyOf: [
      { type: 'integer', format: 'int64' },
      { type: 'string', pattern: '^-?[0-9]{1,19}$', description: 'a 64-bit integer written as digits' },
    ],
  }),
  column: (f, variant) => {
    if (!f.primary) return 'bigint';
    if (variant === 'sqlite') return 'integer primary key autoincrement';
    return variant === 'mysql'
      ? 'bigint auto_increment primary key'
      : 'bigint generated by default as identity primary key';
  },
  fromJson: (raw) => parseIntegerInRange(raw, INT64.min, INT64.max, true),
  fromQuery: (raw) => parseIntegerInRange(raw, INT64.min, INT64.max, true),
  fromDb: (raw) => (raw === null ? null : BigInt(raw as string | number | bigint)),
  toDb: (value) => value,
  fromForm: trimmed,
  toInput: asText,
  display: plain,
  inputMode: 'numeric',
  // Past 2^53: a value a JSON number would round.
  sample: (_f, n) => 2n ** 53n + BigInt(n),
};

const boolean: FieldKind = {
  name: 'boolean',
  pgArray: 'bool[]',
  seedType: 'boolean',
  defaultInput: 'checkbox',
  textual: false,
  integral: false,
  operators: BOOLEAN_OPS,
  seedRules: () => ['boolean'],
  schema: () => ({ type: 'boolean' }),
  column: () => 'boolean',
  fromJson: (raw) => (typeof raw === 'boolean' ? ok(raw) : fail('must be true, false or null')),
  fromQuery(raw) {
    if (raw === 'true' || raw === '1') return ok(true);
    if (raw === 'false' || raw === '0') return ok(false);
    return fail('must be true, false or null');
  },
  fromDb: (raw) => (raw === null ? null : raw === true || raw === 1 || raw === 1n),
  toDb: (value) => value,
  options: [
    { value: 'true', label: 'Yes', json: true },
    { value: 'false', label: 'No', json: false },
  ],
  // A form's tri-state radio sends true/false/"" (a checkbox "on"), a CSV cell may say 1 or 0.
  fromForm(raw) {
    if (raw === '' || raw === 'null') return null;
    if (raw === 'true' || raw === '1' || raw === 'on') return true;
    if (raw === 'false' || raw === '0') return false;
    return raw;
  },
  // A stored value, or what a form sent back.
  toInput: (value) =>
    value === true || value === 'true' ? 'true' : value === false || value === 'false' ? 'false' : '',
  display: (value) => ({ text: value ? 'Yes' : 'No' }),
  sample: (_f, n) => n % 2 === 0,
};

const dateTime: FieldKind = {
  name: 'dateTime',
  pgArray: 'timestamptz[]',
  seedType: 'date-time',
  defaultInput: 'date',
  textual: false,
  integral: false,
  operators: ORDERED_OPS,
  seedRules: () => [],
  schema: () => ({ type: 'string', format: 'date-time' }),
  inputSchema: () => ({
    anyOf: [
      { type: 'string', format: 'date-time' },
      { type: 'string', format: 'date', description: 'a bare date means midnight UTC' },
    ],
  }),
  // SQLite keeps the instant as RFC 3339 UTC text with milliseconds, which
  // sorts and compares correctly as text.
  column: (_f, variant) =>
    ({ sqlite: 'datetime', postgres: 'timestamp(3) with time zone', mysql: 'datetime(3)' })[variant],
  fromJson: parseDateTime,
  fromQuery: parseDateTime,
  fromDb(raw) {
    if (raw === null) return null;
    if (raw instanceof Date) return raw.toISOString();
    // What the app itself stores: already canonical (the common case, read on every row).
    if (typeof raw === 'string' && CANONICAL_INSTANT.test(raw)) return raw;
    // Rows written by other tools may hold `YYYY-MM-DD HH:MM:SS` (UTC).
    const parsed = parseDateTime(String(raw).endsWith('Z') ? raw : `${raw}Z`.replace(/^(\d{4}-\d{2}-\d{2})Z$/, '$1'));
    return parsed.ok ? parsed.value : String(raw);
  },
  toDb: (value) => value,
  instant: true,
  fromForm: trimmed,
  // A date input holds the day of the instant (UTC).
  toInput: (value) =>
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? value.slice(0, 10) : asText(value),
  display(value, locale) {
    const date = new Date(String(value));
    const dateOnly = String(value).endsWith('T00:00:00.000Z');
    const text = dateOnly
      ? date.toLocaleDateString(locale, { timeZone: 'UTC' })
      : `${date.toLocaleString(locale, { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' })} UTC`;
    return { text, datetime: String(value), dateOnly };
  },
  sample: (_f, n) => new Date(Date.UTC(2026, 0, 1 + (n % 300), n % 24, n % 60)).toISOString(),
};

/** Most items a list or keys a map holds. */
const MAX_ITEMS = 100;
/** The largest id a list holds: JSON numbers are exact up to here, and no table comes near it. */
const MAX_LISTED_ID = BigInt(Number.MAX_SAFE_INTEGER);
const toJsonText = (value: unknown) => JSON.stringify(value);
const fromJsonText = (raw: unknown) => (raw === null || raw === undefined ? null : JSON.parse(String(raw)));

/** What a list and a map share: JSON text in a text column, edited in a text box, never filtered. */
const JSON_TEXT = {
  seedType: 'array',
  defaultInput: 'textarea',
  textual: false,
  integral: false,
  operators: [],
  seedRules: () => ['array'],
  column: (_f, variant) => (variant === 'mysql' ? 'longtext' : 'text'),
  fromQuery: () => fail('cannot be filtered'),
  fromDb: fromJsonText,
  toDb: toJsonText,
} satisfies Partial<FieldKind>;

/** One text of a list or a map: up to `max` characters, one of `choices` when given (a map's keys are those). */
function listItem(raw: unknown, f: FieldShape): Parsed<unknown> {
  if (f.listOf) {
    const id = parseIntegerInRange(raw, 1n, MAX_LISTED_ID, true);
    return id.ok ? ok(Number(id.value)) : fail('must hold ids of records');
  }
  const text = parseText(raw, f.max!);
  if (!text.ok) return text;
  const value = text.value.trim();
  if (value === '') return fail('must not hold empty items');
  if (f.choices && !f.choices.includes(value)) return fail(`may hold only ${f.choices.join(', ')}`);
  return f.format ? formats[f.format].parse(value) : ok(value);
}

/**
 * A list, kept as JSON text: texts (each up to `max` characters; one of `choices` when given), or with `listOf` the ids
 * of records of that resource. Each item once, in the order given; a form gives one per line (or ticks them). Not
 * filtered, sorted or searched.
 */
const list: FieldKind = {
  ...JSON_TEXT,
  name: 'list',
  schema: (f) => ({
    type: 'array',
    maxItems: MAX_ITEMS,
    items: f.listOf
      ? { type: 'integer', format: 'int64', minimum: 1 }
      : { type: 'string', maxLength: f.max, ...(f.choices ? { enum: f.choices } : {}) },
  }),
  fromJson(raw, f) {
    if (!Array.isArray(raw)) return fail('must be a list');
    if (raw.length > MAX_ITEMS) return fail(`must hold at most ${MAX_ITEMS} items`);
    const items: unknown[] = [];
    for (const item of raw) {
      const read = listItem(item, f);
      if (!read.ok) return read;
      if (!items.includes(read.value)) items.push(read.value);
    }
    return ok(items);
  },
  fromForm: (raw) =>
    raw
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean),
  toInput: (value) => (Array.isArray(value) ? value.join('\n') : asText(value)),
  display: (value) => ({ text: (value as unknown[]).join(', ') }),
  sample: (f, n, tag) =>
    f.listOf
      ? []
      : f.choices
        ? [f.choices[n % f.choices.length]]
        : [f.format ? formats[f.format].tagged(tag) : `item ${n}`],
};

/**
 * Named values, kept as JSON text: each key one of `choices`, each value a text of up to `max` characters or an
 * integer. A form gives one `key: value` per line. Not filtered, sorted or searched.
 */
const map: FieldKind = {
  ...JSON_TEXT,
  name: 'map',
  schema: (f) => ({
    type: 'object',
    properties: Object.fromEntries((f.choices ?? []).map((k) => [k, { type: ['string', 'integer'] }])),
    additionalProperties: false,
  }),
  fromJson(raw, f) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('must be an object');
    const out: Record<string, unknown> = {};
    const entries = Object.entries(raw);
    if (entries.length > MAX_ITEMS) return fail(`must hold at most ${MAX_ITEMS} keys`);
    for (const [key, value] of entries) {
      if (f.choices && !f.choices.includes(key)) return fail(`may hold only ${f.choices.join(', ')}`);
      if (value === null || value === '') continue;
      if (typeof value === 'number' || typeof value === 'bigint') {
        const n = parseIntegerInRange(value, 0n, MAX_LISTED_ID, false);
        if (!n.ok) return fail(`${key} ${n.message}`);
        out[key] = Number(n.value);
        continue;
      }
      const text = parseText(value, f.max!);
      if (!text.ok) return fail(`${key} ${text.message}`);
      if (text.value.trim()) out[key] = text.value.trim();
    }
    return ok(out);
  },
  // `key: value` per line; digits are a number (an id).
  fromForm(raw) {
    const out: Record<string, unknown> = {};
    for (const line of raw.split(/\r?\n/)) {
      const at = line.indexOf(':');
      if (!line.trim()) continue;
      if (at < 0) return raw;
      const value = line.slice(at + 1).trim();
      out[line.slice(0, at).trim()] = /^\d{1,15}$/.test(value) ? Number(value) : value;
    }
    return out;
  },
  toInput: (value) =>
    value && typeof value === 'object'
      ? Object.entries(value)
          .map(([k, v]) => `${k}: ${String(v)}`)
          .join('\n')
      : asText(value),
  display: (value) => ({
    text:
      Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ') || '—',
  }),
  sample: () => ({}),
};

const CANONICAL_INSTANT = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * How a password is judged and hashed. The app gives them (the user
 * declaration passes accounts/passwords.ts), so the kinds import nothing of it.
 */
export interface PasswordPolicy {
  /** What is wrong with a chosen password, worst first; none when it will do. */
  problems(plain: string): string[];
  hash(plain: string): Promise<string>;
}

/**
 * The password kind, for a declaration: `kind: passwordKind(policy)`.
 * Written only, never read back: checked exactly as sent (no trimming), then
 * hashed before it is stored.
 */
export function passwordKind(policy: PasswordPolicy): FieldKind & { readonly name: 'password' } {
  return {
    name: 'password',
    seedType: 'string',
    defaultInput: 'password',
    textual: false,
    integral: false,
    operators: [],
    seedRules: lengthRules,
    schema: (f) => ({ type: 'string', minLength: 8, maxLength: f.max, writeOnly: true }),
    column: (f) => `varchar(${f.max})`,
    fromJson(raw) {
      if (typeof raw !== 'string') return fail('must be a string');
      const problems = policy.problems(raw);
      return problems.length ? fail(problems[0]!) : ok(raw);
    },
    fromQuery: () => fail('cannot be searched'),
    fromDb: () => undefined,
    toDb: (value) => value,
    // '' is an invited account's "no password yet" (a default, never from a client: a password has 8 characters or
    // more), stored as it is so that no password matches it.
    beforeStore: async (value) => (value === '' ? '' : policy.hash(value as string)),
    writeOnly: true,
    fromForm: (raw) => raw,
    toInput: () => '',
    display: () => ({ text: '' }),
    sample: (_f, _n, tag) => `${tag} correct horse battery staple`,
  };
}

/** The kinds a declaration names by a string; a password field is given `passwordKind(policy)` instead. */
export type NamedKind = Exclude<KindName, 'password'>;

export const kinds = {
  string: textKind('string', 'string', 'text'),
  text: textKind('text', 'text', 'textarea', 65535),
  integer,
  bigInteger,
  boolean,
  dateTime,
  list,
  map,
} satisfies Record<NamedKind, FieldKind>;
