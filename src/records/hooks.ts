// Rules a resource adds to the generic write path (the last admin may not be
// demoted; a changed password ends sessions). They run inside the write's
// transaction and may throw an AppError to refuse it.
import type { Executor, Row } from './repository.ts';
import type { Context } from './operations.ts';

/** What a hook asks for once the write has committed: a message for the person, work that must not run inside the transaction (a mail). */
export interface AfterCommit {
  notice?: string;
  afterCommit?: () => void;
}

export interface RecordHooks {
  afterCreate?(trx: Executor, ctx: Context, record: Row, input: Row): Promise<AfterCommit | void>;
  beforeUpdate?(trx: Executor, ctx: Context, before: Row, changes: Row): Promise<void>;
  afterUpdate?(trx: Executor, ctx: Context, before: Row, changes: Row): Promise<void>;
  beforeDelete?(trx: Executor, ctx: Context, before: Row): Promise<void>;
}

const registry = new Map<string, RecordHooks>();

export function registerHooks(resourceName: string, hooks: RecordHooks): void {
  registry.set(resourceName, hooks);
}

export function hooksFor(resourceName: string): RecordHooks {
  return registry.get(resourceName) ?? {};
}
