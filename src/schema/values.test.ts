import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codePointLength, parseDateTime, parseIntegerInRange, parseText } from './values.ts';

test('codePointLength counts an astral character once and a lone surrogate once', () => {
  assert.equal(codePointLength(''), 0);
  assert.equal(codePointLength('abc'), 3);
  assert.equal(codePointLength('😀😀'), 2);
  assert.equal(codePointLength('a😀b'), 3);
  assert.equal(codePointLength('\ud800x'), 2);
  assert.equal(codePointLength('é'), 1);
  assert.equal(codePointLength('e\u0301'), 2, 'a combining mark is its own code point');
});

test('parseText refuses NUL, lone surrogates, and text over the limit', () => {
  assert.deepEqual(parseText('😀'.repeat(5), 5), { ok: true, value: '😀'.repeat(5) });
  assert.equal(parseText('😀'.repeat(6), 5).ok, false);
  assert.equal(parseText('a\u0000b', 5).ok, false);
  assert.equal(parseText('\udc00', 5).ok, false);
  assert.equal(parseText(5, 5).ok, false);
});

test('parseDateTime reads RFC 3339 with any offset and bare dates, answers UTC with milliseconds', () => {
  const cases: [string, string | null][] = [
    ['2026-11-22', '2026-11-22T00:00:00.000Z'],
    ['2026-11-22T09:30:00Z', '2026-11-22T09:30:00.000Z'],
    ['2026-11-22t09:30:00z', '2026-11-22T09:30:00.000Z'],
    ['2026-11-22 09:30:00+01:00', '2026-11-22T08:30:00.000Z'],
    ['2026-11-22T23:30:00-05:30', '2026-11-23T05:00:00.000Z'],
    ['2026-11-22T09:30:00.1Z', '2026-11-22T09:30:00.100Z'],
    ['2026-11-22T09:30:00.123987Z', '2026-11-22T09:30:00.123Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['2025-02-29', null],
    ['2026-04-31', null],
    ['2026-00-10', null],
    ['2026-11-22T24:00:00Z', null],
    ['2026-11-22T10:60:00Z', null],
    ['2026-11-22T10:00:00', null],
    ['2026-11-22T10:00Z', null],
    ['0000-06-01', null],
    ['0001-01-01T00:30:00+01:00', null],
    ['20261122', null],
    [' 2026-11-22', null],
  ];
  for (const [input, expected] of cases) {
    const parsed = parseDateTime(input);
    assert.deepEqual(parsed.ok ? parsed.value : null, expected, input);
  }
  assert.equal(parseDateTime(1700000000).ok, false);
});

test('parseIntegerInRange keeps 64-bit values exact and refuses the rest', () => {
  const min = -(2n ** 63n);
  const max = 2n ** 63n - 1n;
  assert.deepEqual(parseIntegerInRange(9007199254740993n, min, max, true), { ok: true, value: 9007199254740993n });
  assert.deepEqual(parseIntegerInRange('9007199254740993', min, max, true), { ok: true, value: 9007199254740993n });
  assert.equal(parseIntegerInRange('9007199254740993', min, max, false).ok, false, 'digits only where allowed');
  assert.equal(parseIntegerInRange(9223372036854775808n, min, max, true).ok, false);
  assert.equal(parseIntegerInRange(1.5, min, max, true).ok, false);
  assert.equal(parseIntegerInRange(2 ** 53, min, max, true).ok, false, 'an unsafe JS number may already be rounded');
  assert.equal(parseIntegerInRange('1e3', min, max, true).ok, false);
  assert.equal(parseIntegerInRange(true, min, max, true).ok, false);
});
