// Statements whose SQL depends only on what they are built from (a resource, a table), never on their values, are
// built and compiled once per database kind and then run with each call's parameters. For a read by id, Kysely's
// building and compiling took longer than SQLite took to run the statement.
import type { Compilable, CompiledQuery } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { Executor } from './tables.ts';

const compiled = new WeakMap<object, Map<string, CompiledQuery>>();

/**
 * The rows of the statement `build` makes, run on `db` with `parameters` (in the order the statement holds them). It
 * is built once for each `owner` (what the SQL is made from: a resource declaration, a module's table) and `key` (which
 * of its statements) on each kind of database.
 */
export async function runPrepared<R>(
  db: Executor,
  owner: object,
  key: string,
  build: () => Compilable<R>,
  parameters: readonly unknown[],
): Promise<R[]> {
  const statements = compiled.get(owner) ?? new Map<string, CompiledQuery>();
  compiled.set(owner, statements);
  const cacheKey = `${dialectOf(db)} ${key}`;
  let query = statements.get(cacheKey);
  if (!query) {
    query = build().compile();
    if (query.parameters.length !== parameters.length)
      throw new Error(`${key}: the statement has ${query.parameters.length} parameters, not ${parameters.length}`);
    statements.set(cacheKey, query);
  }
  const result = await db.executeQuery<R>({ ...query, parameters });
  return result.rows;
}
