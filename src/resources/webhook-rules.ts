// A webhook's rules on the write path: its URL must reach a public address
// (src/webhooks/egress.ts; checked again at each connection), its secret is
// made by the server, kept encrypted and shown once (the create's answer
// reveals it), and turning an endpoint back on forgets why it was off.
import type { Executor } from '../db/tables.ts';
import { validationFailed } from '../errors.ts';
import type { Context } from '../records/context.ts';
import type { Row } from '../records/repository.ts';
import type { RecordHooks } from '../records/rules.ts';
import { refuseUrl } from '../webhooks/egress.ts';
import { newSecret } from '../webhooks/signing.ts';

function settingsOf(ctx: Context) {
  const settings = ctx.database.webhooks;
  if (!settings) throw new Error('the webhooks settings are not set on the database (see app.ts)');
  return settings;
}

async function checkUrl(ctx: Context, url: unknown): Promise<void> {
  if (typeof url !== 'string') return;
  const refusal = await refuseUrl(url, settingsOf(ctx));
  if (refusal) throw validationFailed({ url: [refusal] });
}

export const webhookRules: RecordHooks = {
  async beforeCreate(_trx: Executor, ctx: Context, values: Row) {
    await checkUrl(ctx, values.url);
  },
  async afterCreate(trx: Executor, ctx: Context, record: Row) {
    // Kept encrypted; the plain secret leaves the server once, in this create's answer.
    const secret = newSecret();
    await trx
      .updateTable('webhooks')
      .set({ secret: settingsOf(ctx).seal(secret) })
      .where('id', '=', BigInt(String(record.id)))
      .execute();
    return { reveal: { secret } };
  },
  async beforeUpdate(_trx: Executor, ctx: Context, before: Row, changes: Row) {
    if ('url' in changes) await checkUrl(ctx, changes.url);
    if (changes.active === true && !before.active)
      Object.assign(changes, { failing_since: null, disabled_reason: null });
  },
};
