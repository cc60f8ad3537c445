// Settings admins keep, in the `settings` table (a key and its JSON). For now one:
// the words of the records' state fields, the seed's three booleans — the
// field's label and what true, false and "not set" are called (Status:
// Closed / Open / New). `GET /schema` and every page show them: they are put
// on the fields themselves, and each process looks for a newer value at most
// once a second, so every process of a deployment follows a change within a
// second.
import type { Database } from '../db/connection.ts';
import type { Executor } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import { type Field, type Resource, stateFieldsOf } from '../schema/resource.ts';
import type { Context } from './context.ts';
import { logEvent } from './change-log.ts';

export const STATE_WORDS = ['label', 'true', 'false', 'null'] as const;
export type StateWords = Partial<Record<(typeof STATE_WORDS)[number], string>>;
/** By `resource.field`. */
export type Labels = Record<string, StateWords>;

const KEY = 'labels';
const MAX = 50;
const CHECK_EVERY_MS = 1000;

/** Each field's label as declared, to go back to when a setting is cleared. */
const declared = new WeakMap<Field, string>();
/** What each database last said, and when it was asked; and the value the fields carry now. */
const seen = new WeakMap<Database, { value: string; checkedAt: number }>();
let applied = '';

function apply(resources: readonly Resource[], value: string) {
  const labels = (value ? JSON.parse(value) : {}) as Labels;
  for (const resource of resources)
    for (const field of stateFieldsOf(resource)) {
      if (!declared.has(field)) declared.set(field, field.label);
      const words = labels[`${resource.name}.${field.name}`] ?? {};
      field.label = words.label || declared.get(field)!;
      const named = Object.entries(words).filter(([k, v]) => k !== 'label' && v);
      field.words = named.length ? Object.fromEntries(named) : undefined;
    }
  applied = value;
}

async function stored(db: Executor): Promise<string> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', KEY).executeTakeFirst();
  return row?.value ?? '';
}

/** Puts the database's words on the fields, asking it at most once a second: every request runs it first. */
export async function refreshLabels(database: Database, resources: readonly Resource[], now = Date.now()) {
  let state = seen.get(database);
  if (!state || now - state.checkedAt >= CHECK_EVERY_MS) {
    state = { value: await stored(database.db), checkedAt: now };
    seen.set(database, state);
  }
  if (state.value !== applied) apply(resources, state.value);
}

/** The words of every state field, as set (empty strings: the declaration's). */
export function currentLabels(resources: readonly Resource[]): Labels {
  return Object.fromEntries(
    resources.flatMap((r) =>
      stateFieldsOf(r).map((f) => [
        `${r.name}.${f.name}`,
        { label: f.label, true: f.words?.true ?? '', false: f.words?.false ?? '', null: f.words?.null ?? '' },
      ]),
    ),
  );
}

/**
 * Keeps new words (admins only), logged as `settings_changed` with the words before and after, and shows them at
 * once. Unknown fields, words that are not text or are too long are refused (422), and nothing is kept then.
 */
export async function saveLabels(ctx: Context, resources: readonly Resource[], input: Labels): Promise<void> {
  if (ctx.actor?.role !== 'admin') throw new AppError(403, 'forbidden', 'Only admins may change the settings.');
  const fields = new Set(resources.flatMap((r) => stateFieldsOf(r).map((f) => `${r.name}.${f.name}`)));
  const clean: Labels = {};
  const errors: Record<string, string[]> = {};
  for (const [key, words] of Object.entries(input)) {
    if (!fields.has(key)) {
      errors[key] = [`is not a state field: one of ${[...fields].join(', ')}`];
      continue;
    }
    if (typeof words !== 'object' || words === null || Array.isArray(words)) {
      errors[key] = [`must be an object of words: ${STATE_WORDS.join(', ')}`];
      continue;
    }
    for (const other of Object.keys(words).filter((w) => !(STATE_WORDS as readonly string[]).includes(w)))
      errors[`${key}.${other}`] = ['is not a word of a state field'];
    for (const word of STATE_WORDS) {
      const raw = words[word] ?? '';
      if (typeof raw !== 'string') {
        errors[`${key}.${word}`] = ['must be text'];
        continue;
      }
      const text = raw.trim();
      if (text.length > MAX) errors[`${key}.${word}`] = [`must be at most ${MAX} characters`];
      else if (text) clean[key] = { ...clean[key], [word]: text };
    }
  }
  if (Object.keys(errors).length)
    throw new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);
  const value = JSON.stringify(clean);
  const now = new Date().toISOString();
  const { db } = ctx.database;
  await db.transaction().execute(async (trx) => {
    const before = await stored(trx);
    await trx.deleteFrom('settings').where('key', '=', KEY).execute();
    await trx.insertInto('settings').values({ key: KEY, value, updated_at: now }).execute();
    await logEvent(trx, 'settings_changed', null, ctx.actor!.id, ctx.via ?? 'api', {
      resource: 'settings',
      changes: { labels: [before ? JSON.parse(before) : {}, clean] },
    });
  });
  seen.set(ctx.database, { value, checkedAt: Date.now() });
  apply(resources, value);
}
