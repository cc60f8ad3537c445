// Pure value checks shared by the field kinds. Each returns a message or the
// converted value; none throws on bad input.

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const fail = (message: string): Parsed<never> => ({ ok: false, message });

/** Length in Unicode code points: a surrogate pair (an emoji) counts once. */
export function codePointLength(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return s.length - pairs;
}

export function parseText(raw: unknown, max: number): Parsed<string> {
  if (typeof raw !== 'string') return fail('must be a string');
  // PostgreSQL cannot store NUL in text, and a lone surrogate would be silently
  // replaced by U+FFFD on the way to either database: refuse both up front.
  if (raw.includes('\u0000')) return fail('must not contain NUL characters');
  if (!raw.isWellFormed()) return fail('must be valid Unicode text');
  if (codePointLength(raw) > max) return fail(`must be at most ${max} characters`);
  return ok(raw);
}

const INT_TEXT = /^-?\d{1,20}$/;

export function parseIntegerInRange(raw: unknown, min: bigint, max: bigint, acceptDigits: boolean): Parsed<bigint> {
  let n: bigint;
  if (typeof raw === 'bigint') n = raw;
  else if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw)) return fail('must be an integer');
    n = BigInt(raw);
  } else if (typeof raw === 'string' && acceptDigits && INT_TEXT.test(raw)) n = BigInt(raw);
  else return fail('must be an integer');
  // Said as a person reads it: the limits are the column's (a 32- or 64-bit integer), not a rule of the business.
  if (n > max) return fail(`is too large: at most ${max.toLocaleString('en-US')}`);
  if (n < min) return fail(`is too small: at least ${min.toLocaleString('en-US')}`);
  return ok(n);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * RFC 3339 with any offset, or a bare date meaning midnight UTC. Returns the
 * instant as `YYYY-MM-DDTHH:MM:SS.sssZ`. Fractions beyond milliseconds are
 * truncated (both databases keep milliseconds).
 */
export function parseDateTime(raw: unknown): Parsed<string> {
  const message = 'must be a date (YYYY-MM-DD) or an RFC 3339 date-time';
  if (typeof raw !== 'string') return fail(message);
  const m = DATE_TIME.exec(raw) ?? DATE.exec(raw);
  if (!m) return fail(message);
  const [year, month, day, hour = 0, minute = 0, second = 0] = m
    .slice(1, 7)
    .map((v) => (v === undefined ? 0 : Number(v)));
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!)) return fail(message);
  if (hour > 23 || minute > 59 || second > 59) return fail(message);
  const millis = Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const zone = m[8];
  let offsetMinutes = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return fail(message);
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour, minute, second, millis);
  const instant = new Date(date.getTime() - offsetMinutes * 60_000);
  if (instant.getUTCFullYear() < 1 || instant.getUTCFullYear() > 9999) return fail(message);
  return ok(instant.toISOString());
}
