// Boundary tests of every writable field, generated from the resource
// declarations: a field is tested the day it is declared, by its kind. Each
// case goes through the real app over HTTP, on each dialect.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recordResources, resources } from '../src/resources/index.ts';
import { formats } from '../src/schema/formats.ts';
import type { KindName } from '../src/schema/kinds.ts';
import type { Field, Resource } from '../src/schema/resource.ts';
import { startApp, type Reply, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';

type Row = Record<string, Json>;

/** A value the field accepts and what the API answers for it. */
interface Accepted {
  value: unknown;
  expect: unknown;
  label?: string;
}

/** A value the field refuses with a 422 naming it. */
interface Rejected {
  value: unknown;
  label?: string;
}

interface KindCases {
  accepted(field: Field): Accepted[];
  rejected(field: Field): Rejected[];
  /** Two distinct valid values, for records the cases start from. */
  samples: [unknown, unknown];
  /** Compares an answered value with the expected one (and checks its JSON type). */
  same(actual: unknown, expected: unknown): boolean;
}

const strictlyEqual = (a: unknown, b: unknown) => a === b;

/** A string of `n` code points ending with an astral emoji (two UTF-16 units). */
const endingInEmoji = (n: number, fill = 'a') => `${fill.repeat(n - 1)}😀`;

const exactInteger = (actual: unknown, expected: unknown) =>
  (typeof actual === 'number' || typeof actual === 'bigint') && BigInt(actual) === BigInt(expected as bigint);

// One entry per kind: a kind without cases does not compile, so a new kind
// cannot be declared without its boundary tests.
const KIND_CASES: Record<KindName, KindCases> = {
  string: textCases(),
  text: textCases(),
  integer: {
    accepted: (f) =>
      f.min === undefined
        ? [
            { value: -2147483648, expect: -2147483648 },
            { value: 2147483647, expect: 2147483647 },
            { value: 0, expect: 0 },
          ]
        : [
            { value: f.min, expect: f.min, label: `${f.min}, the smallest` },
            { value: 2147483647, expect: 2147483647 },
          ],
    rejected: (f) => [
      ...(f.min === undefined ? [] : [{ value: f.min - 1, label: `${f.min - 1}, under the smallest` }]),
      { value: -2147483649 },
      { value: 2147483648 },
      { value: 2n ** 63n, label: '2^63' },
      { value: 1.5 },
      { value: '12' },
      { value: true },
      { value: 'abc' },
      { value: [1] },
      { value: { n: 1 } },
    ],
    samples: [1, 2],
    same: (a, e) => (e === null ? a === null : typeof a === 'number' && a === e),
  },
  bigInteger: {
    accepted: () => [
      { value: 9007199254740993n, expect: 9007199254740993n, label: '9007199254740993 (a JSON number)' },
      { value: '9007199254740993', expect: 9007199254740993n, label: '"9007199254740993" (digits)' },
      { value: 9223372036854775807n, expect: 9223372036854775807n },
      { value: -9223372036854775808n, expect: -9223372036854775808n },
      { value: '-9223372036854775808', expect: -9223372036854775808n, label: '"-9223372036854775808" (digits)' },
      { value: 42, expect: 42n },
    ],
    rejected: () => [
      { value: 9223372036854775808n },
      { value: -9223372036854775809n },
      { value: '9223372036854775808', label: '"9223372036854775808" (digits)' },
      { value: 1.5 },
      { value: '12a' },
      { value: '' },
      { value: ' 12' },
      { value: '1.5' },
      { value: true },
      { value: [1] },
    ],
    samples: [1n, 2n],
    same: (a, e) => (e === null ? a === null : exactInteger(a, e)),
  },
  dateTime: {
    accepted: () => [
      { value: '2026-11-22', expect: '2026-11-22T00:00:00.000Z' },
      { value: '2026-11-22T10:30:00+02:00', expect: '2026-11-22T08:30:00.000Z' },
      { value: '2026-11-22T10:30:00.123456Z', expect: '2026-11-22T10:30:00.123Z' },
      { value: '2026-11-22T01:30:00-05:30', expect: '2026-11-22T07:00:00.000Z' },
      { value: '2024-02-29', expect: '2024-02-29T00:00:00.000Z' },
    ],
    rejected: () => [
      { value: '2026-02-30' },
      { value: '2025-02-29' },
      { value: '2026-13-01' },
      { value: '2026-00-10' },
      { value: 'yesterday' },
      { value: '22/11/2026' },
      { value: '2026-11-22T24:00:00Z' },
      { value: '2026-11-22T10:30:00' },
      { value: '' },
      { value: 1700000000 },
      { value: true },
    ],
    samples: ['2026-01-01', '2026-01-02'],
    same: strictlyEqual,
  },
  boolean: {
    accepted: () => [
      { value: true, expect: true },
      { value: false, expect: false },
    ],
    rejected: () => [
      { value: 'true' },
      { value: 'false' },
      { value: 1 },
      { value: 0 },
      { value: 'yes' },
      { value: 'on' },
      { value: [true] },
    ],
    samples: [true, false],
    same: strictlyEqual,
  },
  // Ids of records that exist (#1 and #2: see referenceCases), or texts; each item once.
  list: {
    accepted: (f) =>
      f.listOf
        ? [
            { value: [1], expect: [1] },
            { value: [2, 1, 2], expect: [2, 1], label: 'an id twice: kept once' },
            ...(f.required ? [] : [{ value: [], expect: [] }]),
          ]
        : [
            {
              value: [f.choices?.[0] ?? (f.format ? formats[f.format].samples.valid[0] : 'a')],
              expect: [f.choices?.[0] ?? (f.format ? formats[f.format].samples.valid[0] : 'a')],
            },
            ...(f.required ? [] : [{ value: [], expect: [] }]),
          ],
    rejected: (f) => [
      { value: 'a', label: 'a string' },
      { value: { a: 1 }, label: 'an object' },
      { value: Array.from({ length: 101 }, (_, i) => (f.listOf ? 1 : `x${i}`)), label: '101 items' },
      ...(f.listOf
        ? [
            { value: [0], label: 'id 0' },
            { value: ['x'], label: 'a word' },
            { value: [2147483647], label: 'names no record' },
          ]
        : [
            { value: [''], label: 'an empty item' },
            { value: [42], label: 'a number' },
          ]),
    ],
    samples: [[], []],
    same: (a, e) => JSON.stringify(a) === JSON.stringify(e),
  },
  // Named values: only the declared keys.
  map: {
    accepted: (f) => [
      { value: {}, expect: {} },
      { value: { [f.choices![0]!]: 'Zoë' }, expect: { [f.choices![0]!]: 'Zoë' } },
    ],
    rejected: (f) => [
      { value: 'a', label: 'a string' },
      { value: ['a'], label: 'a list' },
      { value: { nope: 'x' }, label: 'a key it does not know' },
      { value: { [f.choices![0]!]: 'x'.repeat(f.max! + 1) }, label: `a value of ${f.max! + 1} characters` },
    ],
    samples: [{}, {}],
    same: (a, e) => JSON.stringify(a) === JSON.stringify(e),
  },
  // Write-only: accepted values are never answered, so "the same" means absent.
  password: {
    accepted: (f) => [
      { value: 'correct horse battery staple', expect: undefined },
      { value: ' padded passphrase ', expect: undefined, label: 'spaces kept, not trimmed' },
      { value: `${'x'.repeat(f.max! - 1)}😀`, expect: undefined, label: `${f.max} code points` },
    ],
    rejected: (f) => [
      { value: 'short1!', label: '7 characters' },
      { value: `${'x'.repeat(f.max!)}😀`, label: `${f.max! + 1} code points` },
      { value: 'password', label: 'a common password' },
      { value: 'Qwerty123', label: 'a common password, any case' },
      { value: 42, label: 'a number' },
    ],
    samples: ['first sample passphrase', 'second sample passphrase'],
    same: (a) => a === undefined,
  },
};

function textCases(): KindCases {
  const plain = textOnlyCases();
  return {
    ...plain,
    accepted: (f) => {
      if (f.choices) return f.choices.map((c) => ({ value: c, expect: c }));
      if (f.unique && !f.format) {
        // Unique per call (a name of a stage, a source): the same value may not be used twice, in any case.
        const n = String(++uniqueCounter);
        const longest = `${n}${endingInEmoji(f.max! - n.length)}`;
        const emoji = String.fromCodePoint(0x1f600 + (uniqueCounter % 64)).repeat(f.max!);
        const accented = `Zoë Ñúñez — 東京 ✓ ${n}`;
        return [
          { value: longest, expect: longest, label: `${f.max} code points ending in an emoji` },
          { value: emoji, expect: emoji, label: `${f.max} emoji` },
          { value: accented, expect: accented },
        ];
      }
      if (f.format && f.format !== 'email' && formats[f.format].samples.invalid.length) {
        // Unique per call where the field is unique (a form's slug): each valid sample once.
        const n = f.unique ? String(++uniqueCounter) : '';
        return formats[f.format].samples.valid.map((v) => ({ value: `${v}${n}`, expect: `${v}${n}` }));
      }
      if (f.format === 'email') {
        // Unique per call: the same address may not be used twice.
        const n = String(++uniqueCounter);
        const longest = `${n}${'a'.repeat(f.max! - '@example.com'.length - n.length)}@example.com`;
        const tagged = `first.last+${n}@example.co.uk`;
        return [
          { value: longest, expect: longest, label: `${f.max} characters` },
          { value: tagged, expect: tagged },
        ];
      }
      return plain.accepted(f);
    },
    rejected: (f) => [
      ...textRejected(f),
      ...(f.required
        ? [
            { value: '', label: 'empty, on a required field' },
            { value: '  ', label: 'only blanks, on a required field' },
          ]
        : []),
    ],
    samples: ['first', 'second'],
  };

  function textRejected(f: Field): Rejected[] {
    if (f.choices) return [{ value: 'someone-else' }, { value: f.choices[0]!.toUpperCase() }, { value: 42 }];
    if (f.format && f.format !== 'email' && formats[f.format].samples.invalid.length) {
      return [...formats[f.format].samples.invalid.map((v) => ({ value: v })), { value: 42, label: 'a number' }];
    }
    if (f.format === 'email') {
      return [
        { value: `${'a'.repeat(f.max! - '@example.com'.length + 1)}@example.com`, label: `${f.max! + 1} characters` },
        { value: 'not-an-email' },
        { value: 'a@b@c.com' },
        { value: 'a b@example.com' },
        { value: 42 },
      ];
    }
    return plain.rejected(f);
  }
}

function textOnlyCases(): KindCases {
  return {
    accepted: (f) => [
      { value: endingInEmoji(f.max!), expect: endingInEmoji(f.max!), label: `${f.max} code points ending in an emoji` },
      { value: '😀'.repeat(f.max!), expect: '😀'.repeat(f.max!), label: `${f.max} emoji` },
      { value: 'Zoë Ñúñez — 東京 ✓', expect: 'Zoë Ñúñez — 東京 ✓' },
    ],
    rejected: (f) => [
      { value: endingInEmoji(f.max! + 1), label: `${f.max! + 1} code points ending in an emoji` },
      { value: '😀'.repeat(f.max! + 1), label: `${f.max! + 1} emoji` },
      { value: 42, label: 'a number' },
      { value: true, label: 'a boolean' },
      { value: ['a'], label: 'an array' },
      { value: 'a\u0000b', label: 'a NUL character' },
      { value: '\ud800', label: 'a lone high surrogate' },
      { value: 'x\udc00y', label: 'a lone low surrogate' },
      { value: 'abc\ud83d', label: 'a trailing high surrogate' },
    ],
    samples: ['first', 'second'],
    same: strictlyEqual,
  };
}

function show(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string' && value.length > 40)
    return `"${value.slice(0, 12)}…" (${[...value].length} code points)`;
  return JSON.stringify(value) ?? String(value);
}

let uniqueCounter = 0;

/** A valid value of the field: sample 0 or 1 of its kind, unique where the field must be. */
function sampleOf(field: Field, i: 0 | 1): unknown {
  if (field.kind.name === 'list')
    return field.listOf
      ? [i + 1]
      : [field.choices?.[i] ?? (field.format ? formats[field.format].samples.valid[i] : `item ${i}`)];
  if (field.choices && field.kind.textual) return field.choices[Math.min(i, field.choices.length - 1)];
  if (field.format === 'email') return `sample${++uniqueCounter}.${i}@example.com`;
  if (field.unique && field.kind.textual && !field.format) return `${casesOf(field).samples[i]} ${++uniqueCounter}`;
  if (field.unique && field.format) return formats[field.format].tagged(`u${++uniqueCounter}x${i}`);
  if (field.format && formats[field.format].samples.invalid.length) return formats[field.format].samples.valid[i];
  return casesOf(field).samples[i];
}

/**
 * A reference takes the ids of records that exist (#1 and #2 of every resource a reference names: the first admin and
 * user #2, contacts, sources and services made before the tests, the default stages New and Contacted) and refuses,
 * besides what its kind refuses, an id that names no record.
 */
const referenceCases = (kind: KindCases): KindCases => ({
  ...kind,
  accepted: () => [
    { value: 1, expect: 1 },
    { value: 2, expect: 2 },
  ],
  rejected: (f) => [...kind.rejected(f), { value: 2147483647, label: 'names no record' }],
  samples: [1, 2],
});

const casesOf = (field: Field): KindCases => {
  const kind = KIND_CASES[field.kind.name];
  const cases = kind && field.target ? referenceCases(kind) : kind;
  assert.ok(cases, `no boundary cases for kind ${field.kind.name} (field ${field.name})`);
  return cases;
};

/** The smallest valid body: a sample for each required field, and for each of a "needs one of" rule (so any one may be tested alone, null included). */
function baseBody(resource: Resource): Row {
  const body: Row = {};
  for (const f of resource.writable) if (f.required || resource.needsOneOf.includes(f)) body[f.name] = sampleOf(f, 0);
  return body;
}

/**
 * Fields the server fills in when a new record leaves them empty (CONTRACT.md, "Inquiries, contacts and the
 * pipeline"): an inquiry's contact (matched or made) and its stage (the first open one). Null is theirs on a create,
 * and stays null on a PATCH.
 */
const FILLED_WHEN_EMPTY = new Set(['inquiries.contact_id', 'inquiries.stage_id']);

function assertRejected(reply: Reply, fields: string[], what: string): void {
  assert.equal(reply.status, 422, `${what}: status (body ${reply.text.slice(0, 300)})`);
  assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json\b/, `${what}: content-type`);
  assert.equal(reply.body?.code, 'validation_failed', `${what}: code`);
  for (const name of fields) {
    const messages = Object.hasOwn(reply.body.errors ?? {}, name) ? reply.body.errors[name] : undefined;
    assert.ok(
      Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string' && m !== ''),
      `${what}: errors names ${name} (got ${reply.text.slice(0, 300)})`,
    );
  }
}

for (const dialect of DIALECTS) {
  describe(`records validation (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
      // User #2, for the references' accepted ids (#1 is the first admin).
      const second = await app.post('/api/v1/users', {
        name: 'Second',
        email: 'second@example.com',
        password: 'a long enough passphrase 42',
      });
      assert.equal(second.body.data?.id, 2, second.text);
      // #1 and #2 of the other resources references name (the stages are there from the start).
      for (const [resource, names] of [
        ['contacts', ['First contact', 'Second contact']],
        ['sources', ['First source', 'Second source']],
        ['services', ['First service', 'Second service']],
      ] as const)
        for (const [i, name] of names.entries()) {
          const made = await app.post(`/api/v1/${resource}`, { name });
          assert.equal(String(made.body.data?.id), String(i + 1), made.text);
        }
      const stages = (await app.get('/api/v1/stages?sort=id&per_page=2')).body.data as Row[];
      assert.deepEqual(
        stages.map((s) => String(s.id)),
        ['1', '2'],
      );
    });
    after(() => app.close());

    const total = async (resource: Resource): Promise<number> => {
      const reply = await app.get(`/api/v1/${resource.name}?per_page=1`);
      assert.equal(reply.status, 200, reply.text);
      return Number(reply.body.meta.total);
    };

    const create = async (resource: Resource, values: Row, what: string): Promise<Reply> => {
      const reply = await app.post(`/api/v1/${resource.name}`, { ...baseBody(resource), ...values });
      assert.equal(reply.status, 201, `${what}: create status (body ${reply.text.slice(0, 300)})`);
      return reply;
    };

    const read = async (resource: Resource, id: unknown): Promise<Reply> => {
      const reply = await app.get(`/api/v1/${resource.name}/${String(id)}`);
      assert.equal(reply.status, 200, reply.text);
      return reply;
    };

    for (const resource of recordResources) {
      describe(resource.name, () => {
        const path = `/api/v1/${resource.name}`;

        test('every writable field has boundary cases for its kind', () => {
          assert.ok(resource.writable.length > 0);
          for (const f of resource.writable) casesOf(f);
        });

        for (const field of resource.writable) {
          const cases = casesOf(field);
          const what = (value: unknown, how: string) => `${resource.name}.${field.name} = ${show(value)} (${how})`;
          // Another writable field, changed together with a bad value to show a rejected PATCH writes nothing.
          const companion =
            resource.writable.find((f) => f !== field && !f.required) ?? resource.writable.find((f) => f !== field)!;
          const start = sampleOf(field, 0);

          const title = `${field.name} (${field.kind.name}${field.max !== undefined ? `, max ${field.max}` : ''}${field.nullable ? ', nullable' : ''})`;
          test(title, async () => {
            const accepted = [...cases.accepted(field)];
            const rejected = [...cases.rejected(field)];
            if (field.nullable) accepted.push({ value: null, expect: null });
            else rejected.push({ value: null });

            const checkAnswer = (reply: Reply, expected: unknown, label: string) => {
              const actual = reply.body?.data?.[field.name];
              assert.ok(cases.same(actual, expected), `${label}: answered ${show(actual)}, expected ${show(expected)}`);
              // 64-bit values are written exactly in the JSON text, as numbers.
              if (typeof expected === 'bigint') {
                assert.ok(
                  reply.text.includes(`"${field.name}":${expected}`),
                  `${label}: raw JSON has ${field.name}:${expected} (got ${reply.text.slice(0, 400)})`,
                );
              }
            };

            // Accepted on create, answered and read back identical.
            const filled = FILLED_WHEN_EMPTY.has(`${resource.name}.${field.name}`);
            for (const { value, expect, label } of accepted) {
              const w = what(value, `create${label ? `, ${label}` : ''}`);
              const created = await create(resource, { [field.name]: value }, w);
              if (value === null && filled) {
                const given = created.body.data[field.name];
                assert.ok(given !== null && cases.same(given, given), `${w}: the server fills it in (${show(given)})`);
                continue;
              }
              checkAnswer(created, expect, w);
              checkAnswer(await read(resource, created.body.data.id), expect, `${w}, read back`);
            }

            // Accepted on PATCH, from a different value, and read back identical.
            // A unique field needs values no record holds yet.
            const acceptedAgain = field.unique ? [...cases.accepted(field)] : accepted;
            for (const { value, expect, label } of acceptedAgain) {
              const w = what(value, `patch${label ? `, ${label}` : ''}`);
              const created = await create(resource, { [field.name]: start }, w);
              const id = created.body.data.id;
              const patched = await app.patch(`${path}/${String(id)}`, { [field.name]: value });
              assert.equal(patched.status, 200, `${w}: status (body ${patched.text.slice(0, 300)})`);
              checkAnswer(patched, expect, w);
              checkAnswer(await read(resource, id), expect, `${w}, read back`);
            }

            // Refused on create, writing nothing.
            const countBefore = await total(resource);
            for (const { value, label } of rejected) {
              const w = what(value, `create${label ? `, ${label}` : ''}`);
              assertRejected(await app.post(path, { ...baseBody(resource), [field.name]: value }), [field.name], w);
            }
            assert.equal(
              await total(resource),
              countBefore,
              `${resource.name}.${field.name}: rejected creates left the count unchanged`,
            );

            // Refused on PATCH together with a valid change of another field, which is not written either.
            const target = await create(
              resource,
              { [field.name]: start, [companion.name]: sampleOf(companion, 0) },
              `${resource.name}.${field.name}: patch target`,
            );
            const id = target.body.data.id;
            const readBefore = await read(resource, id);
            for (const { value, label } of rejected) {
              const w = what(value, `patch with ${companion.name}${label ? `, ${label}` : ''}`);
              const reply = await app.patch(`${path}/${String(id)}`, {
                [companion.name]: sampleOf(companion, 1),
                [field.name]: value,
              });
              assertRejected(reply, [field.name], w);
              assert.ok(
                !Object.hasOwn(reply.body.errors, companion.name),
                `${w}: the valid ${companion.name} is not named`,
              );
            }
            const readAfter = await read(resource, id);
            assert.deepEqual(
              readAfter.body,
              readBefore.body,
              `${resource.name}.${field.name}: rejected patches left the record unchanged`,
            );
            assert.equal(
              readAfter.headers.get('etag'),
              readBefore.headers.get('etag'),
              `${resource.name}.${field.name}: ETag unchanged`,
            );
            assert.equal(
              await total(resource),
              countBefore + 1,
              `${resource.name}.${field.name}: rejected patches created nothing`,
            );
          });
        }

        if (resource.writable.some((f) => f.kind.name === 'boolean')) {
          test('booleans take all three states in turn on one record (true → null → false → null → true); one that may not be empty, two', async () => {
            for (const field of resource.writable.filter((f) => f.kind.name === 'boolean')) {
              const created = await create(resource, { [field.name]: true }, `${field.name} = true`);
              const id = created.body.data.id;
              if (!field.nullable) {
                const refused = await app.patch(`${path}/${String(id)}`, { [field.name]: null });
                assert.equal(refused.status, 422, `${field.name} → null: ${refused.text}`);
                assert.ok(refused.body.errors[field.name], 'names the field');
              }
              for (const value of field.nullable ? [null, false, null, true] : [false, true]) {
                const reply = await app.patch(`${path}/${String(id)}`, { [field.name]: value });
                assert.equal(reply.status, 200, `${field.name} → ${show(value)}: ${reply.text}`);
                assert.equal(reply.body.data[field.name], value, `${field.name} → ${show(value)}`);
                assert.equal(
                  (await read(resource, id)).body.data[field.name],
                  value,
                  `${field.name} → ${show(value)}, read back`,
                );
              }
            }
          });
        }

        test('unknown fields are refused, naming each of them, and nothing is written', async () => {
          const countBefore = await total(resource);
          const valid = resource.writable[0]!;
          const validValue = sampleOf(valid, 0);

          assertRejected(
            await app.post(path, { ...baseBody(resource), [valid.name]: validValue, nmae: 'x' }),
            ['nmae'],
            'create with nmae',
          );

          // Prototype names must be plain keys, written as raw JSON so no JS object literal eats them.
          const tricky = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype'];
          const raw = `{${[...tricky.map((n) => `"${n}": "x"`), `"${valid.name}": ${JSON.stringify(toPlain(validValue))}`].join(', ')}}`;
          const tricked = await app.request('POST', path, {
            body: raw,
            headers: { 'content-type': 'application/json' },
          });
          assertRejected(tricked, tricky, 'create with prototype names');
          // The names of other resources' fields are unknown here.
          const foreign = [...new Set(resources.flatMap((r) => r.fields.map((f) => f.name)))].filter(
            (n) => !resource.field(n),
          );
          if (foreign.length) {
            const body = Object.fromEntries(foreign.map((n) => [n, 'x']));
            assertRejected(
              await app.post(path, { ...baseBody(resource), ...body }),
              foreign,
              `create with ${foreign.join(', ')}`,
            );
          }
          assert.equal(await total(resource), countBefore, 'rejected creates left the count unchanged');

          const target = await create(resource, { [valid.name]: validValue }, 'patch target');
          const id = target.body.data.id;
          const readBefore = await read(resource, id);
          const otherValue = sampleOf(valid, 1);
          assertRejected(
            await app.patch(`${path}/${String(id)}`, { [valid.name]: otherValue, nmae: 'x' }),
            ['nmae'],
            'patch with nmae',
          );
          const rawPatch = `{"${valid.name}": ${JSON.stringify(toPlain(otherValue))}, "__proto__": {"${valid.name}": "polluted"}, "constructor": "x"}`;
          assertRejected(
            await app.request('PATCH', `${path}/${String(id)}`, {
              body: rawPatch,
              headers: { 'content-type': 'application/json' },
            }),
            ['__proto__', 'constructor'],
            'patch with prototype names',
          );
          const readAfter = await read(resource, id);
          assert.deepEqual(readAfter.body, readBefore.body, 'rejected patches left the record unchanged');
          assert.equal(({} as Row)[valid.name], undefined, 'Object.prototype is not polluted');
        });

        test('read-only fields sent in a write are ignored and the server values kept', async () => {
          const readOnly = resource.fields.filter((f) => f.readOnly);
          assert.ok(readOnly.length > 0);
          const valid = resource.writable[0]!;
          const [first, second] = [sampleOf(valid, 0), sampleOf(valid, 1)];
          const sentId = 987654321n;
          const sentTime = '2001-02-03T04:05:06.000Z';
          const forged = () =>
            Object.fromEntries(readOnly.map((f) => [f.name, f.kind.name === 'dateTime' ? sentTime : sentId]));

          const startedAt = Date.now();
          const created = await create(resource, { ...forged(), [valid.name]: first }, 'create with read-only fields');
          const record = created.body.data;
          for (const f of readOnly) {
            assert.notEqual(
              String(record[f.name]),
              String(forged()[f.name]),
              `create: ${f.name} is the server's, not the sent value`,
            );
            if (f.kind.name === 'dateTime' && f.timestamp) {
              const t = Date.parse(record[f.name]);
              assert.ok(Math.abs(t - startedAt) < 60_000, `create: ${f.name} (${record[f.name]}) is about now`);
            }
          }
          assert.ok(casesOf(valid).same(record[valid.name], first), `create: ${valid.name} written alongside`);
          assert.equal((await app.get(`${path}/${sentId}`)).status, 404, 'no record was created under the sent id');
          // What the resource reveals once (a webhook's secret) is in the create's answer only.
          assert.deepEqual(
            (await read(resource, record.id)).body,
            { data: created.body.data },
            'create answer equals the stored record',
          );

          // Keep updated_at from landing in the same millisecond as created_at.
          await new Promise((resolve) => setTimeout(resolve, 5));
          const patched = await app.patch(`${path}/${String(record.id)}`, { ...forged(), [valid.name]: second });
          assert.equal(patched.status, 200, patched.text);
          const after = patched.body.data;
          assert.ok(casesOf(valid).same(after[valid.name], second), `patch: ${valid.name} written alongside`);
          for (const f of readOnly) {
            if (f.timestamp === 'update') {
              assert.notEqual(after[f.name], sentTime, `patch: ${f.name} is the server's`);
              assert.ok(Date.parse(after[f.name]) > Date.parse(record[f.name]), `patch: ${f.name} moved forward`);
            } else {
              assert.equal(String(after[f.name]), String(record[f.name]), `patch: ${f.name} kept`);
            }
          }
          assert.deepEqual(
            (await read(resource, record.id)).body,
            patched.body,
            'patch answer equals the stored record',
          );

          // Only read-only fields: nothing to change, the record stays as it is.
          const onlyForged = await app.patch(`${path}/${String(record.id)}`, forged());
          assert.equal(onlyForged.status, 200, onlyForged.text);
          assert.deepEqual(onlyForged.body, patched.body, 'a patch of read-only fields only changes nothing');
        });

        test('a body that is not a JSON object is refused and writes nothing', async () => {
          const countBefore = await total(resource);
          const valid = resource.writable[0]!;
          const validValue = toPlain(sampleOf(valid, 0));
          const bodies = [
            '[]',
            `[${JSON.stringify({ ...baseBody(resource), [valid.name]: validValue })}]`,
            `"${valid.name}"`,
            '42',
            'true',
          ];
          const json = { 'content-type': 'application/json' };
          for (const body of bodies) {
            const reply = await app.request('POST', path, { body, headers: json });
            assert.equal(reply.status, 422, `POST ${body}: ${reply.text}`);
            assert.match(
              reply.headers.get('content-type') ?? '',
              /^application\/problem\+json\b/,
              `POST ${body}: content-type`,
            );
            assert.equal(reply.body.code, 'validation_failed', `POST ${body}: code`);
          }
          assert.equal(await total(resource), countBefore, 'rejected creates left the count unchanged');

          const target = await create(resource, { [valid.name]: validValue }, 'patch target');
          const id = target.body.data.id;
          const readBefore = await read(resource, id);
          for (const body of bodies) {
            const reply = await app.request('PATCH', `${path}/${String(id)}`, { body, headers: json });
            assert.equal(reply.status, 422, `PATCH ${body}: ${reply.text}`);
            assert.equal(reply.body.code, 'validation_failed', `PATCH ${body}: code`);
          }
          assert.deepEqual(
            (await read(resource, id)).body,
            readBefore.body,
            'rejected patches left the record unchanged',
          );
        });
      });
    }
  });
}

/** A sample for hand-written JSON text, where JSON.stringify cannot take a BigInt (samples are small). */
function toPlain(value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}
