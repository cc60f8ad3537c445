// The columns each user chose for each list (table list_columns: user_id,
// resource, and the field names, comma-separated). A preference, not a record:
// no change log, no ETag. A stored choice is read leniently — a field renamed,
// removed or hidden since is left out — and written strictly (422 naming
// `columns`). Without a choice a list shows the declaration's listColumns.
import { AppError } from '../errors.ts';
import type { Field, Resource } from '../schema/resource.ts';
import { logEvent } from './change-log.ts';
import { authorize, type Context } from './operations.ts';

/** The fields a list may show as columns: every visible one a person reads (not the id, not internal JSON). */
export const columnChoices = (resource: Resource): Field[] =>
  resource.visible.filter((f) => !f.primary && (f.inIndex || f.inView || f.timestamp !== undefined));

/** Field names (an array, or a comma-separated text) as columns of the resource; unknown and hidden names left out. */
export function columnsOf(resource: Resource, names: unknown): Field[] {
  const list = typeof names === 'string' ? names.split(',') : Array.isArray(names) ? names : [];
  const allowed = columnChoices(resource);
  const out: Field[] = [];
  for (const name of list) {
    const field = typeof name === 'string' ? allowed.find((f) => f.name === name.trim()) : undefined;
    if (field && !out.includes(field)) out.push(field);
  }
  return out;
}

/** The user's own choice for the resource's list, or null when they have none (or none of it is still a field). */
export async function storedColumns(ctx: Context, resource: Resource): Promise<Field[] | null> {
  const actor = authorize(ctx, resource);
  const row = await ctx.database.db
    .selectFrom('list_columns')
    .select('columns')
    .where('user_id', '=', actor.id)
    .where('resource', '=', resource.name)
    .executeTakeFirst();
  const fields = row ? columnsOf(resource, row.columns) : [];
  return fields.length ? fields : null;
}

/** The columns the user sees: their choice, else the declaration's. */
export async function listColumnsFor(ctx: Context, resource: Resource): Promise<readonly Field[]> {
  return (await storedColumns(ctx, resource)) ?? resource.listColumns;
}

const invalid = (message: string) =>
  new AppError(422, 'validation_failed', 'The columns cannot be saved.', { columns: [message] });

/** Keeps the user's choice of columns (field names, in order); every name must be a column of the list. */
export async function saveListColumns(ctx: Context, resource: Resource, names: readonly unknown[]): Promise<Field[]> {
  const actor = authorize(ctx, resource);
  const unknown = names.filter((n) => typeof n !== 'string' || columnsOf(resource, [n]).length === 0);
  if (unknown.length) throw invalid(`names no column of ${resource.name}: ${unknown.map(String).join(', ')}`);
  const fields = columnsOf(resource, names);
  if (fields.length === 0) throw invalid('needs at least one column');
  const columns = fields.map((f) => f.name).join(',');
  await keepColumns(ctx, resource, actor.id, columns);
  return fields;
}

/** Forgets the user's choice: the list shows the declaration's columns again. */
export async function resetListColumns(ctx: Context, resource: Resource): Promise<void> {
  await keepColumns(ctx, resource, authorize(ctx, resource).id, null);
}

/**
 * Replaces the user's choice (null: none), with its `columns_chosen` entry in the same transaction. Delete and insert
 * rather than an upsert: the same SQL on every database. Two saves at once may both find no row and both insert; the
 * one refused by the primary key tries again, and the later choice stays.
 */
async function keepColumns(ctx: Context, resource: Resource, user: bigint, columns: string | null): Promise<void> {
  const write = () =>
    ctx.database.db.transaction().execute(async (trx) => {
      const mine = { user_id: user, resource: resource.name };
      const before = await trx
        .selectFrom('list_columns')
        .select('columns')
        .where('user_id', '=', user)
        .where('resource', '=', resource.name)
        .executeTakeFirst();
      await trx.deleteFrom('list_columns').where('user_id', '=', user).where('resource', '=', resource.name).execute();
      if (columns !== null)
        await trx
          .insertInto('list_columns')
          .values({ ...mine, columns })
          .execute();
      await logEvent(trx, 'columns_chosen', null, user, ctx.via ?? 'web', {
        resource: 'list_columns',
        changes: { [resource.name]: [before?.columns ?? null, columns] },
      });
    });
  await write().catch(write);
}
