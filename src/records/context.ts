// Who is acting and on which database: what every record operation (and every
// rule a resource adds to the write path) is handed.
import type { Database } from '../db/connection.ts';
import type { KeyOptions } from '../schema/keys.ts';
import type { Role } from '../schema/roles.ts';

/** Who is acting. */
export interface Actor {
  id: bigint;
  role: Role;
}

/** The door a change came through, as the change log keeps it. */
export type Via = 'web' | 'api' | 'import' | 'intake' | 'rule' | 'cli' | 'system';

export interface Context {
  database: Database;
  /** The door (default: the API). */
  via?: Via;
  /** Absent for a stranger: every operation then answers 401. */
  actor?: Actor;
  /** The browser session the request came with, which a password change keeps. */
  sessionId?: string;
  /** The import this write belongs to: its entries carry the id, which a rollback reads. */
  importId?: bigint;
  /**
   * Its entries of updates keep the timestamps too (updated_at before and after), so that a rollback or the undo of a
   * merge puts a record back exactly as it was.
   */
  exact?: boolean;
  /**
   * The auth epoch under which the request's bearer token was kept in memory, when it was not read for this request:
   * a read by id with counts reads the epoch in its own statement, a create or an update in its transaction's first,
   * and goes no further unless it is this one (confirmEpoch; src/http/auth.ts, confirmed).
   */
  authEpoch?: string;
}

/**
 * A write on trust met another auth epoch than its token was kept under: a token was revoked, a user deactivated or a
 * role changed since. Thrown inside the write's transaction, which rolls back; the sign-in is then read again.
 */
export class SignInMoved extends Error {
  constructor() {
    super('the sign-in changed since the access token was kept in memory');
    this.name = 'SignInMoved';
  }
}

/** Throws SignInMoved when a write on trust read another auth epoch than its token was kept under. */
export function confirmEpoch(ctx: Context, read: string | undefined): void {
  if (ctx.authEpoch !== undefined && read !== ctx.authEpoch) throw new SignInMoved();
}

/**
 * What checking and stamping a row reads of its context (prepareCreate): who acts, and of the database only where
 * phone numbers without a country code are (its derived keys). The import's worker thread has no more than that.
 */
export type RowContext = Pick<Context, 'actor'> & { database: KeyOptions };
