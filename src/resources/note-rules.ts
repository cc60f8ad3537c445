// A note's rule on the write path: the teammates it mentions
// (`@ada@example.com`, `@Ada`, or `@AdaLovelace`: a name without its spaces)
// are kept as their ids, for notifications.
import type { Executor } from '../db/tables.ts';
import type { RecordHooks } from '../records/rules.ts';

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

export const noteRules: RecordHooks = {
  async beforeCreate(trx, _ctx, values) {
    values.mentions = await mentionsIn(trx, String(values.body ?? ''));
  },
  async beforeUpdate(trx, _ctx, _before, changes) {
    if ('body' in changes) changes.mentions = await mentionsIn(trx, String(changes.body ?? ''));
  },
};
