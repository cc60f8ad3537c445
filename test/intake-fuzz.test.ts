// Fuzzing the public intake door, POST /api/v1/intake/:slug (no sign-in), with fast-check on each database. The
// submissions are generated valid and broken: the form's fields with realistic, unicode and edge values, unknown and
// trap (`website`) fields, wrong types, NUL and lone surrogates, huge and boundary-sized bodies, malformed JSON, wrong
// content types, form-encoded bodies with repeated keys, odd and closed slugs, odd Idempotency-Keys, replays and a
// key reused for another body, and now and then a burst from one address that reaches the throttle (10 a minute).
// Each case comes from an address of its own (TRUST_PROXY, X-Forwarded-For), so the handler is what is fuzzed.
// Every answer is held to a model of the door (CONTRACT.md, "Intake"): no 5xx; every error is problem+json whose
// status is the HTTP status, naming the refused fields; a refused submission and a dropped one (the trap filled) store
// nothing (inquiries, contacts, idempotency keys, change log and notifications counted in the database before and
// after), the dropped one only counted on its form; an accepted one is exactly one new inquiry holding what was sent;
// a replay (same key, same body) is answered as the first was and stores nothing.
//
// 5,000 cases per database; LEADBOOK_FUZZ_RUNS=… sends another number. The seed is printed: a failure replays with
// LEADBOOK_TEST_DIALECTS=… LEADBOOK_FUZZ_SEED=… (and LEADBOOK_FUZZ_PATH=… for fast-check's shrunk counterexample).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { AppError } from '../src/errors.ts';
import { parseJsonBody } from '../src/http/json.ts';
import { inquiry } from '../src/resources/index.ts';
import { INTAKE_FIELDS } from '../src/resources/intake-form.ts';
import { formats } from '../src/schema/formats.ts';
import { type Reply, startApp, type TestApp, toJson } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { teammate } from './helpers/team.ts';
import { pageSignIn } from './reliability/helpers/security.ts';

const RUNS = Number(process.env.LEADBOOK_FUZZ_RUNS || 5000);
// Chosen here and printed at the start; each database gets its own unless one is given.
const SEED_GIVEN = process.env.LEADBOOK_FUZZ_SEED ? Number(process.env.LEADBOOK_FUZZ_SEED) : undefined;
const seedFor = () => SEED_GIVEN ?? Math.floor(Math.random() * 2 ** 31);
const PATH = process.env.LEADBOOK_FUZZ_PATH;
// A generous bound: 5,000 cases take under a minute on each database; shrinking a failure takes the rest.
const TIME_LIMIT_MS = Math.max(300_000, RUNS * 60);

const BODY_LIMIT = 16 * 1024;
const MAX_KEY = 255;
const TRAP = 'website';
const TOKEN = '_t';
/** The address the bursts come from: its 11th submission to a form within a minute is throttled. */
const SHARED_ADDRESS = '192.0.2.77';

// ---------------------------------------------------------------- the forms

interface FormSpec {
  name: string;
  slug: string;
  fields: string[];
  required: string[];
}

const MAIN: FormSpec = {
  name: 'Contact us',
  slug: 'contact-us',
  fields: ['name', 'email', 'phone', 'country', 'detail'],
  required: ['email'],
};
// No required field: a submission with neither name nor phone fails the inquiry's own rule (one of name/email/phone).
const QUICK: FormSpec = {
  name: 'Quick note',
  slug: 'quick-note',
  fields: ['name', 'phone', 'city', 'budget', 'detail'],
  required: [],
};
const CLOSED = 'closed-form';
const FORMS = [MAIN, QUICK];
const NEEDS_ONE_OF = inquiry.needsOneOf.map((f) => f.name);
const maxOf = (field: string) => inquiry.field(field)!.max!;

// ---------------------------------------------------------------- values

const NAMES = [
  'Ada Lovelace',
  'Zoë Ölçer',
  'José Álvarez-Núñez',
  '山田 太郎',
  'Ngũgĩ wa Thiong’o',
  "Seán O'Brien",
  'Nguyễn Thị Minh Khai',
  'محمد علي',
  'Åsa Öberg',
  'Ωmega ✓',
];
const GOOD_EMAILS = [
  'ada@example.org',
  'Wanda@Example.org',
  'o.brien+leads@mail.example.com',
  'x@y',
  "a.b-c_d!#$%&'*+/=?^`{|}~@example.co.uk",
];
const BAD_EMAILS = [
  'not an email',
  'ada@',
  '@example.org',
  ' ada@example.org',
  'ada@example.org ',
  'ä@example.org',
  'ada@-example.org',
  'ada@example..org',
  'a@b@c',
  'ada@exa mple.org',
];
const PHONES = [
  '+44 20 7946 0958',
  '(555) 010-0199',
  '+1 555 0100',
  '+49 (0)30 1234567 ext. 8',
  '0',
  '+',
  '++++',
  `+1${'9'.repeat(60)}`,
  'call me',
];
const PLACES = ['Norway', 'Deutschland', 'Côte d’Ivoire', '日本', 'DE', 'us', 'São Paulo', 'Reykjavík', 'Zürich'];
/** Text that has broken programs before: blanks, NUL, lone surrogates, bidi and zero-width characters, injections. */
const ODD_TEXT = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFF',
  '\uDE00x',
  '\u202Eevil\u202C',
  '\u200B',
  '\uFEFFbom',
  '\uFFFF',
  'e\u0301',
  '👩‍👩‍👧‍👦',
  '<script>alert(1)</script>',
  "'; drop table inquiries; --",
  '%00',
  '\\u0000',
  'null',
  '__proto__',
  '9007199254740993',
];

/** Strings at and just past a field's length limit (code points: an emoji counts once). */
function edgeLengths(field: string): string[] {
  const max = maxOf(field);
  if (field === 'email') {
    const at = (n: number) => `${'a'.repeat(n - '@example.org'.length)}@example.org`;
    return [at(max), at(max + 1)];
  }
  return ['x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(max), '😀'.repeat(max + 1), 'é'.repeat(max + 1)];
}

/** A value meant to be accepted for the field (the model decides whether it is). */
function goodText(field: string): fc.Arbitrary<string> {
  const graphemes = (maxLength: number) => fc.string({ unit: 'grapheme', minLength: 1, maxLength });
  switch (field) {
    case 'email':
      return fc.oneof(fc.constantFrom(...GOOD_EMAILS), fc.emailAddress());
    case 'name':
      return fc.oneof(fc.constantFrom(...NAMES), graphemes(40));
    case 'phone':
      return fc.oneof(
        fc.constantFrom(...PHONES),
        fc.string({ unit: fc.constantFrom(...'0123456789 +-().'), minLength: 1, maxLength: 20 }),
      );
    case 'country':
    case 'city':
      return fc.oneof(fc.constantFrom(...PLACES), graphemes(30));
    default:
      return fc.oneof(fc.lorem({ maxCount: 12 }), graphemes(80));
  }
}

/** Values of the wrong type for a text field; integers past 2^53 arrive as BigInt (src/http/json.ts). */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }),
  fc.bigInt({ min: -(2n ** 80n), max: -(2n ** 53n) - 1n }),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 2 }),
);

/** Anything for a field: mostly good text, else edge text, any code points, null, or the wrong type. */
function anyValue(field: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 10, arbitrary: goodText(field) },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_TEXT, ...edgeLengths(field)) },
    { weight: 1, arbitrary: field === 'email' ? fc.constantFrom(...BAD_EMAILS) : goodText(field) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: wrongType },
  );
}

/** Names a form does not ask for: near misses, prototype keys, other intake fields, the hosted form's token. */
const OTHER_KEYS = [
  'favourite_colour',
  'Email',
  'EMAIL',
  'email ',
  ' name',
  'e-mail',
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'id',
  'source_id',
  'assigned_to',
  'stage_id',
  'created_by',
  'name[]',
  'website[]',
  'a.b',
  '\u0000',
  'ñame',
  '😀',
  TOKEN,
  ...INTAKE_FIELDS,
];
const otherKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...OTHER_KEYS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
);
/** A filled trap: anything the door counts as present (not null, not blank text). */
const trapFilled: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('http://spam.example', 'x', ' x ', '0', 0, false, true, [], {}, ['']),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== ''),
);
const trapBlank = fc.constantFrom('', ' ', '\t', null);

type Entries = [string, unknown][];

/** The form's fields, each left out now and then (a required one only when `keepRequired` is false). */
function formFields(form: FormSpec, value: (f: string) => fc.Arbitrary<unknown>, keepRequired: boolean) {
  return fc
    .tuple(
      ...form.fields.map((f) => {
        const entry = value(f).map((v): [string, unknown] => [f, v]);
        return keepRequired && form.required.includes(f) ? entry : fc.option(entry, { nil: undefined, freq: 3 });
      }),
    )
    .map((list) => list.filter((e): e is [string, unknown] => e !== undefined));
}

function entriesArb(form: FormSpec): fc.Arbitrary<{ entries: Entries; note: string }> {
  return fc.oneof(
    { weight: 8, arbitrary: formFields(form, goodText, true).map((entries) => ({ entries, note: 'valid' })) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          formFields(form, anyValue, false),
          fc.array(fc.tuple(otherKey, fc.oneof(goodText('detail'), wrongType)), { maxLength: 2 }),
        )
        .map(([fields, extra]) => ({ entries: [...fields, ...extra], note: 'messy' })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(formFields(form, goodText, true), trapFilled)
        .map(([fields, trap]) => ({ entries: [...fields, [TRAP, trap] as [string, unknown]], note: 'trap' })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(formFields(form, anyValue, false), trapFilled, otherKey).map(([fields, trap, key]) => ({
        entries: [...fields, [key, 'x'] as [string, unknown], [TRAP, trap] as [string, unknown]],
        note: 'trap with unknown fields',
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(formFields(form, goodText, true), trapBlank)
        .map(([fields, trap]) => ({ entries: [...fields, [TRAP, trap] as [string, unknown]], note: 'blank trap' })),
    },
  );
}

// ---------------------------------------------------------------- bodies

/** What the door's body parser makes of a body: the value, or the status it answers before the handler runs. */
type View = { parsed: unknown } | { statuses: number[] } | { deep: true };

interface Submission {
  note: string;
  contentType?: string;
  /** Sent as UTF-8 (a lone surrogate would become U+FFFD: the generators escape or replace them first). */
  body: string;
  /** Sent instead of `body` when set: bytes that are not UTF-8. */
  bytes?: number[];
  view: View;
}

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/vnd.api+json',
  'Application/JSON',
];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8'];
const WRONG_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data',
  'application/xml',
  'application/octet-stream',
  'text/json',
  'application/jsonp',
  'application/json-seq',
  'application/x-www-form-urlencodedx',
  'application/json, text/plain',
  '',
  undefined,
];

/** The JSON door's view: src/http/json.ts's own parser on the UTF-8 text, after the 16 KiB limit. */
function jsonView(bytes: Buffer): View {
  if (bytes.length > BODY_LIMIT) return { statuses: [413] };
  try {
    return { parsed: parseJsonBody(bytes.toString('utf8')) };
  } catch (error) {
    if (error instanceof AppError) return { statuses: [error.status] };
    throw error;
  }
}

function jsonBody(note: string, value: unknown, contentType = 'application/json'): Submission {
  const body = toJson(value);
  return { note, contentType, body, view: jsonView(Buffer.from(body, 'utf8')) };
}

function jsonText(note: string, text: string, contentType = 'application/json'): Submission {
  const body = text.toWellFormed();
  return { note, contentType, body, view: jsonView(Buffer.from(body, 'utf8')) };
}

/** Pairs as a browser would send a form: a list becomes repeated keys, anything else its text. */
function pairsOf(entries: Entries): [string, string][] {
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'object' ? toJson(v) : String(v));
  const pairs: [string, string][] = [];
  for (const [k, v] of entries) {
    if (v === null || v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) pairs.push([k, text(item)]);
    else pairs.push([k, text(v)]);
  }
  return pairs;
}

/** A form-encoded body; the door reads a repeated key as a list, and URLSearchParams sends U+FFFD for a surrogate. */
function formBody(note: string, pairs: [string, string][], contentType = FORM_TYPES[0]!): Submission {
  const body = new URLSearchParams(pairs).toString();
  const grouped = new Map<string, string[]>();
  for (const [k, v] of pairs)
    grouped.set(k.toWellFormed(), [...(grouped.get(k.toWellFormed()) ?? []), v.toWellFormed()]);
  const parsed = Object.fromEntries([...grouped].map(([k, vs]) => [k, vs.length === 1 ? vs[0] : vs]));
  return { note, contentType, body, view: Buffer.byteLength(body) > BODY_LIMIT ? { statuses: [413] } : { parsed } };
}

/** `entries` with a `detail` padded so that the whole body is `size` bytes: 16 KiB is the limit, to the byte. */
function sized(entries: Entries, size: number, form: boolean): Submission {
  const rest = entries.filter(([k]) => k !== 'detail');
  const encode = (detail: string) =>
    form
      ? formBody('sized form', [...pairsOf(rest), ['detail', detail]])
      : jsonBody('sized json', Object.fromEntries([...rest, ['detail', detail]]));
  const empty = Buffer.byteLength(encode('').body);
  return encode('x'.repeat(Math.max(0, size - empty)));
}

const MALFORMED_JSON = [
  '{',
  '}',
  '{"email":',
  '{"email":"a@example.org",}',
  "{'email':'a@example.org'}",
  '{"email":"a@example.org"}garbage',
  '{"email":"a@example.org","email":"b@example.org"}',
  '{"email":"a@example.org"} {"email":"b@example.org"}',
  '{"email":"a@example.org","name":"a\u0000b"}',
  '{"email":"a@example.org","name":1e999}',
  '{"__proto__":{"polluted":true},"email":"a@example.org"}',
  '{"constructor":{"prototype":{"polluted":true}},"email":"a@example.org"}',
  '\uFEFF{"email":"a@example.org"}',
  'NaN',
  '[1,2',
  'nul',
  'tru',
  '"\\ud800',
  '{"a":"\\x41"}',
  '-',
  '[]',
  '""',
  '0',
  'null',
  'true',
  ' ',
];
const MULTIPART_GARBAGE = [
  '--xyz\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.org\r\n--xyz--\r\n',
  '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail\r\na@example.org',
  '--xyz',
  '--xyz--',
  '\r\n--xyz\r\n\r\n',
];

/** A body for the form: mostly its fields as JSON or form-encoded, else broken in one of many ways. */
function submissionArb(form: FormSpec): fc.Arbitrary<Submission> {
  const entries = entriesArb(form);
  const json = fc
    .tuple(entries, fc.constantFrom(...JSON_TYPES))
    .map(([e, type]) => jsonBody(`json ${e.note}`, Object.fromEntries(e.entries), type));
  const encoded = fc
    .tuple(entries, fc.constantFrom(...FORM_TYPES), fc.option(fc.tuple(fc.nat(), fc.option(goodText('name')))))
    .map(([e, type, repeat]) => {
      const pairs = pairsOf(e.entries);
      // Now and then one key again, with the same value or another.
      if (repeat && pairs.length) {
        const [k, v] = pairs[repeat[0] % pairs.length]!;
        pairs.push([k, repeat[1] ?? v]);
      }
      return formBody(`form ${e.note}${repeat && pairs.length ? ', a key repeated' : ''}`, pairs, type);
    });
  const notAnObject = fc
    .oneof(
      entries.map((e) => e.entries as unknown),
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.constant(null),
      fc.constant([]),
    )
    .map((v) => jsonBody('json, not an object', v));
  const boundary = fc
    .tuple(entries, fc.integer({ min: -24, max: 24 }), fc.boolean())
    .map(([e, delta, form]) => sized(e.entries, BODY_LIMIT + delta, form));
  const huge = fc
    .tuple(
      entries,
      fc.constantFrom(...form.fields),
      fc.integer({ min: 17_000, max: 70_000 }),
      fc.constantFrom('x', '😀', 'é'),
      fc.boolean(),
    )
    .map(([e, field, n, char, asForm]) => {
      const all: Entries = [...e.entries.filter(([k]) => k !== field), [field, char.repeat(n / char.length)]];
      return asForm ? formBody('huge form', pairsOf(all)) : jsonBody('huge json', Object.fromEntries(all));
    });
  const malformed = fc
    .oneof(
      fc.constantFrom(...MALFORMED_JSON),
      // A valid body cut short.
      fc.tuple(json, fc.nat()).map(([s, n]) => s.body.slice(0, 1 + (n % Math.max(1, s.body.length - 1)))),
    )
    .chain((text) => fc.constantFrom(...JSON_TYPES).map((type) => jsonText('malformed json', text, type)));
  // Whether the parser runs out of stack (400) depends on how deep the stack already is: either answer will do.
  const deep = fc.tuple(fc.integer({ min: 1, max: 8000 }), fc.boolean()).map(([depth, array]): Submission => {
    const body = array ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const view: View = Buffer.byteLength(body) > BODY_LIMIT ? { statuses: [413] } : { deep: true };
    return { note: `nested ${depth} deep`, contentType: 'application/json', body, view };
  });
  const notUtf8 = fc
    .tuple(entries, fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xae]))
    .map(([e, bad]): Submission => {
      const head = Buffer.from(toJson(Object.fromEntries(e.entries)).replace(/}$/, `${e.entries.length ? ',' : ''}`));
      const bytes = Buffer.concat([head, Buffer.from('"detail":"a'), Buffer.from(bad), Buffer.from('b"}')]);
      return {
        note: 'json, not UTF-8',
        contentType: 'application/json',
        body: '',
        bytes: [...bytes],
        view: jsonView(bytes),
      };
    });
  const wrongContentType = fc
    .tuple(
      fc.constantFrom(...WRONG_TYPES),
      fc.oneof(
        json.map((s) => s.body),
        encoded.map((s) => s.body),
        fc.constantFrom(...MULTIPART_GARBAGE),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      ),
    )
    // No type and no body is no wrong type: it is the 'no body' case below (a 422 naming the body).
    .filter(([type, text]) => type !== undefined || text !== '')
    .map(([type, text]): Submission => {
      const body = text.toWellFormed();
      const statuses = Buffer.byteLength(body) > BODY_LIMIT ? [413, 415] : [415];
      return {
        note: `wrong content type ${type}`,
        ...(type === undefined ? {} : { contentType: type }),
        body,
        view: { statuses },
      };
    });
  const nothing = fc.constant<Submission>({ note: 'no body', body: '', view: { parsed: undefined } });
  return fc.oneof(
    { weight: 12, arbitrary: json },
    { weight: 5, arbitrary: encoded },
    { weight: 1, arbitrary: notAnObject },
    { weight: 1, arbitrary: boundary },
    { weight: 1, arbitrary: huge },
    { weight: 2, arbitrary: malformed },
    { weight: 1, arbitrary: deep },
    { weight: 1, arbitrary: notUtf8 },
    { weight: 2, arbitrary: wrongContentType },
    { weight: 1, arbitrary: nothing },
  );
}

// ---------------------------------------------------------------- the cases

interface Slug {
  /** The path segment as sent (already percent-encoded where it should be). */
  path: string;
  /** The active form it names; null: none (404). */
  form: FormSpec | null;
  /** Not a well-formed slug: the router may answer 400 or 414 before the door does. */
  odd: boolean;
}

const MISSING_SLUGS = [
  CLOSED,
  'no-such-form',
  'Contact-Us',
  'CONTACT-US',
  'contact_us',
  'contact--us',
  '-contact-us',
  'contact-us-',
  'a'.repeat(61),
  'contact-us%20',
  '%20contact-us',
  'contact-us%0A',
  'contact-us%00',
  'contact-us%2F',
  '%F0%9F%98%80',
  'cont%C3%A4ct-us',
];
const ODD_SLUGS = [
  '%',
  '%zz',
  '%ED%A0%80',
  '%C0%AE',
  'a'.repeat(101),
  '.',
  '..',
  '%2e%2e',
  'contact-us;x',
  '%3F',
  '%23',
];

const slugArb: fc.Arbitrary<Slug> = fc.oneof(
  { weight: 16, arbitrary: fc.constant({ path: MAIN.slug, form: MAIN, odd: false }) },
  { weight: 5, arbitrary: fc.constant({ path: QUICK.slug, form: QUICK, odd: false }) },
  {
    // The same forms, written otherwise: percent-encoded letters, a trailing slash.
    weight: 1,
    arbitrary: fc.constantFrom<Slug>(
      { path: '%63ontact-us', form: MAIN, odd: false },
      { path: 'contact-us/', form: MAIN, odd: false },
      { path: 'quick%2Dnote', form: QUICK, odd: false },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(...MISSING_SLUGS).map((path) => ({ path, form: null, odd: false })) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(...ODD_SLUGS),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((s) => encodeURIComponent(s)),
      )
      .filter((path) => !FORMS.some((f) => f.slug === path))
      .map((path) => ({ path, form: null, odd: true })),
  },
);

/** Idempotency-Keys: none mostly, fresh ones, a small pool shared by cases, and unusable ones. */
const KEY_CHARS = [
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  'é',
  'ü',
  'ß',
  '\u00a0',
  '\u00ff',
];
const keyArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  {
    weight: 5,
    arbitrary: fc
      .string({ unit: fc.constantFrom(...KEY_CHARS), minLength: 1, maxLength: 48 })
      // As fetch sends a header: without spaces at either end.
      .map((k) => k.replace(/^[ \t]+|[ \t]+$/g, '')),
  },
  { weight: 1, arbitrary: fc.constantFrom('pool-1', 'pool-2', 'pool-3') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'k'.repeat(MAX_KEY),
      'k'.repeat(MAX_KEY + 1),
      'x'.repeat(1000),
      'café ünïcødé',
      'a b\tc',
      '"quoted"',
      '../../etc/passwd',
      '%00',
    ),
  },
);

interface Case {
  slug: Slug;
  submission: Submission;
  key?: string;
  accept?: string;
  origin?: string;
  /** From the burst address shared by cases, not one of its own. */
  shared: boolean;
  /** Send it again: same key, same body. */
  replay: boolean;
  /** Then the same key with another (valid) body. */
  reuse: boolean;
}

const rarely = <T>(value: fc.Arbitrary<T>, weight = 12) =>
  fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });

const caseArb: fc.Arbitrary<Case> = slugArb.chain((slug) =>
  fc
    .record({
      submission: submissionArb(slug.form ?? MAIN),
      key: keyArb,
      accept: rarely(fc.constantFrom('text/html,*/*', 'application/json', 'application/problem+json')),
      origin: rarely(fc.constantFrom('https://www.example.com', 'https://evil.example', 'null')),
      shared: fc.oneof({ weight: 20, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      replay: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      reuse: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    })
    .map(({ key, accept, origin, ...rest }) => ({
      slug,
      ...rest,
      ...(key === undefined ? {} : { key }),
      ...(accept === undefined ? {} : { accept }),
      ...(origin === undefined ? {} : { origin }),
    })),
);

// ---------------------------------------------------------------- the model

const present = (v: unknown) => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** Whether the inquiry takes this value for the field: text, no NUL, valid Unicode, within the length, the format. */
function acceptable(field: string, value: unknown): boolean {
  if (typeof value !== 'string' || value.includes('\u0000') || !value.isWellFormed()) return false;
  if ([...value].length > maxOf(field)) return false;
  return field !== 'email' || formats.email.parse(value).ok;
}

/** A key the door kept (a created inquiry's): what it was sent with, and the reference it answered. */
interface Kept {
  canon: string;
  reference: string;
}

type Outcome = 'stored' | 'dropped' | 'replayed';

interface Expectation {
  status: number;
  /** Other statuses that may come instead (the throttle; the router for an odd address); then nothing more. */
  also: number[];
  /** A 422 names exactly these fields. */
  named?: string[];
  code?: string;
  outcome?: Outcome;
  /** Stored: the new inquiry's fields of the form. */
  stored?: Record<string, unknown>;
  /** What decides whether a later body with the same key is the same (the form's fields sent). */
  canon?: string;
  /** Replayed: the reference the key was kept with. */
  reference?: string;
}

interface Request {
  slug: Slug;
  submission: Submission;
  key?: string;
  shared: boolean;
}

/** What the door answers (src/http/intake.tsx, src/resources/intake.ts, as CONTRACT.md says), in its order. */
function expectationOf(request: Request, kept: Map<string, Kept>): Expectation {
  const { slug, submission, key, shared } = request;
  if (slug.odd) return { status: 404, also: [400, 413, 414, 415, 422] };
  if ('statuses' in submission.view) return { status: submission.view.statuses[0]!, also: submission.view.statuses };
  // Too deep for the parser (400), or an array or an object of unknown fields, after the throttle.
  if ('deep' in submission.view)
    return { status: 400, also: [422, ...(slug.form ? [] : [404]), ...(shared ? [429] : [])] };
  if (key !== undefined && key.length > MAX_KEY) return { status: 422, also: [], named: ['idempotency-key'] };
  const form = slug.form;
  if (!form) return { status: 404, also: [], code: 'not_found' };
  const body = submission.view.parsed;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { status: 422, also: [], named: ['body'] };
  if (key === '') return { status: 422, also: [], named: ['Idempotency-Key'] };
  const value = (name: string) => (Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined);
  const refused = [
    ...Object.keys(body).filter((k) => k !== TRAP && k !== TOKEN && !form.fields.includes(k)),
    ...form.required.filter((f) => !present(value(f))),
  ];
  const input = form.fields.filter((f) => present(value(f))).map((f): [string, unknown] => [f, value(f)]);
  const canon = toJson(input);
  const earlier = key === undefined ? undefined : kept.get(`${form.slug}\n${key}`);
  if (earlier) {
    if (refused.length) return { status: 422, also: [], named: refused };
    if (earlier.canon === canon) return { status: 202, also: [], outcome: 'replayed', reference: earlier.reference };
    return { status: 422, also: [], code: 'idempotency_key_reused', named: ['Idempotency-Key'] };
  }
  const also = shared ? [429] : [];
  if (present(value(TRAP))) return { status: 202, also, outcome: 'dropped', canon };
  if (refused.length) return { status: 422, also, named: refused, canon };
  const invalid = input.filter(([f, v]) => !acceptable(f, v)).map(([f]) => f);
  if (invalid.length) return { status: 422, also, named: invalid, canon };
  if (!input.some(([f]) => NEEDS_ONE_OF.includes(f))) return { status: 422, also, named: NEEDS_ONE_OF, canon };
  const stored = Object.fromEntries(form.fields.map((f) => [f, present(value(f)) ? value(f) : null]));
  return { status: 202, also, outcome: 'stored', stored, canon };
}

// ---------------------------------------------------------------- the database

const COUNTED = ['inquiries', 'contacts', 'idempotency_keys', 'change_log', 'notifications'] as const;
type Counts = Record<(typeof COUNTED)[number], number> & { dropped: Record<string, number> };

/** One round trip: each counted table's rows, and each form's spam count (intake_form_drops, outside its record). */
async function countsOf(app: TestApp, formIds: Map<string, number>): Promise<Counts> {
  const dropped = (id: number) => sql`(select coalesce(sum(dropped), 0) from intake_form_drops where form_id = ${id})`;
  const parts = [
    ...COUNTED.map((t) => sql`(select count(*) from ${sql.table(t)}) as ${sql.id(t)}`),
    ...[...formIds].map(([slug, id]) => sql`${dropped(id)} as ${sql.id(slug)}`),
  ];
  const { rows } = await sql<Record<string, unknown>>`select ${sql.join(parts)}`.execute(app.database.db);
  const row = rows[0]!;
  return {
    ...(Object.fromEntries(COUNTED.map((t) => [t, Number(row[t])])) as Record<(typeof COUNTED)[number], number>),
    dropped: Object.fromEntries([...formIds.keys()].map((slug) => [slug, Number(row[slug])])),
  };
}

// ---------------------------------------------------------------- the run

const short = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

function describeRequest(path: string, submission: Submission, headers: Record<string, string>): string {
  const body = submission.bytes
    ? `bytes ${Buffer.from(submission.bytes).toString('hex')}`
    : JSON.stringify(short(submission.body));
  const sent = JSON.stringify(headers, (_k, v) => (typeof v === 'string' ? short(v, 80) : v));
  return `POST /api/v1/intake/${short(path, 120)} ${sent} body ${body} [${submission.note}]`;
}

for (const dialect of DIALECTS) {
  describe(`fuzzing the public intake door (${dialect})`, { timeout: TIME_LIMIT_MS + 120_000 }, () => {
    const SEED = seedFor();
    let app: TestApp;
    const formIds = new Map<string, number>();
    const sourceIds = new Map<string, number>();
    const serviceIds = new Map<string, number>();

    before(async () => {
      app = await startApp(dialect, { env: { LOG_LEVEL: 'warn', TRUST_PROXY: 'true' } });
      const agent = await teammate(app, 'agent', 'Ivy Intake');
      const service = await app.post('/api/v1/services', { name: 'Quick answers' });
      assert.equal(service.status, 201, service.text);
      for (const form of FORMS) {
        const source = await app.post('/api/v1/sources', { name: `From ${form.name}` });
        assert.equal(source.status, 201, source.text);
        sourceIds.set(form.slug, Number(source.body.data.id));
        if (form === QUICK) serviceIds.set(form.slug, Number(service.body.data.id));
        const made = await app.post('/api/v1/intake-forms', {
          name: form.name,
          slug: form.slug,
          fields: form.fields,
          required: form.required,
          source_id: sourceIds.get(form.slug),
          ...(form === QUICK ? { service_id: serviceIds.get(form.slug) } : {}),
          allowed_origins: ['https://www.example.com'],
        });
        assert.equal(made.status, 201, made.text);
        formIds.set(form.slug, Number(made.body.data.id));
      }
      const closed = await app.post('/api/v1/intake-forms', {
        name: 'Closed',
        slug: CLOSED,
        fields: ['email'],
        active: false,
      });
      assert.equal(closed.status, 201, closed.text);
      const rule = await app.post('/api/v1/assignment-rules', {
        name: 'Web leads',
        position: 1,
        match: { source_id: sourceIds.get(MAIN.slug) },
        users: [Number(agent.id)],
        respond_within_minutes: 60,
      });
      assert.equal(rule.status, 201, rule.text);
    });
    after(() => app?.close());

    test(`${RUNS} generated submissions: no 5xx, problem+json errors, nothing stored when refused or dropped`, {
      timeout: TIME_LIMIT_MS + 60_000,
    }, async (t) => {
      const kept = new Map<string, Kept>();
      const droppedAnswers = new Map<string, number>(FORMS.map((f) => [f.slug, 0]));
      let addresses = 0;
      let reuses = 0;
      let storedCases = 0;
      let counted: Counts | undefined;
      let finished = false;
      const seen = {
        cases: 0,
        byStatus: new Map<number, number>(),
        outcomes: new Map<string, number>(),
        codes: new Map<string, number>(),
      };
      const tally = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
      const { db } = app.database;

      /** Sends one request, and holds its answer and the database to the model. */
      const exchange = async (c: Case, submission: Submission, address: string, step: string) => {
        const request: Request = {
          slug: c.slug,
          submission,
          shared: c.shared,
          ...(c.key === undefined ? {} : { key: c.key }),
        };
        const expected = expectationOf(request, kept);
        const headers: Record<string, string> = { 'x-forwarded-for': address };
        if (submission.contentType !== undefined) headers['content-type'] = submission.contentType;
        if (c.key !== undefined) headers['idempotency-key'] = c.key;
        if (c.accept !== undefined) headers.accept = c.accept;
        if (c.origin !== undefined) headers.origin = c.origin;
        // The counts after the last request are the counts before this one (nothing else writes these tables).
        const before = counted ?? (await countsOf(app, formIds));
        counted = undefined;
        const reply: Reply = await app.request('POST', `/api/v1/intake/${c.slug.path}`, {
          body: submission.bytes ? Buffer.from(submission.bytes) : Buffer.from(submission.body, 'utf8'),
          headers,
          token: null,
        });
        const afterwards = await countsOf(app, formIds);
        counted = afterwards;
        // The door kept the key (whatever the checks below find): later requests with it are held to it.
        const form = c.slug.form;
        let keptReference: string | undefined;
        if (form && c.key !== undefined && afterwards.idempotency_keys > before.idempotency_keys) {
          const row = await db
            .selectFrom('idempotency_keys')
            .select('reference')
            .where('scope', '=', `intake:${form.slug}`)
            .where('key', '=', c.key)
            .executeTakeFirst();
          keptReference = row?.reference;
          if (row) kept.set(`${form.slug}\n${c.key}`, { canon: expected.canon ?? '', reference: row.reference });
        }
        tally(seen.byStatus, reply.status);
        const sent = describeRequest(c.slug.path, submission, headers);
        const what = `${step}: ${sent}\n→ ${reply.status} ${short(reply.text)}`;

        // 1. No 5xx; every error is a problem whose status is the HTTP status.
        if (reply.status >= 500) {
          const logged = app.logs.filter((l) => /"level":50/.test(l)).at(-1) ?? '';
          const stored = JSON.stringify(afterwards) === JSON.stringify(before) ? 'nothing stored' : 'rows changed';
          assert.fail(`a ${reply.status} (${stored}): ${what}\nlogged: ${short(logged, 1200)}`);
        }
        let problem: { status?: unknown; code?: unknown; errors?: Record<string, unknown> } | undefined;
        if (reply.status >= 400) {
          assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json\b/, what);
          problem = JSON.parse(reply.text);
          assert.equal(problem?.status, reply.status, `the problem's status is the HTTP status: ${what}`);
          assert.ok(typeof problem?.code === 'string' && problem.code !== '', `the problem has a code: ${what}`);
          tally(seen.codes, String(problem?.code));
          if (reply.status === 429) assert.ok(Number(reply.headers.get('retry-after')) > 0, `Retry-After: ${what}`);
        }

        // The answer the model expects, naming what it refuses.
        assert.ok(
          reply.status === expected.status || expected.also.includes(reply.status),
          `expected ${[expected.status, ...expected.also].join(' or ')}: ${what}`,
        );
        const asExpected = reply.status === expected.status;
        if (asExpected && expected.code) assert.equal(problem?.code, expected.code, what);
        if (asExpected && expected.named)
          assert.deepEqual(
            Object.keys(problem?.errors ?? {}).sort(),
            [...new Set(expected.named)].sort(),
            `the problem names the refused fields: ${what}`,
          );

        // 2. Nothing stored for a refused or dropped submission; an accepted one is one inquiry holding what was sent.
        const outcome = asExpected ? expected.outcome : undefined;
        const slug = form?.slug ?? '';
        if (reply.status !== 202 || outcome === 'replayed') {
          assert.deepEqual(afterwards, before, `nothing stored, nothing counted: ${what}`);
        } else if (outcome === 'dropped') {
          assert.deepEqual(
            afterwards,
            { ...before, dropped: { ...before.dropped, [slug]: before.dropped[slug]! + 1 } },
            `a dropped submission stores nothing and is counted on its form: ${what}`,
          );
          tally(droppedAnswers, slug);
        } else {
          assert.equal(outcome, 'stored', what);
          assert.ok(form, what);
          const grew = (table: (typeof COUNTED)[number]) => afterwards[table] - before[table];
          assert.equal(grew('inquiries'), 1, `one inquiry: ${what}`);
          assert.ok(grew('contacts') === 0 || grew('contacts') === 1, `a contact at most: ${what}`);
          assert.equal(grew('idempotency_keys'), c.key === undefined ? 0 : 1, `its key kept: ${what}`);
          assert.ok(grew('change_log') >= 1, `its creation logged: ${what}`);
          assert.ok(grew('notifications') >= 0, what);
          assert.deepEqual(afterwards.dropped, before.dropped, what);
          const row = (await db
            .selectFrom('inquiries')
            .selectAll()
            .orderBy('id', 'desc')
            .limit(1)
            .executeTakeFirstOrThrow()) as Record<string, unknown>;
          const storedFields = Object.fromEntries(form.fields.map((f) => [f, row[f] ?? null]));
          assert.deepEqual(storedFields, expected.stored, `the inquiry holds what was sent: ${what}`);
          assert.equal(Number(row.source_id), sourceIds.get(form.slug), `the form's source: ${what}`);
          assert.equal(row.service_id === null ? null : Number(row.service_id), serviceIds.get(form.slug) ?? null);
          assert.equal(row.created_by, null, `made by nobody signed in: ${what}`);
          // As the API serves it, too (one in ten: a read costs as much as the submission).
          if (++storedCases % 10 === 1) {
            const served = await app.get(`/api/v1/inquiries/${row.id}`);
            assert.equal(served.status, 200, served.text);
            for (const f of form.fields) assert.equal(served.body.data[f], expected.stored![f], `served ${f}: ${what}`);
          }
          if (c.key !== undefined) {
            assert.ok(keptReference, `the key is kept for this form: ${what}`);
            if (reply.body?.reference !== undefined) assert.equal(reply.body.reference, keptReference, what);
          }
        }
        if (reply.status === 202 && /json/.test(reply.headers.get('content-type') ?? '')) {
          assert.match(String(reply.body?.reference), /^[\w-]{8,}$/, what);
          if (outcome === 'replayed')
            assert.equal(reply.body.reference, expected.reference, `the kept reference: ${what}`);
        }
        tally(seen.outcomes, reply.status === 202 ? (outcome ?? 'accepted?') : 'refused');
        return { reply, outcome, what };
      };

      const property = fc.asyncProperty(caseArb, async (c) => {
        seen.cases++;
        // After a failed case (shrinking), count afresh: its request may have written after the last count.
        if (!finished) counted = undefined;
        finished = false;
        const n = ++addresses;
        const address = c.shared ? SHARED_ADDRESS : `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        const first = await exchange(c, c.submission, address, 'first');
        if (c.replay && c.key !== undefined) {
          // 3. A replay is answered as the first was, and stores nothing new.
          const again = await exchange(c, c.submission, address, 'replay');
          if (!c.shared || first.outcome === 'stored') {
            const both = `first ${first.what}\nreplay → ${again.reply.status} ${short(again.reply.text)}`;
            assert.equal(again.reply.status, first.reply.status, `a replay gets the first answer's status: ${both}`);
            assert.equal(again.reply.text, first.reply.text, `a replay gets the first answer's body: ${both}`);
            if (first.outcome === 'stored') assert.equal(again.outcome, 'replayed', both);
          }
        }
        if (c.reuse && c.key !== undefined) {
          const marker = `reuse ${++reuses}`;
          const other = (c.slug.form ?? MAIN) === MAIN ? { email: `reuse${reuses}@example.org` } : { name: marker };
          await exchange(c, jsonBody('the key again, another body', { ...other, detail: marker }), address, 'reuse');
        }
        finished = true;
      });

      const started = Date.now();
      t.diagnostic(`LEADBOOK_TEST_DIALECTS=${dialect} LEADBOOK_FUZZ_SEED=${SEED}; ${RUNS} cases`);
      await fc.assert(property, {
        numRuns: RUNS,
        seed: SEED,
        ...(PATH ? { path: PATH } : {}),
        includeErrorInReport: true,
        plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS, { failOnInterrupt: true })],
      });
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const list = <K>(map: Map<K, number>) =>
        [...map]
          .sort(([a], [b]) => String(a).localeCompare(String(b)))
          .map(([k, v]) => `${k}×${v}`)
          .join(' ');
      t.diagnostic(`${seen.cases} cases in ${seconds} s: ${list(seen.byStatus)}; ${list(seen.outcomes)}`);
      t.diagnostic(`problems: ${list(seen.codes)}`);

      // The dropped submissions were counted on their forms, as an admin reads them (the settings page).
      const settings = (await (await pageSignIn(app, app.admin)).get('/settings')).text;
      for (const form of FORMS) {
        const shown = new RegExp(`${form.name}[\\s\\S]*?(\\d+) dropped as spam`).exec(settings)?.[1];
        assert.equal(Number(shown), droppedAnswers.get(form.slug), `${form.slug}'s dropped count on the settings page`);
      }
      // The generators reached every part of the door (so the checks above did check something).
      if (!PATH && RUNS >= 1000) {
        assert.ok(seen.cases >= RUNS, `${seen.cases} of ${RUNS} cases ran`);
        for (const status of [202, 400, 404, 413, 415, 422, 429])
          assert.ok(seen.byStatus.has(status), `some answers were ${status} (${list(seen.byStatus)})`);
        for (const code of ['malformed_json', 'payload_too_large', 'unsupported_media_type', 'idempotency_key_reused'])
          assert.ok(seen.codes.has(code), `some answers were ${code} (${list(seen.codes)})`);
        for (const outcome of ['stored', 'dropped', 'replayed'])
          assert.ok(seen.outcomes.has(outcome), `some submissions were ${outcome} (${list(seen.outcomes)})`);
        assert.ok((seen.outcomes.get('stored') ?? 0) > RUNS / 10, `many were stored (${list(seen.outcomes)})`);
      }
    });
  });
}
