// A note's rule on the write path: the teammates it mentions
// (`@ada@example.com`, `@Ada`, or `@AdaLovelace`: a name without its spaces)
// are kept as their ids, and each newly mentioned one is notified (not the
// note's writer), about the inquiry or contact the note is on.
import type { Executor } from '../db/tables.ts';
import type { Context } from '../records/context.ts';
import { notify } from '../records/notifications.ts';
import type { Row } from '../records/repository.ts';
import type { RecordHooks } from '../records/rules.ts';
import { lockResponded, markResponded } from './inquiry-rules.ts';

const MENTION = /(?<![\p{L}\p{N}._%+-])@([\p{L}\p{N}._%+-]+(?:@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)?)/gu;
const squash = (text: string) => text.replace(/\s+/g, '').toLowerCase();

/** The ids of the users a text mentions by email, by name (spaces left out) or by first name; none: null. */
export async function mentionsIn(db: Executor, text: string): Promise<string | null> {
  const words = new Set([...text.matchAll(MENTION)].map((m) => m[1]!.replace(/[.]+$/, '').toLowerCase()));
  if (words.size === 0) return null;
  const users = await db.selectFrom('users').select(['id', 'name', 'frist_name', 'email', 'active']).execute();
  const ids = users
    .filter(
      (u) =>
        Boolean(u.active) &&
        (words.has(u.email.toLowerCase()) ||
          words.has(squash(u.name)) ||
          (u.frist_name !== null && words.has(squash(u.frist_name)))),
    )
    .map((u) => Number(u.id));
  return ids.length ? JSON.stringify(ids) : null;
}

const mentioned = (note: Row): string[] =>
  typeof note.mentions === 'string' ? (JSON.parse(note.mentions) as unknown[]).map(String) : [];

/** "Mentioned in a note" for who the note now mentions and did not before (not its writer), about its record. */
async function noticeMentions(trx: Executor, ctx: Context, before: Row | null, note: Row): Promise<void> {
  const on = note.inquiry_id != null ? 'inquiries' : note.contact_id != null ? 'contacts' : null;
  if (!on) return;
  const known = new Set([...(before ? mentioned(before) : []), String(ctx.actor?.id)]);
  await notify(
    trx,
    mentioned(note)
      .filter((id) => !known.has(id))
      .map((id) => ({
        user_id: BigInt(id),
        kind: 'mentioned',
        resource: on,
        record_id: BigInt(String(on === 'inquiries' ? note.inquiry_id : note.contact_id)),
      })),
  );
}

export const noteRules: RecordHooks = {
  async beforeCreate(trx, ctx, values) {
    await lockResponded(trx, ctx, values.inquiry_id);
    values.mentions = await mentionsIn(trx, String(values.body ?? ''));
  },
  async afterCreate(trx, ctx, record) {
    await noticeMentions(trx, ctx, null, record);
    await markResponded(trx, ctx, record.inquiry_id);
  },
  async beforeUpdate(trx, _ctx, _before, changes) {
    if ('body' in changes) changes.mentions = await mentionsIn(trx, String(changes.body ?? ''));
  },
  async afterUpdate(trx, ctx, before, changes) {
    if ('mentions' in changes) await noticeMentions(trx, ctx, before, { ...before, ...changes });
  },
};
