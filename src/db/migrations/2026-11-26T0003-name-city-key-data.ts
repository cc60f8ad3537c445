// Frozen in time: fills the name-and-city key (added by T0002) of the contacts
// and inquiries stored before it, as src/schema/keys.ts's nameCityKey made it
// then: both given, folded (case, accents, runs of spaces), joined by U+0001.
// Its own copy of the folding, never the app's (test/contact-link.test.ts
// checks they agree). Rows with neither a name nor a city are left NULL.
import type { Kysely } from 'kysely';

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

const text = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const s = String(value).trim();
  return s === '' ? null : s;
};

const fold = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[łøđðħıŧßæœþ]/g, (c) => BASE_LETTERS[c] ?? c)
    .replace(/\s+/g, ' ');

export function nameCityKey(name: unknown, city: unknown): string | null {
  const [n, c] = [text(name), text(city)];
  if (!n || !c) return null;
  return `${fold(n)}\u0001${fold(c)}`.slice(0, 255);
}

const PAGE = 1000;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['contacts', 'inquiries']) {
    let after = 0;
    for (;;) {
      const rows = await db
        .selectFrom(table)
        .select(['id', 'name', 'city'])
        .where('id', '>', after)
        .where('name', 'is not', null)
        .where('city', 'is not', null)
        .orderBy('id')
        .limit(PAGE)
        .execute();
      if (rows.length === 0) break;
      for (const r of rows)
        await db
          .updateTable(table)
          .set({ name_city_key: nameCityKey(r.name, r.city) })
          .where('id', '=', r.id)
          .execute();
      after = Number(rows.at(-1)!.id);
    }
  }
}

export async function down(): Promise<void> {}
