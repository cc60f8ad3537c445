// A task's rules on the write path: added without an assignee, it is the one who adds it's to do; done, it is a
// response to its inquiry (the first response stops the inquiry's clock: CONTRACT.md, first_response_at).
import type { RecordHooks } from '../records/rules.ts';
import { lockResponded, markResponded } from './inquiry-rules.ts';

export const taskRules: RecordHooks = {
  async beforeCreate(_trx, ctx, values) {
    if (values.assigned_to === undefined && ctx.actor) values.assigned_to = Number(ctx.actor.id);
  },
  async beforeUpdate(trx, ctx, before, changes) {
    if (changes.done_at != null && before.done_at == null) await lockResponded(trx, ctx, before.inquiry_id);
  },
  async afterUpdate(trx, ctx, before, changes) {
    if (changes.done_at != null && before.done_at == null) await markResponded(trx, ctx, before.inquiry_id);
  },
};
