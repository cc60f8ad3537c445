// Ending the sign-ins of a user, in one place for every caller: a changed
// password (through the profile, the users records, a reset or an invitation
// link) and "sign out my other sessions". Sessions, remembered devices (their
// cookies would sign straight back in) and, when asked, personal access
// tokens end together, in one transaction: never some of them.
import type { Executor } from '../db/tables.ts';

export interface EndSignIns {
  /** The session that asked (a password changed in this browser stays signed in there). */
  keepSessionId?: string;
  /** Personal access tokens end too: a new password closes every way in; "sign out other sessions" leaves them. */
  tokens: boolean;
}

/**
 * Ends the user's sessions but `keepSessionId`, forgets their remembered devices and maybe revokes their tokens;
 * answers how many sessions ended.
 */
export async function endSignIns(db: Executor, userId: bigint, options: EndSignIns): Promise<number> {
  const run = async (trx: Executor) => {
    const { keepSessionId } = options;
    const ended = await trx
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .$if(keepSessionId !== undefined, (q) => q.where('id', '!=', keepSessionId!))
      .executeTakeFirst();
    if (options.tokens) await trx.deleteFrom('personal_access_tokens').where('user_id', '=', userId).execute();
    await trx.updateTable('users').set({ remember_token: null }).where('id', '=', userId).execute();
    return Number(ended.numDeletedRows);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
