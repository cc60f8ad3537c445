// Assignment by rules (CONTRACT.md, "Assignment, notifications, tasks"): the
// first active rule, by position, whose every condition holds for a new
// inquiry picks one of its users. A rule's turn is a row of assignment_turns,
// locked (SELECT … FOR UPDATE on PostgreSQL; SQLite has one writer at a time)
// before the pick is read, so that arrivals on any number of processes take
// turns one after another and a count of open inquiries is never read stale by
// two of them at once. A dry run reads the same without taking a turn.
import type { Executor } from '../db/tables.ts';
import { AppError, type FieldErrors } from '../errors.ts';
import { recordExists, type Row } from '../records/repository.ts';
import type { RecordHooks } from '../records/rules.ts';
import { MATCH_KEYS } from './assignment-rule.ts';
import { inquiry } from './inquiry.ts';

export interface Assignment {
  rule: { id: bigint; name: string };
  /** Who gets it; null when every user of the rule is deactivated or at capacity. */
  user: bigint | null;
  /** The due time its `respond_within_minutes` sets, from `now`. */
  dueAt: string | null;
}

type Rule = {
  id: bigint | string | number;
  name: string;
  match: string | null;
  strategy: string;
  users: string | null;
  capacity: number | null;
};

const folded = (v: unknown) => (v === null || v === undefined ? '' : String(v).trim().toLowerCase());

/** Whether every condition of a rule holds for an inquiry (case-insensitive; a rule without any matches all). */
export const ruleMatches = (match: Record<string, unknown>, inquiry: Row) =>
  Object.entries(match).every(([key, want]) => folded(inquiry[key]) === folded(want));

/** Open inquiries per user, among `users`. */
async function openCounts(trx: Executor, users: readonly string[]): Promise<Map<string, number>> {
  const open = (await trx.selectFrom('stages').select('id').where('kind', '=', 'open').execute()).map((s) =>
    Number(s.id),
  );
  if (open.length === 0) return new Map();
  const rows = await trx
    .selectFrom('inquiries')
    .select(['assigned_to', (eb) => eb.fn.countAll<string | number | bigint>().as('n')])
    .where('assigned_to', 'in', users.map(Number))
    .where('stage_id', 'in', open)
    .groupBy('assigned_to')
    .execute();
  return new Map(rows.map((r) => [String(r.assigned_to), Number(r.n)]));
}

/** The user a rule gives its next inquiry to (see the top of the file); `take`: an arrival, which takes the turn. */
async function pick(trx: Executor, rule: Rule, take: boolean): Promise<bigint | null> {
  const users = (rule.users ? (JSON.parse(rule.users) as unknown[]) : []).map(String);
  if (users.length === 0) return null;
  const ruleId = BigInt(String(rule.id));
  if (take)
    await trx
      .insertInto('assignment_turns')
      .values({ rule_id: ruleId, last_user_id: null })
      .onConflict((oc) => oc.column('rule_id').doNothing())
      .execute();
  const turn = await trx
    .selectFrom('assignment_turns')
    .select('last_user_id')
    .where('rule_id', '=', ruleId)
    .$if(take, (q) => q.forUpdate())
    .executeTakeFirst();
  const active = new Set(
    (
      await trx
        .selectFrom('users')
        .select('id')
        .where('id', 'in', users.map(BigInt))
        .where('active', '=', true)
        .execute()
    ).map((u) => String(u.id)),
  );
  const open = rule.capacity !== null || rule.strategy === 'least_open' ? await openCounts(trx, users) : new Map();
  const load = (u: string) => open.get(u) ?? 0;
  const free = users.filter((u) => active.has(u) && (rule.capacity === null || load(u) < Number(rule.capacity)));
  if (free.length === 0) return null;
  let chosen = free[0]!;
  if (rule.strategy === 'least_open') chosen = free.reduce((best, u) => (load(u) < load(best) ? u : best));
  else if (rule.strategy === 'round_robin') {
    // The next after the last one given, in the rule's order, wrapping around.
    const last = turn?.last_user_id == null ? -1 : users.indexOf(String(turn.last_user_id));
    chosen = [...users.slice(last + 1), ...users.slice(0, last + 1)].find((u) => free.includes(u))!;
  }
  if (take)
    await trx
      .updateTable('assignment_turns')
      .set({ last_user_id: BigInt(chosen) })
      .where('rule_id', '=', ruleId)
      .execute();
  return BigInt(chosen);
}

/**
 * Which rule takes an inquiry with these values, whom it gives it to and by when it is due; null when no active rule
 * matches. `take`: the inquiry is arriving (its rule's turn moves on); otherwise a dry run.
 */
export async function assignmentFor(trx: Executor, inquiry: Row, now: Date, take: boolean): Promise<Assignment | null> {
  const rules = await trx
    .selectFrom('assignment_rules')
    .select(['id', 'name', 'match', 'strategy', 'users', 'capacity', 'respond_within_minutes'])
    .where('active', '=', true)
    .orderBy('position')
    .orderBy('id')
    .execute();
  for (const rule of rules) {
    if (!ruleMatches(rule.match ? (JSON.parse(rule.match) as Record<string, unknown>) : {}, inquiry)) continue;
    const minutes = rule.respond_within_minutes;
    return {
      rule: { id: BigInt(String(rule.id)), name: rule.name },
      user: await pick(trx, rule as Rule, take),
      dueAt: minutes === null ? null : new Date(now.getTime() + Number(minutes) * 60_000).toISOString(),
    };
  }
  return null;
}

export interface DryRun {
  rule: { id: bigint; name: string } | null;
  user: { id: bigint; name: string } | null;
  due_at: string | null;
}

/** What the rules would do with an inquiry holding `fields` (only the keys a rule matches on count). */
export async function dryRun(db: Executor, fields: unknown): Promise<DryRun> {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    throw new AppError(422, 'validation_failed', 'Send the inquiry’s fields as a JSON object.', {
      body: [`must be an object with any of ${MATCH_KEYS.join(', ')}`],
    });
  const inquiry = Object.fromEntries(
    MATCH_KEYS.filter((k) => typeof (fields as Record<string, unknown>)[k] !== 'object').map((k) => [
      k,
      (fields as Record<string, unknown>)[k],
    ]),
  );
  const found = await assignmentFor(db, inquiry, new Date(), false);
  if (!found) return { rule: null, user: null, due_at: null };
  const user =
    found.user === null
      ? null
      : await db.selectFrom('users').select(['id', 'name']).where('id', '=', found.user).executeTakeFirst();
  return {
    rule: found.rule,
    user: user ? { id: BigInt(String(user.id)), name: user.name } : null,
    due_at: found.dueAt,
  };
}

/** A rule needs someone to give inquiries to, and the lookups it matches on must exist (checked as they are sent). */
async function checkRule(trx: Executor, rule: Row): Promise<void> {
  const errors: FieldErrors = {};
  if ('users' in rule && (!Array.isArray(rule.users) || rule.users.length === 0))
    errors.users = ['needs someone to give inquiries to'];
  const match = (rule.match ?? {}) as Record<string, unknown>;
  // A condition on a reference of the inquiry (its service, its source) must name a record of that resource.
  for (const [key, value] of Object.entries(match)) {
    const target = inquiry.field(key)?.target;
    if (!target) continue;
    const id = Number(value);
    if (!Number.isSafeInteger(id) || id < 1 || !(await recordExists(trx, target, BigInt(id))))
      errors.match = [...(errors.match ?? []), `${key}: there is no ${target.singular} #${String(value)}`];
  }
  if (Object.keys(errors).length)
    throw new AppError(422, 'validation_failed', 'The request has invalid fields.', errors);
}

export const assignmentRuleRules: RecordHooks = {
  beforeCreate: (trx, _ctx, values) => checkRule(trx, values),
  beforeUpdate: (trx, _ctx, _before, changes) => checkRule(trx, changes),
};
