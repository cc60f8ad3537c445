// Rules a resource adds to the generic write path (the last admin may not be
// demoted; a changed password ends sessions). They run inside the write's
// transaction and may throw an AppError to refuse it. A resource carries its
// own (resources/index.ts gives each resource its rules); there is no registry.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Executor } from '../db/tables.ts';
import type { Row } from './repository.ts';
import type { Resource } from '../schema/resource.ts';
import type { Context } from './context.ts';

/**
 * What a hook asks for once the write has committed: a message for the person, work that must not run inside the
 * transaction (a mail).
 */
export interface AfterCommit {
  notice?: string;
  afterCommit?: () => void;
  /** What the create's answer shows once and the server never again (a webhook's secret), by name. */
  reveal?: Readonly<Record<string, string>>;
}

/** The condition of a filter a resource declares by name (ResourceDecl.filters) over its table's columns. */
// biome-ignore lint/suspicious/noExplicitAny: the condition names the columns of a table known only by its declaration
export type NamedFilter = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>;

export interface RecordHooks {
  /** The conditions of the resource's named filters (ResourceDecl.filters), by name. */
  filters?: Readonly<Record<string, NamedFilter>>;
  /** May refuse the create or fill the fields the server keeps (`values` is what will be written). */
  beforeCreate?(trx: Executor, ctx: Context, values: Row): Promise<void>;
  /** The same for many rows at once (an import), in one go: without it, beforeCreate runs for each. */
  beforeCreateMany?(trx: Executor, ctx: Context, rows: Row[]): Promise<void>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook with nothing to run after the commit just returns
  afterCreate?(trx: Executor, ctx: Context, record: Row, input: Row): Promise<AfterCommit | void>;
  beforeUpdate?(trx: Executor, ctx: Context, before: Row, changes: Row): Promise<void>;
  afterUpdate?(trx: Executor, ctx: Context, before: Row, changes: Row): Promise<void>;
  /** `params`: the request's options (a user's `reassign_to`). */
  beforeDelete?(trx: Executor, ctx: Context, before: Row, params: Row): Promise<void>;
}

/** The rules of a resource, typed for the write path. */
export const rulesOf = (resource: Resource): RecordHooks => resource.rules as RecordHooks;
