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
import { countAdmins, findUserById, fromDbBool } from './store.ts';
import { moveRecords } from '../records/operations.ts';
import { countReferences } from '../records/repository.ts';
import type { Context } from '../records/context.ts';
import { user } from '../resources/user.ts';
import { sendVerificationMail } from './verify-email.ts';

/** The accounts (mailer, settings) of each served database: the hooks are registered once, apps may be many. */
const served = new WeakMap<Database, Accounts>();

/** Lets the user rules send this app's mail for writes to its database. */
export function serveAccounts(a: Accounts): void {
  served.set(a.database, a);
}

/** Whether the user is the last active admin (who may not stop being one, be deactivated or deleted). */
const lastAdmin = async (trx: Executor, before: Row) =>
  before.role === 'admin' && before.active !== false && (await countAdmins(trx)) <= 1;

/** The records whose work a user is to do (assigned inquiries), by the field that names them. */
const assignments = () => user.referencedBy.filter(({ field }) => field.assignee);

/**
 * A user who still has work assigned is deleted only with `reassign_to`, another active user, who then gets it all
 * (in the deletion's transaction).
 */
async function reassignWork(trx: Executor, ctx: Context, before: Row, params: Row): Promise<void> {
  const id = BigInt(before.id as bigint);
  const counts = await Promise.all(
    assignments().map(async ({ resource, field }) => ({
      resource,
      field,
      n: await countReferences(trx, resource, field, id),
    })),
  );
  const held = counts.filter((c) => c.n > 0);
  if (held.length === 0) return;
  const raw = params.reassign_to;
  if (raw === undefined || raw === '') {
    const what = held.map((c) => `${c.n} ${c.n === 1 ? c.resource.singular : c.resource.name}`).join(' and ');
    throw new AppError(
      409,
      'has_assignments',
      `${String(before.name)} still has ${what} assigned; give reassign_to (a user id) to move them in the same step.`,
    );
  }
  const to = typeof raw === 'string' && /^\d{1,18}$/.test(raw) ? BigInt(raw) : null;
  const heir = to === null || to === id ? null : await findUserById(trx, to);
  if (!heir || !fromDbBool(heir.active))
    throw new AppError(422, 'validation_failed', 'The request has invalid fields.', {
      reassign_to: ['must name another active user'],
    });
  for (const { resource, field } of held) await moveRecords(trx, ctx, resource, field, [id, heir.id], null);
}

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
    if (changes.active === false && (await lastAdmin(trx, before))) {
      throw new AppError(
        422,
        'validation_failed',
        'The last active admin cannot be deactivated; make someone else an admin first.',
        { active: ['the last active admin must stay active'] },
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
    // Deactivated: every way in closes now; the name stays on the records.
    if (changes.active === false && before.active !== false) {
      await endSignIns(trx, id, { tokens: true });
      await logEvent(trx, 'user_deactivated', id, actor, ctx.via);
    }
  },
  async beforeDelete(trx, ctx, before, params) {
    if (await lastAdmin(trx, before))
      throw new AppError(409, 'last_admin', 'The last admin cannot be deleted; make someone else an admin first.');
    await reassignWork(trx, ctx, before, params);
  },
};
