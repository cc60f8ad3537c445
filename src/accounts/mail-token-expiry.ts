// A week before a personal access token expires, its owner is mailed once, so
// that the script using it can get a new one before it starts failing. Run by
// the scheduler (one process at a time); `expiry_mailed_at` is set after the
// send: a crash between the two sends the mail again (at least once, the same
// Message-ID), never not at all.
import type { Executor } from '../db/tables.ts';
import type { Mail } from './mail.ts';
import { nowIso, toIso } from './store.ts';

/** How long before the expiry the owner hears of it. */
export const TOKEN_EXPIRY_NOTICE_MS = 7 * 24 * 60 * 60 * 1000;
const MAILS_PER_RUN = 100;

/** "1 December 2026, 09:30 UTC": a mail reader's words, not an ISO string. */
const spoken = (iso: string) =>
  `${new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'long', timeStyle: 'short' })} UTC`;

/**
 * Mails the owner of each token that expires within the notice and was not mailed about yet (active accounts only:
 * a deactivated one's tokens do not work anyway); answers how many went. A send that fails ends the run, the rest
 * wait for the next.
 */
export async function mailTokenExpiry(
  db: Executor,
  appUrl: string,
  send: (mail: Mail) => Promise<void>,
  held: () => Promise<boolean>,
  now = new Date(),
): Promise<number> {
  const due = await db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users', 'users.id', 't.user_id')
    .select(['t.id as id', 't.name as name', 't.expires_at as expires_at', 'users.email as email'])
    .where('t.expires_at', '>', now.toISOString())
    .where('t.expires_at', '<=', new Date(now.getTime() + TOKEN_EXPIRY_NOTICE_MS).toISOString())
    .where('t.expiry_mailed_at', 'is', null)
    .where('users.active', '=', true)
    .orderBy('t.expires_at')
    .limit(MAILS_PER_RUN)
    .execute();
  let sent = 0;
  for (const token of due) {
    // Another process took the scheduler over (this one stalled past its lease): the rest are its to send.
    if (!(await held())) break;
    const expiresAt = toIso(token.expires_at)!;
    const when = spoken(expiresAt);
    const link = `${appUrl}/profile#tokens`;
    await send({
      to: token.email,
      subject: `Your Leadbook API token “${token.name}” expires on ${when}`,
      text:
        `Your personal access token “${token.name}” stops working on ${when}.\n\n` +
        `If a script or another app still uses it, make a new token and give it that one:\n\n${link}\n\n` +
        'If nothing uses it any more, there is nothing to do: it ends by itself.\n',
      link,
      id: `token-expiry-${String(token.id)}-${Date.parse(expiresAt)}`,
    });
    await db
      .updateTable('personal_access_tokens')
      .set({ expiry_mailed_at: nowIso() })
      .where('id', '=', BigInt(String(token.id)))
      .execute();
    sent++;
  }
  return sent;
}
