// The records a reference may name, by title: for the pickers in forms and
// filters, and to show a reference by its title instead of its id.
import type { Database } from '../db/connection.ts';
import { containsText } from '../db/dialect.ts';
import { asRecordTables } from '../db/tables.ts';
import type { Field, Resource } from '../schema/resource.ts';
import type { Row } from './repository.ts';

export interface Choice {
  id: string;
  title: string;
}

/** By referenced resource name. */
export type Choices = ReadonlyMap<string, readonly Choice[]>;

/** A select lists at most this many; past it, the picker's search box narrows the list. */
export const PICKER_LIMIT = 200;

/**
 * Active records of `target` by title, or by position where it has one (those whose title holds `search`, when given),
 * at most PICKER_LIMIT, and those named in `ids`.
 */
export async function choicesOf(
  database: Database,
  target: Resource,
  ids: readonly string[] = [],
  search = '',
): Promise<Choice[]> {
  const pk = target.primaryKey.name;
  const title = target.title.name;
  const toChoice = (r: Row) => ({
    id: String(r[pk]),
    title: r[title] === null || r[title] === undefined ? `#${String(r[pk])}` : String(r[title]),
  });
  // A list kept in an order of its own (the pipeline's stages) is offered in that order.
  const order = target.field('position') ?? target.title;
  let query = asRecordTables(database.db)
    .selectFrom(target.table)
    .select([pk, title])
    .orderBy(order.name)
    .orderBy(pk)
    .limit(PICKER_LIMIT);
  if (search) query = query.where(containsText(database.db, title, search));
  // What is no longer active (an archived stage, a deactivated user) is not offered; named below, it is still shown.
  if (target.field('active')?.kind.options) query = query.where('active', '=', true);
  const first = (await query.execute()).map(toChoice);
  // Typed values from a refused form may name no possible id (too large for the column): they name nothing.
  const possible = ids.filter((id) => target.primaryKey.kind.fromQuery(id, target.primaryKey).ok);
  const missing = possible.filter((id) => !first.some((c) => c.id === id));
  const named = missing.length
    ? (
        await asRecordTables(database.db)
          .selectFrom(target.table)
          .select([pk, title])
          .where(pk, 'in', missing)
          .execute()
      ).map(toChoice)
    : [];
  return [...first, ...named];
}

/** For each resource `resource` references: the choices for its pickers, and the titles of the ids `rows` hold. */
export async function referenceChoices(
  database: Database,
  resource: Resource,
  rows: readonly Row[] = [],
): Promise<Choices> {
  const targetOf = (f: Field) => f.target ?? f.listTarget;
  const targets = [...new Set(resource.fields.flatMap((f) => targetOf(f) ?? []))];
  const entries = await Promise.all(
    targets.map(async (target) => {
      const ids = rows.flatMap((r) =>
        resource.fields
          .filter((f) => targetOf(f) === target && r[f.name] != null)
          .flatMap((f) => (Array.isArray(r[f.name]) ? (r[f.name] as unknown[]) : [r[f.name]]).map(String)),
      );
      return [target.name, await choicesOf(database, target, ids)] as const;
    }),
  );
  return new Map(entries);
}
