// Rules on user records, whichever door the change comes through: the last
// admin stays an admin and cannot be deleted; a changed password ends the
// user's sessions, tokens and remembered devices; a new account gets its mail
// (an invitation when it has no password, else the address check).
import type { Database } from '../db/connection.ts';
import { logEvent } from '../records/change-log.ts';
import { AppError } from '../errors.ts';
import type { RecordHooks } from '../records/rules.ts';
import type { Executor } from '../db/tables.ts';
import type { Row } from '../records/repository.ts';
import type { Accounts } from './context.ts';
import { endSignIns } from './end-sign-ins.ts';
import { createInvitation, INVITATION_DAYS, sendInvitation } from './invitations.ts';
import { sendInBackground } from './mail.ts';
import { countAdmins, findUserById } from './store.ts';
import { sendVerificationMail } from './verify-email.ts';

/** The accounts (mailer, settings) of each served database: the hooks are registered once, apps may be many. */
const served = new WeakMap<Database, Accounts>();

/** Lets the user rules send this app's mail for writes to its database. */
export function serveAccounts(a: Accounts): void {
  served.set(a.database, a);
}

const lastAdmin = async (trx: Executor, before: Row) => before.role === 'admin' && (await countAdmins(trx)) <= 1;

export const userRules: RecordHooks = {
  async afterCreate(trx, ctx, record, input) {
    const a = served.get(ctx.database);
    const id = BigInt(record.id as bigint);
    if (input.password === undefined) {
      const token = await createInvitation(trx, id);
      return {
        notice: `We emailed an invitation to ${String(record.email)}; the link works for ${INVITATION_DAYS} days.`,
        afterCommit: a && (() => sendInBackground(a.log, 'invitation mail', () => sendInvitation(a, record, token))),
      };
    }
    // Read after the commit: the mail's link is bound to the stored address.
    return {
      afterCommit:
        a &&
        (() =>
          sendInBackground(a.log, 'verification mail', async () =>
            sendVerificationMail(a, (await findUserById(a.database.db, id))!),
          )),
    };
  },
  async beforeUpdate(trx, _ctx, before, changes) {
    if (changes.role !== undefined && changes.role !== 'admin' && (await lastAdmin(trx, before))) {
      throw new AppError(
        422,
        'validation_failed',
        'The last admin cannot stop being an admin; make someone else an admin first.',
        { role: ['the last admin must stay an admin'] },
      );
    }
  },
  async afterUpdate(trx, ctx, before, changes) {
    const id = BigInt(before.id as bigint);
    const actor = ctx.actor?.id ?? null;
    if (changes.password !== undefined) {
      await endSignIns(trx, id, { keepSessionId: ctx.sessionId, tokens: true });
      await logEvent(trx, 'password_changed', id, actor, ctx.via);
    }
    if (changes.role !== undefined && changes.role !== before.role)
      await logEvent(trx, 'role_changed', id, actor, ctx.via);
  },
  async beforeDelete(trx, _ctx, before) {
    if (await lastAdmin(trx, before))
      throw new AppError(409, 'last_admin', 'The last admin cannot be deleted; make someone else an admin first.');
  },
};
