// A task's rule on the write path: added without an assignee, it is the one who adds it's to do.
import type { RecordHooks } from '../records/rules.ts';

export const taskRules: RecordHooks = {
  async beforeCreate(_trx, ctx, values) {
    if (values.assigned_to === undefined && ctx.actor) values.assigned_to = Number(ctx.actor.id);
  },
};
