// The fuzz suite's parts: requests generated with fast-check from the app's own
// OpenAPI document (every route and method in it, with bodies, query strings,
// headers and path ids, valid-looking and broken), a digest of the rows the
// app keeps, and the checks every answer must pass.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { Database } from '../../../src/db/connection.ts';
import { asRecordTables } from '../../../src/db/tables.ts';
import { resources } from '../../../src/resources/index.ts';

// ---------------------------------------------------------------- the OpenAPI document

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  $ref?: string;
  required?: string[];
};

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The path template, e.g. /api/v1/contacts/{id}. */
  path: string;
  parameters: Parameter[];
  /** Content types the operation takes, with the schema of each. */
  bodies: { type: string; schema: JsonSchema }[];
}

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
  >;
  components: { schemas: Record<string, JsonSchema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Replaces `$ref`s to components by the schemas they name (the document has no cycles). */
function resolve(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  if (schema.$ref) return resolve(doc, doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {});
  const out: JsonSchema = { ...schema };
  if (schema.properties)
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolve(doc, v)]));
  if (schema.anyOf) out.anyOf = schema.anyOf.map((s) => resolve(doc, s));
  return out;
}

/** Every route and method the document lists. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).map((p) => ({ ...p, schema: resolve(doc, p.schema ?? {}) })),
        bodies: Object.entries(op.requestBody?.content ?? {}).map(([type, c]) => ({
          type,
          schema: resolve(doc, c.schema ?? {}),
        })),
      });
    }
  }
  return operations;
}

/** Every property name any body schema of the document names: unknown-to-this-route keys come from here too. */
export function fieldNamesOf(operations: Operation[]): string[] {
  const names = new Set<string>();
  const walk = (s: JsonSchema) => {
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      names.add(k);
      walk(v);
    }
  };
  for (const op of operations) for (const b of op.bodies) walk(b.schema);
  return [...names].sort();
}

// ---------------------------------------------------------------- values

/** JSON text that is written exactly as given (a number JSON.stringify cannot write, broken JSON). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object whose keys may repeat: written as JSON text with every entry, in order. */
export class Entries {
  constructor(readonly entries: [string, unknown][]) {}
}

export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof Entries)
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') return jsonText(new Entries(Object.entries(value)));
  if (value === undefined) return 'null';
  return JSON.stringify(value);
}

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Strings that have broken programs before. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  'x\uD83D',
  '\uDE00x',
  '\u202Eevil\u202C',
  'שלום עולם',
  'مرحبا بالعالم',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  'e\u0301',
  '\u200B',
  '\uFEFFbom',
  '\uFFFF',
  'Ω≈ç√',
  '𝕿𝖊𝖘𝖙',
  ...PROTO_KEYS,
  'toString',
  'hasOwnProperty',
  "'; drop table contacts; --",
  '" or 1=1 --',
  "' or '1'='1",
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '%00',
  '%',
  '%zz',
  '../../etc/passwd',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as literal text
  '${7*7}',
  '{{7*7}}',
  '\\',
  '\\u0000',
  'null',
  'undefined',
  'true',
  'NaN',
  'Infinity',
  '-0',
  '1e3',
  '0x10',
  '9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551616',
  '-9223372036854775809',
  '2026-11-22',
  '2026-02-30',
  '2026-11-22T09:30:00+14:00',
  '2026-11-22T25:61:61Z',
  '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00Z',
  '0000-00-00',
  'admin@example.com',
  'ADMIN@EXAMPLE.COM',
  'agent@example.com',
  'a@b',
  '@',
  'x@y.z'.padStart(300, 'x'),
  'x'.repeat(255),
  'x'.repeat(256),
  '😀'.repeat(255),
  '😀'.repeat(256),
  'é'.repeat(501),
];

const HUGE_STRINGS = ['x'.repeat(70_000), '😀'.repeat(40_000), `${'\u202E'.repeat(1000)}${'ab'.repeat(20_000)}`];

/** Any string: printable unicode, any code point, lone surrogates mixed in, the nasty list, now and then a huge one. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.constantFrom('a', 'Z', '1', ' ', '\u0000', '\uD800', '\uDC00', '\u202E', '😀', 'é', '"', '\\', '<'),
      maxLength: 30,
    }),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 90, maxLength: 600 }) },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE_STRINGS) },
);

/** A value of the wrong type, or a strange one. */
const strangeValue: fc.Arbitrary<unknown> = fc.oneof(
  anyString,
  fc.integer(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    new RawJson('1e400'),
    new RawJson('-1e400'),
    new RawJson('-0'),
    new RawJson('1.0'),
    new RawJson('0.1e1'),
    new RawJson(`1${'0'.repeat(400)}`),
    new RawJson('1E+2'),
  ),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom([], {}, [null], [1, 2], { a: 1 }, { __proto__: null, x: 1 }),
  fc.constantFrom(
    new Entries([['__proto__', { polluted: 'yes' }]]),
    new Entries([['constructor', { prototype: { polluted: 'yes' } }]]),
  ),
);

/** A valid-looking value for a property's schema. */
export function valueFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.anyOf?.length) return fc.oneof(...schema.anyOf.map((s) => valueFor(s, depth)));
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => valueFor({ ...schema, type: t }, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      if (schema.format === 'int64')
        return fc.oneof(
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          fc.constantFrom(2n ** 63n, -(2n ** 63n) - 1n, 9007199254740993n),
        );
      const min = schema.minimum ?? -(2 ** 31);
      const max = schema.maximum ?? 2 ** 31 - 1;
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max, min - 1, max + 1, 0));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'string': {
      if (schema.format === 'email')
        return fc.oneof(fc.emailAddress(), fc.constantFrom('admin@example.com', 'agent@example.com', 'not an address'));
      if (schema.format === 'date-time')
        return fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.constantFrom('2026-11-22T09:30:00+02:00', '2026-11-22T09:30:00Z', '2026-13-01T00:00:00Z'),
        );
      if (schema.format === 'date')
        return fc.oneof(
          fc
            .date({ noInvalidDate: true, min: new Date('0001-01-01'), max: new Date('9999-12-31') })
            .map((d) => d.toISOString().slice(0, 10)),
          fc.constantFrom('2026-02-29', '2024-02-29'),
        );
      if (schema.pattern?.includes('[0-9]'))
        return fc.oneof(
          fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
          fc.constantFrom('01', '-0', '+1'),
        );
      const max = schema.maxLength ?? 300;
      return fc.oneof(
        fc.string({ unit: 'grapheme', minLength: schema.minLength ?? 0, maxLength: Math.min(max, 60) }),
        // At the limit and one past it, counted in code points (an emoji counts once).
        fc.constantFrom('😀'.repeat(max), '😀'.repeat(max + 1), 'y'.repeat(max + 1)),
        anyString,
      );
    }
    case 'array':
      return depth > 2 ? fc.constant([]) : fc.array(strangeValue, { maxLength: 3 });
    case 'object':
      return depth > 2 ? fc.constant({}) : objectFor(schema, [], depth + 1);
    default:
      return strangeValue;
  }
}

/** Deeply nested JSON, as text (objects or arrays, up to 100,000 levels). */
const deepJson: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(10, 100, 1000, 10_000, 100_000), fc.boolean())
  .map(
    ([n, arrays]) => new RawJson(arrays ? `${'['.repeat(n)}${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  );

/** An object for a schema: some of its properties (valid-looking or not), maybe unknown or prototype keys, maybe a key twice. */
export function objectFor(schema: JsonSchema, extraNames: string[], depth = 0): fc.Arbitrary<Entries> {
  const props = Object.entries(schema.properties ?? {});
  const known = props.map(([name, s]) =>
    fc.tuple(
      fc.constant(name),
      fc.oneof({ weight: 6, arbitrary: valueFor(s, depth) }, { weight: 1, arbitrary: strangeValue }),
    ),
  );
  const otherNames = [
    ...extraNames,
    ...PROTO_KEYS,
    'id',
    'created_at',
    'updated_at',
    'role',
    'password',
    'two_factor_secret',
    'remember_token',
  ];
  const unknown = fc.tuple(
    fc.oneof(fc.constantFrom(...otherNames), anyString),
    depth > 1 ? strangeValue : fc.oneof(strangeValue, deepJson),
  );
  return fc
    .tuple(
      fc
        .subarray(props.map((_, i) => i))
        .chain(
          (idx): fc.Arbitrary<[string, unknown][]> =>
            idx.length ? fc.tuple(...idx.map((i) => known[i]!)) : fc.constant([]),
        ),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(unknown, { minLength: 1, maxLength: 2 }) },
      ),
      fc.nat(9),
      fc.boolean(),
    )
    .map(([own, extra, dup, extraFirst]) => {
      const entries = [...(own as [string, unknown][])];
      // One in ten repeats a key with another value (raw JSON text keeps both).
      if (dup === 0 && entries.length) entries.push([entries[0]![0], extra[0]?.[1] ?? 'duplicate']);
      if (extraFirst) entries.unshift(...extra);
      else entries.push(...extra);
      return new Entries(entries);
    });
}

// ---------------------------------------------------------------- requests

export type Principal = 'admin' | 'agent' | 'none';

export interface FuzzRequest {
  principal: Principal;
  method: string;
  /** The path and query as sent (already encoded). */
  url: string;
  headers: Record<string, string>;
  body?: { kind: 'bytes'; bytes: Uint8Array } | { kind: 'form'; parts: FormPart[] };
  /** What was generated, for a report. */
  note: string;
}

export interface FormPart {
  name: string;
  filename?: string;
  type?: string;
  content: string | Uint8Array;
}

/** Path segments that are ids, or look like ids, or are anything but. Each is already encoded for a URL. */
const pathIdArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 40 }).map(String) },
  // Numbers past every integer type: 2^31, 2^53, 2^63 and 2^64, and 19 digits beyond 2^63.
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.bigInt({ min: 0n, max: 2n ** 70n }),
        fc.constantFrom(2n ** 31n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n, 10n ** 19n - 1n),
      )
      .map(String),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '0',
      '-1',
      '1e3',
      '1.0',
      '01',
      '+1',
      ' 1',
      '%201',
      '1%20',
      '0x1',
      '１２',
      'NaN',
      'null',
      'undefined',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      String(2n ** 64n),
      String(2n ** 63n),
      String(2n ** 63n - 1n),
      '9999999999999999999',
      '99999999999999999999999999',
      String(2 ** 53 + 1),
      '4294967296',
      '2147483648',
      '%00',
      '1%00',
      '%2e%2e',
      '..',
      '.',
      '%2F',
      '%252F',
      '%',
      '%zz',
      '%C0%AF',
      '%ED%A0%80',
      '%FF',
      '%E2%80%AE',
      '1;drop',
      "1'",
      '1"',
      '1%27%20or%201=1',
      '*',
      '1,2',
    ),
  },
  {
    weight: 2,
    arbitrary: anyString.map((s) => encodeURIComponent(s.isWellFormed() ? s : s.toWellFormed()).slice(0, 2000) || 'x'),
  },
);

const FILTER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'null'];

/** A query string value: encoded text, sometimes raw percent sequences. */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: anyString.map((s) => encodeURIComponent(s.toWellFormed()).slice(0, 5000)) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(0, 1, 100, 101, 2 ** 31, 2 ** 53 + 1))
      .map(String),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '%00',
      '%',
      '%zz',
      '%ED%A0%80',
      '%C0%AF',
      'true',
      'false',
      'null',
      'a,b,,c',
      ',',
      '1,2,3',
      '-id',
      'name,-id',
      '1e3',
      '-1',
      '9223372036854775808',
      'id%00',
    ),
  },
);

/** A query string for an operation's parameters (and some it does not take). */
function queryFor(op: Operation, fieldNames: string[]): fc.Arbitrary<string> {
  const query = op.parameters.filter((p) => p.in === 'query');
  const filterSchema = query.find((p) => p.name === 'filter')?.schema;
  const filterFields = Object.keys(filterSchema?.properties ?? {});
  const fieldish = fc.oneof(
    fc.constantFrom(...(filterFields.length ? filterFields : fieldNames)),
    fc.constantFrom(...PROTO_KEYS, 'password', 'two_factor_secret', 'nope'),
    anyString.map((s) => encodeURIComponent(s.toWellFormed()).slice(0, 300)),
  );
  const pair: fc.Arbitrary<string> = fc.oneof(
    // A declared parameter with a value of its kind or another.
    ...(query.length
      ? [
          fc
            .tuple(fc.constantFrom(...query.filter((p) => p.name !== 'filter')), queryValue)
            .map(([p, v]) => `${p?.name ?? 'search'}=${v}`),
        ]
      : []),
    // filter[field]=v and filter[field][op]=v
    fc
      .tuple(fieldish, fc.option(fc.oneof(fc.constantFrom(...FILTER_OPS), fieldish), { nil: undefined }), queryValue)
      .map(([f, o, v]) => `filter[${f}]${o === undefined ? '' : `[${o}]`}=${v}`),
    fc
      .tuple(fc.array(fieldish, { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([fs, desc]) => `sort=${fs.map((f) => (desc ? `-${f}` : f)).join(',')}`),
    // Deeper nesting than the parser allows, arrays, prototype keys, a bare key, odd separators.
    fc.constantFrom(
      'filter[name][eq][x]=1',
      'filter[name][]=a',
      'filter[]=a',
      'filter=a',
      'filter[__proto__][polluted]=1',
      'filter[constructor][prototype][polluted]=1',
      '__proto__[polluted]=1',
      'constructor[prototype][polluted]=1',
      'page[]=1',
      'page=1&page=2',
      'per_page=0',
      'per_page=101',
      'per_page=1e2',
      'cursor=',
      'cursor=eyJ4IjoxfQ',
      'cursor=%00',
      'sort=',
      'sort=-',
      'sort=,',
      'search=',
      'search=%20%20',
      '&&&',
      '=',
      '==1',
      'a=1;b=2',
      'format=xml',
      'bom=yes',
    ),
    fc.tuple(anyString, queryValue).map(([k, v]) => `${encodeURIComponent(k.toWellFormed()).slice(0, 200)}=${v}`),
  );
  return fc.array(pair, { maxLength: 6 }).map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
}

/** Content types, right and wrong. */
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'text/csv',
  'image/png',
  '*/*',
  'application/json, text/plain',
  ';',
  'application/',
  'application/json;charset="',
];

const encoder = new TextEncoder();

/** A JSON body: an object for the schema as text, or something else entirely. */
function jsonBodyFor(schema: JsonSchema, fieldNames: string[]): fc.Arbitrary<Uint8Array> {
  const text = fc.oneof(
    { weight: 6, arbitrary: objectFor(schema, fieldNames).map(jsonText) },
    { weight: 1, arbitrary: strangeValue.map(jsonText) },
    { weight: 1, arbitrary: deepJson.map((r) => r.text) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '{',
        '}',
        '{"a":',
        '{"a":1,}',
        "{'a':1}",
        '{"a":1}{"b":2}',
        '{"a":1} trailing',
        'NaN',
        '{"a":NaN}',
        '{"a":Infinity}',
        '{"a":undefined}',
        '{"a":1 /* comment */}',
        '\uFEFF{}',
        '{"\u0000":1}',
        '{"a":"\u0000"}',
        '{"a":"\\u0000"}',
        '{"a":"\\ud800"}',
        '{"a":"\\uDFFF\\uD800"}',
        '{"a":"\\x41"}',
        '{"__proto__":{"polluted":"yes"}}',
        '{"constructor":{"prototype":{"polluted":"yes"}}}',
        '{"__proto__":[],"name":"x"}',
        '{"name":"a","name":"b"}',
        '{"email":"x@y.z","email":{"$ne":null}}',
        '{"name":{"$gt":""}}',
        '[{"name":"a"}]',
        'null',
        'true',
        '0',
        '"text"',
        `{"name":"${'x'.repeat(1024 * 1024)}"}`,
      ),
    },
  );
  return fc.oneof(
    { weight: 12, arbitrary: text.map((t) => encoder.encode(t)) },
    // Bytes that are not UTF-8 at all: an encoded surrogate, an overlong slash, a stray continuation byte, UTF-16.
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d],
          [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d],
          [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0x80, 0xff, 0x22, 0x7d],
          [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00],
          [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0x61, 0x00, 0x62, 0x22, 0x7d],
        )
        .map((bytes) => Uint8Array.from(bytes)),
    },
  );
}

/** Multipart envelopes cut short or malformed, by hand (FormData always writes a whole one). */
const brokenMultipart = fc
  .tuple(
    fc.constantFrom('file', 'avatar', 'x'),
    fc.constantFrom('name,email\nAda,ada@example.com\n', '', '\u0000\u0001'),
    fc.constantFrom(
      '',
      '\r\n--xyz',
      '\r\n--xyz--',
      '\r\n--xyz--\r\n',
      '\r\n--xy',
      '\r\n--xyz\r\nContent-Disposition: form-data; name="file"; filename="b.csv"\r\n',
    ),
    fc.constantFrom('Content-Type: text/csv\r\n', '', 'Content-Type\r\n', 'Content-Disposition: form-data\r\n'),
  )
  .map(
    ([name, content, end, extra]) =>
      `--xyz\r\nContent-Disposition: form-data; name="${name}"; filename="a.csv"\r\n${extra}\r\n${content}${end}`,
  );

/** A multipart body: a CSV or an image-ish file under the expected name or another, or a broken envelope. */
function formFor(op: Operation, schema: JsonSchema, importColumns: string[]): fc.Arbitrary<FormPart[]> {
  const expected = Object.keys(schema.properties ?? {})[0] ?? (op.path.endsWith('/avatar') ? 'avatar' : 'file');
  const csvCell = fc.oneof(
    anyString.filter((s) => s.length < 300),
    fc.integer().map(String),
    fc.constantFrom('', 'true', 'false', '2026-11-22', '=cmd|/C calc', '"quoted, cell"'),
  );
  const quote = (cell: string) =>
    /[",\n\r]/.test(cell) || cell.trim() !== cell ? `"${cell.replace(/"/g, '""')}"` : cell;
  const csv = fc
    .tuple(
      fc.subarray(importColumns, { minLength: 1 }),
      fc.array(fc.array(csvCell, { minLength: 1, maxLength: 6 }), { maxLength: 5 }),
      fc.nat(5),
    )
    .map(([header, rows, broken]) => {
      const lines = [header.join(','), ...rows.map((r) => r.map(quote).join(','))];
      // Now and then the file goes bad part-way: an unclosed quote, a NUL byte, a stray header name.
      if (broken === 0) lines.push('"unclosed,quote');
      if (broken === 1) lines[0] = `${lines[0]},not_a_column`;
      if (broken === 2) lines.push('a\u0000b');
      return lines.join(broken === 3 ? '\r\n' : '\n');
    });
  const content = fc.oneof(
    csv,
    fc.uint8Array({ maxLength: 200 }),
    fc.constantFrom(
      '',
      '\uFEFF',
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
      'GIF89a',
      '\u0089PNG\r\n\u001a\n',
    ),
  );
  const part = fc.record({
    name: fc.oneof(
      { weight: 4, arbitrary: fc.constant(expected) },
      { weight: 1, arbitrary: fc.constantFrom('file', 'avatar', '__proto__', '', 'x') },
    ),
    filename: fc.option(
      fc.constantFrom('data.csv', 'me.png', 'x.txt', '', '../../etc/passwd', 'a\u202Egnp.csv', '😀.csv'),
      { nil: undefined },
    ),
    type: fc.option(
      fc.constantFrom('text/csv', 'image/png', 'image/jpeg', 'application/octet-stream', 'text/plain', 'image/svg+xml'),
      { nil: undefined },
    ),
    content,
  });
  return fc.array(part, { minLength: 0, maxLength: 3 });
}

/** Headers a client may send, sensible and not. */
const headerArb: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(
    fc.constant('if-match'),
    fc.constantFrom('*', '"x"', 'W/"x"', '"0123456789abcdef"', '', '""', 'garbage', '"a", "b"', '*, "x"'),
  ),
  fc.tuple(fc.constant('if-none-match'), fc.constantFrom('*', '"x"', 'W/"x"', '')),
  fc.tuple(
    fc.constant('accept'),
    fc.constantFrom(
      '*/*',
      'text/html',
      'application/json',
      'application/problem+json',
      'text/csv',
      'image/*',
      'x/y;q=0',
      '',
    ),
  ),
  fc.tuple(fc.constant('x-forwarded-for'), fc.constantFrom('203.0.113.1', 'garbage', '::1', '1.1.1.1, 2.2.2.2', '')),
  fc.tuple(fc.constant('x-forwarded-proto'), fc.constantFrom('https', 'http', 'gopher')),
  fc.tuple(fc.constant('origin'), fc.constantFrom('http://evil.example', 'null', '')),
  fc.tuple(fc.constant('sec-fetch-site'), fc.constantFrom('cross-site', 'same-origin', 'same-site', 'none', 'x')),
  fc.tuple(
    fc.constant('cookie'),
    fc.constantFrom(
      'leadbook_session=x',
      'leadbook_session=__proto__',
      'leadbook_remember=1|x|y',
      '__proto__=1',
      'leadbook_csrf=x',
      '=;;=',
      'leadbook_session=%00',
      `leadbook_remember=9999999999999999999.9999999999.${'A'.repeat(43)}`,
      `leadbook_remember=1.9999999999.${'A'.repeat(43)}`,
      `leadbook_remember=0.1.${'A'.repeat(43)}`,
    ),
  ),
  fc.tuple(fc.constant('accept-language'), fc.constantFrom('de-DE', 'x'.repeat(200), '*')),
  fc.tuple(fc.constant('range'), fc.constantFrom('bytes=0-1', 'bytes=-1', 'x')),
  fc.tuple(fc.constant('x-http-method-override'), fc.constantFrom('DELETE', 'PUT')),
  fc.tuple(
    fc.constantFrom('x-csrf-token', 'x-request-id', 'x-custom', 'user-agent'),
    fc.string({ unit: 'grapheme-ascii', maxLength: 100 }),
  ),
);

/** Authorization headers that are not a valid token. */
const badAuthorization = fc.constantFrom(
  'Bearer ',
  'Bearer lb_x',
  `Bearer lb_${'x'.repeat(200)}`,
  'Basic YWRtaW46YWRtaW4=',
  'bearer',
  'Bearer  lb_',
  'Token abc',
  'Bearer lb_%00',
);

export interface Vocabulary {
  fieldNames: string[];
  /** Column names an import of each resource takes (its header row). */
  importColumns: (path: string) => string[];
}

/** One generated request for one of the operations. */
export function requestArb(operations: Operation[], words: Vocabulary): fc.Arbitrary<FuzzRequest> {
  const perOperation = operations.map((op) => {
    const path = fc.tuple(...(op.path.match(/\{[^}]+\}/g) ?? []).map(() => pathIdArb)).map((ids) => {
      let i = 0;
      return op.path.replace(/\{[^}]+\}/g, () => ids[i++]!);
    });
    const body: fc.Arbitrary<{ type?: string; body?: FuzzRequest['body'] }> =
      op.bodies.length === 0
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constant({}) },
            {
              weight: 1,
              arbitrary: fc
                .tuple(fc.constantFrom(...CONTENT_TYPES), jsonBodyFor({}, words.fieldNames))
                .map(([type, bytes]) => ({ type, body: { kind: 'bytes' as const, bytes } })),
            },
          )
        : fc.oneof(
            ...op.bodies.map(({ type, schema }) =>
              type === 'multipart/form-data'
                ? fc.oneof(
                    {
                      weight: 4,
                      arbitrary: formFor(op, schema, words.importColumns(op.path)).map((parts) => ({
                        body: { kind: 'form' as const, parts },
                      })),
                    },
                    {
                      weight: 1,
                      arbitrary: fc
                        .tuple(fc.constantFrom(...CONTENT_TYPES), fc.uint8Array({ maxLength: 300 }))
                        .map(([t, bytes]) => ({ type: t, body: { kind: 'bytes' as const, bytes } })),
                    },
                    {
                      weight: 1,
                      arbitrary: brokenMultipart.map((text) => ({
                        type: 'multipart/form-data; boundary=xyz',
                        body: { kind: 'bytes' as const, bytes: encoder.encode(text) },
                      })),
                    },
                  )
                : fc
                    .tuple(
                      fc.oneof(
                        { weight: 8, arbitrary: fc.constant(type) },
                        { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
                        { weight: 1, arbitrary: fc.constant(undefined) },
                      ),
                      jsonBodyFor(schema, words.fieldNames),
                    )
                    .map(([t, bytes]) => ({ type: t, body: { kind: 'bytes' as const, bytes } })),
            ),
          );
    return fc
      .record({
        principal: fc.constantFrom<Principal>('admin', 'agent', 'none'),
        // Now and then the method is one the path does not have.
        method: fc.oneof(
          { weight: 12, arbitrary: fc.constant(op.method) },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
        ),
        path,
        query: queryFor(op, words.fieldNames),
        body,
        headers: fc.array(headerArb, { maxLength: 3 }),
        authorization: fc.oneof(
          { weight: 15, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: badAuthorization },
        ),
      })
      .map((r): FuzzRequest => {
        const headers = Object.fromEntries(r.headers);
        if (r.body.type !== undefined) headers['content-type'] = r.body.type;
        if (r.authorization !== undefined) headers.authorization = r.authorization;
        const sends = r.body.body && !['GET', 'HEAD'].includes(r.method);
        return {
          principal: r.principal,
          method: r.method,
          url: r.path + r.query,
          headers,
          ...(sends ? { body: r.body.body } : {}),
          note: `${op.method} ${op.path}`,
        };
      });
  });
  return fc.oneof(...perOperation);
}

/** A short printable account of a request, for a failure report. */
export function describe(request: FuzzRequest): string {
  const body =
    request.body?.kind === 'bytes'
      ? `${request.body.bytes.length} bytes: ${JSON.stringify(Buffer.from(request.body.bytes.slice(0, 300)).toString('utf8'))}`
      : request.body
        ? `form ${JSON.stringify(request.body.parts.map((p) => ({ ...p, content: typeof p.content === 'string' ? p.content.slice(0, 200) : `${p.content.length} bytes` })))}`
        : 'no body';
  return `${request.principal}: ${request.method} ${request.url.slice(0, 500)} headers ${JSON.stringify(request.headers)} ${body.slice(0, 800)}`;
}

// ---------------------------------------------------------------- the database digest

/** The table of every declared resource. */
export const DIGESTED_TABLES = resources.map((r) => r.table);
export type Digest = Record<string, Map<string, string>>;

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'bigint'
      ? `${v}n`
      : v instanceof Date
        ? v.toISOString()
        : Buffer.isBuffer(v)
          ? v.toString('base64')
          : v,
  );

/** Every row of every resource's table, as id → hash of the whole row, read through the test's own connection. */
export async function digestOf(database: Database): Promise<Digest> {
  const out = Object.fromEntries(DIGESTED_TABLES.map((t) => [t, new Map<string, string>()])) as Digest;
  if (database.dialect === 'postgres') {
    // One round trip; PostgreSQL hashes each whole row (its text form) itself.
    const union = DIGESTED_TABLES.map(
      (t) => `select '${t}' as tbl, id::text as id, md5(r::text) as hash from ${t} r`,
    ).join(' union all ');
    const { rows } = await sql.raw<{ tbl: string; id: string; hash: string }>(union).execute(database.db);
    for (const row of rows) out[row.tbl]!.set(row.id, row.hash);
    return out;
  }
  for (const table of DIGESTED_TABLES) {
    const rows = await asRecordTables(database.db).selectFrom(table).selectAll().execute();
    for (const row of rows) out[table]!.set(String(row.id), createHash('sha256').update(canonical(row)).digest('hex'));
  }
  return out;
}

/** What differs between two digests, as lines; none when equal. */
export function digestChanges(before: Digest, after: Digest): string[] {
  const changes: string[] = [];
  for (const table of DIGESTED_TABLES) {
    for (const [id, hash] of before[table]!) {
      const now = after[table]!.get(id);
      if (now === undefined) changes.push(`${table} #${id} deleted`);
      else if (now !== hash) changes.push(`${table} #${id} changed`);
    }
    for (const id of after[table]!.keys()) if (!before[table]!.has(id)) changes.push(`${table} #${id} added`);
  }
  return changes;
}

// ---------------------------------------------------------------- the prototype

/** A fingerprint of the built-in prototypes: any key added to them (pollution) changes it. */
export function prototypeFingerprint(): string {
  const keys = (o: object) => Reflect.ownKeys(o).map(String).sort().join(',');
  const probe: Record<string, unknown> = {};
  const inherited: string[] = [];
  for (const k in probe) inherited.push(k);
  return [
    keys(Object.prototype),
    keys(Array.prototype),
    keys(Function.prototype),
    keys(String.prototype),
    inherited.join(','),
    String(probe.polluted),
  ].join('|');
}

// ---------------------------------------------------------------- the pages' forms

export interface PageForm {
  /** The action path (its query, a CSRF token on upload forms, dropped). */
  action: string;
  fields: string[];
  multipart: boolean;
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** The POST forms of a page's HTML: where each goes and the names of its fields. */
export function formsOf(html: string): PageForm[] {
  const forms: PageForm[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attributes = m[1]!;
    if (!/method="post"/i.test(attributes)) continue;
    const action = unescapeHtml(/action="([^"]*)"/.exec(attributes)?.[1] ?? '').split('?')[0]!;
    const fields = [
      ...new Set(
        [...m[2]!.matchAll(/<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"/g)].map((f) => unescapeHtml(f[1]!)),
      ),
    ].filter((f) => f !== '_csrf');
    forms.push({ action, fields, multipart: /multipart\/form-data/i.test(attributes) });
  }
  return forms;
}

/** A urlencoded body for a form: its fields (and others) with values of any kind, nested and repeated keys, maybe a bad CSRF token. */
export function formBodyArb(form: PageForm, csrf: string): fc.Arbitrary<string> {
  const enc = (s: string) => encodeURIComponent(s.toWellFormed()).slice(0, 20_000);
  const name = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...(form.fields.length ? form.fields : ['name'])) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...PROTO_KEYS, 'role', 'id', 'password', '_etag', 'next', 'filter[status]'),
    },
    { weight: 1, arbitrary: anyString.map((s) => s.slice(0, 50)) },
  );
  const key = fc
    .tuple(
      name,
      fc.oneof(
        { weight: 8, arbitrary: fc.constant('') },
        { weight: 1, arbitrary: fc.constantFrom('[]', '[x]', '[__proto__]', '[0][1]') },
      ),
    )
    .map(([n, suffix]) => enc(n) + suffix.replace(/[[\]]/g, (c) => (c === '[' ? '%5B' : '%5D')));
  const value = fc.oneof(
    { weight: 3, arbitrary: anyString.map(enc) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '1',
        '0',
        'on',
        'true',
        'null',
        '%00',
        '%',
        '%zz',
        '%ED%A0%80',
        '2026-11-22',
        '9223372036854775808',
      ),
    },
  );
  const token = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`_csrf=${enc(csrf)}`) },
    { weight: 1, arbitrary: fc.constantFrom('', '_csrf=forged', '_csrf=', '_csrf[]=x') },
  );
  return fc
    .tuple(fc.array(fc.tuple(key, value), { maxLength: 8 }), token)
    .map(([pairs, t]) => [...pairs.map(([k, v]) => `${k}=${v}`), t].filter(Boolean).join('&'));
}
