// SQL whose spelling differs between SQLite and PostgreSQL.
import { type Expression, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Dialect } from '../schema/kinds.ts';

const LIKE_SPECIAL = /[\\%_]/g;

/**
 * Case-insensitive substring match where `%` and `_` in the term are literal.
 * PostgreSQL: ILIKE with the term escaped (pg_trgm indexes can serve it).
 * SQLite: its LIKE folds only ASCII, so compare Unicode-lower-cased text.
 */
export function containsText(dialect: Dialect, column: string, term: string): Expression<SqlBool> {
  if (dialect === 'postgres') {
    const pattern = `%${term.replace(LIKE_SPECIAL, '\\$&')}%`;
    return sql<SqlBool>`${sql.ref(column)} ilike ${pattern} escape '\\'`;
  }
  return sql<SqlBool>`instr(lb_fold(${sql.ref(column)}), ${term.toLowerCase()}) > 0`;
}

/** NULL is the smallest value on both databases, whatever the direction. */
export function orderTerm(column: string, desc: boolean): RawBuilder<unknown> {
  return desc ? sql`${sql.ref(column)} desc nulls last` : sql`${sql.ref(column)} asc nulls first`;
}
