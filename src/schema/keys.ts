// Keys the server works out from what people write, so that records match and
// sort as a person expects: an email in another case is the same address, a
// phone number in another format the same number, "Åsa" sorts with the A's.
// Stored next to the field they come from (a derived field), indexed, never shown.
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';

/** What a derived value may depend on besides the record: where phone numbers without a country code are. */
export interface KeyOptions {
  defaultCountry?: string;
}

const text = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
};

/** An address trimmed and lower-cased; none: null. */
export const emailKey = (value: unknown): string | null => text(value)?.toLowerCase() ?? null;

/**
 * A number in E.164 (`+493012345678`), read in `defaultCountry` when it has no country code; not a possible number:
 * null.
 */
export function phoneKey(value: unknown, options: KeyOptions = {}): string | null {
  const s = text(value);
  if (!s) return null;
  try {
    const parsed = parsePhoneNumberFromString(s, { defaultCountry: options.defaultCountry as CountryCode | undefined });
    return parsed?.isPossible() ? parsed.number : null;
  } catch {
    return null;
  }
}

// Letters that Unicode does not decompose into a base letter and a mark, as a collation sorts them.
const BASE_LETTERS: Record<string, string> = {
  ł: 'l',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ħ: 'h',
  ı: 'i',
  ŧ: 't',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
};
const MARKS = /\p{M}+/gu;
const NOT_BASE = /[łøđðħıŧßæœþ]/g;

/**
 * A text's sort key: compared byte by byte, it orders as a language-neutral collation does at its first level (case
 * and accents ignored, "Åsa" and "Łukasz" with A and L); the text itself follows as a tie-break, so equal keys keep
 * a stable order.
 */
export function sortKey(value: unknown): string | null {
  const s = text(value);
  if (!s) return null;
  return `${folded(s)}\u0001${s}`.slice(0, 255);
}

/** Case and accents dropped, letters to their base ("Łukasz Å" → "lukasz a"). */
const folded = (s: string) =>
  s
    .normalize('NFKD')
    .replace(MARKS, '')
    .toLowerCase()
    .replace(NOT_BASE, (c) => BASE_LETTERS[c] ?? c);

/**
 * A person at a place: the name and the city folded (case, accents and runs of spaces ignored), for finding the same
 * contact entered twice; null unless both are given.
 */
export function nameCityKey(name: unknown, city: unknown): string | null {
  const [n, c] = [text(name), text(city)];
  if (!n || !c) return null;
  const fold = (s: string) => folded(s).replace(/\s+/g, ' ');
  return `${fold(n)}\u0001${fold(c)}`.slice(0, 255);
}
