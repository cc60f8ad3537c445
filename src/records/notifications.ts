// Notifications (CONTRACT.md, "Assignment, notifications, tasks"): what tells a
// team member about work. A write that gives someone work (an assignee field
// set to them by someone else) or mentions them in a note adds their
// notification in the write's own transaction, so it exists exactly when the
// change does; a task coming due is found by the scheduler, once per task and
// due time (the `dedupe` key). The row is also the mail's outbox: a user who
// wants mail gets `mail_pending`, and the scheduler's holder sends pending mails
// after the commit and clears the flag after each send. A crash between commit
// and send loses nothing (the flag is still set); one between send and clearing
// sends that mail again, with the same Message-ID, which mail clients take as
// one message (at least once, deduplicated by a stable id: DESIGN.md).
import { asRecordTables, type Executor } from '../db/tables.ts';
import { AppError } from '../errors.ts';
import type { Field, Resource } from '../schema/resource.ts';
import { readCursor } from './change-log.ts';
import type { Context } from './context.ts';
import type { Row } from './repository.ts';

export const NOTIFICATION_KINDS = ['assigned', 'mentioned', 'task_due', 'overdue', 'webhook_disabled'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface Notice {
  user_id: bigint;
  kind: NotificationKind;
  /** The record it is about: a resource's name and an id. */
  resource: string;
  record_id: bigint;
  /** Set for a notice that may be found twice (a task due): the second is not added. */
  dedupe?: string;
}

export interface Notification {
  id: bigint;
  at: string;
  kind: NotificationKind;
  read: boolean;
  record: { resource: string; id: bigint; title: string | null };
}

const PER_PAGE = 25;
/** Most rows one INSERT carries (seven parameters each, under SQLite's limit). */
const PER_STATEMENT = 3000;
/** Mails one run of the outbox sends at most (the next run sends the rest). */
const MAILS_PER_RUN = 100;

const nowIso = () => new Date().toISOString();
const sameId = (a: unknown, b: unknown) => a !== null && a !== undefined && String(a) === String(b);

/** Adds notices in the caller's transaction: only to active accounts, each mailed when its user asks for mail. */
export async function notify(trx: Executor, notices: readonly Notice[]): Promise<void> {
  if (notices.length === 0) return;
  const users = await trx
    .selectFrom('users')
    .select(['id', 'notify_email'])
    .where('id', 'in', [...new Set(notices.map((n) => n.user_id))])
    .where('active', '=', true)
    .execute();
  const mail = new Map(users.map((u) => [String(u.id), Boolean(u.notify_email)]));
  const at = nowIso();
  const rows = notices
    .filter((n) => mail.has(String(n.user_id)))
    .map((n) => ({
      user_id: n.user_id,
      kind: n.kind,
      resource: n.resource,
      record_id: n.record_id,
      dedupe: n.dedupe ?? null,
      at,
      mail_pending: mail.get(String(n.user_id))!,
    }));
  for (let start = 0; start < rows.length; start += PER_STATEMENT)
    await trx
      .insertInto('notifications')
      .values(rows.slice(start, start + PER_STATEMENT))
      .onConflict((oc) => oc.column('dedupe').doNothing())
      .execute();
}

/** The fields that give a record to someone (an inquiry's or a task's assignee). */
const assigneeFields = (resource: Resource): Field[] => resource.fields.filter((f) => f.assignee);

/**
 * The notices of records written (created: `before` null) whose assignee became someone other than the writer:
 * "assigned to you". Every write path calls it with what it wrote (`values`), in its transaction; an import (a file
 * or the command line) tells nobody.
 */
export async function noticeAssignments(
  trx: Executor,
  ctx: Context,
  resource: Resource,
  written: readonly { id: bigint; before: Row | null; values: Row }[],
): Promise<void> {
  const fields = assigneeFields(resource);
  // An import (a file, or the command line's import and seed) brings work that exists already: it is not news, and
  // a mail per row of a 100,000-row file would bury everything else.
  if (fields.length === 0 || ctx.via === 'import' || ctx.via === 'cli') return;
  const notices: Notice[] = [];
  for (const { id, before, values } of written) {
    for (const field of fields) {
      const to = values[field.name];
      if (to === null || to === undefined || sameId(to, before?.[field.name]) || sameId(to, ctx.actor?.id)) continue;
      notices.push({ user_id: BigInt(String(to)), kind: 'assigned', resource: resource.name, record_id: id });
    }
  }
  await notify(trx, notices);
}

/** Where a notification points: the record, or (a note) the record the note is on. */
export interface NotificationTarget {
  resource: string;
  id: bigint;
}

/** A user's notifications, newest first, `PER_PAGE` at a time, with the titles of their records as they are now. */
export async function listNotifications(
  db: Executor,
  userId: bigint,
  resources: readonly Resource[],
  cursor?: string,
): Promise<{ data: Notification[]; meta: { next_cursor: string | null; unread: number } }> {
  // An id past any id's range is no cursor either (a 422, not a failed query).
  const after = readCursor(cursor);
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'at', 'kind', 'resource', 'record_id', 'read_at'])
    .where('user_id', '=', userId)
    .$if(after !== undefined, (q) => q.where('id', '<', after!))
    .orderBy('id', 'desc')
    .limit(PER_PAGE + 1)
    .execute();
  const page = rows.slice(0, PER_PAGE);
  const titles = await titlesOf(
    db,
    resources,
    page.map((r) => ({ resource: r.resource, id: BigInt(String(r.record_id)) })),
  );
  return {
    data: page.map((r) => ({
      id: BigInt(String(r.id)),
      at: new Date(r.at).toISOString(),
      kind: r.kind as NotificationKind,
      read: r.read_at !== null,
      record: {
        resource: r.resource,
        id: BigInt(String(r.record_id)),
        title: titles.get(`${r.resource}:${String(r.record_id)}`) ?? null,
      },
    })),
    meta: {
      next_cursor: rows.length > PER_PAGE ? String(page[page.length - 1]!.id) : null,
      unread: await unreadCount(db, userId),
    },
  };
}

/** The titles of records by `resource:id`; a record that is gone has none. */
export async function titlesOf(
  db: Executor,
  resources: readonly Resource[],
  targets: readonly NotificationTarget[],
): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  for (const resource of resources) {
    const ids = [...new Set(targets.filter((t) => t.resource === resource.name).map((t) => String(t.id)))];
    if (ids.length === 0) continue;
    const pk = resource.primaryKey.name;
    const title = resource.title.name;
    const found = await asRecordTables(db)
      .selectFrom(resource.table)
      .select([pk, title])
      .where(pk, 'in', ids.map(BigInt))
      .execute();
    for (const row of found) titles.set(`${resource.name}:${String(row[pk])}`, String(row[title] ?? `#${row[pk]}`));
  }
  return titles;
}

export async function unreadCount(db: Executor, userId: bigint): Promise<number> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Marks some of a user's notifications read (`{ids}`), or all of them (`{all: true}`); answers how many. */
export async function markRead(db: Executor, userId: bigint, body: unknown): Promise<number> {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const all = b.all === true || b.all === 'true';
  const raw = Array.isArray(b.ids) ? b.ids : b.ids === undefined ? [] : [b.ids];
  const ids = raw.map(String);
  if (!all && (ids.length === 0 || ids.length > 1000 || ids.some((id) => !/^\d{1,19}$/.test(id))))
    throw new AppError(422, 'validation_failed', 'Say which notifications are read: {ids: [...]} or {all: true}.', {
      ids: ['must be 1 to 1,000 notification ids, or send all: true'],
    });
  const result = await db
    .updateTable('notifications')
    .set({ read_at: nowIso() })
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .$if(!all, (q) => q.where('id', 'in', ids.map(BigInt)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Seeing a record reads what told the viewer about it. */
export async function markSeen(db: Executor, userId: bigint, resource: string, id: bigint): Promise<void> {
  await db
    .updateTable('notifications')
    .set({ read_at: nowIso() })
    .where('user_id', '=', userId)
    .where('resource', '=', resource)
    .where('record_id', '=', id)
    .where('read_at', 'is', null)
    .execute();
}

/** What a notification says, in a sentence that names its record. */
export function describe(kind: NotificationKind, label: string, title: string | null): string {
  const what = title === null ? `a deleted ${label.toLowerCase()}` : `${label} “${title}”`;
  switch (kind) {
    case 'assigned':
      return `${what} was assigned to you`;
    case 'mentioned':
      return `You were mentioned in a note on ${what}`;
    case 'task_due':
      return `Your task ${title === null ? '(deleted)' : `“${title}”`} is due`;
    case 'overdue':
      return `${what} is overdue: nobody has answered it yet`;
    case 'webhook_disabled':
      return `${what} was turned off: its endpoint kept failing or is gone (see its deliveries)`;
  }
}

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  link: string;
  /** The Message-ID's left part: the same for a mail sent again. */
  id: string;
}

/**
 * Sends the outbox's pending mails, oldest first, each marked sent once its send succeeded (see the top of the file);
 * answers how many went. A send that fails ends the run (the mail server is likely away): that mail and the rest
 * stay pending for the next run.
 */
export async function sendNotificationMails(
  db: Executor,
  resources: readonly Resource[],
  appUrl: string,
  send: (mail: OutgoingMail) => Promise<void>,
  held: () => Promise<boolean>,
): Promise<number> {
  const pending = await db
    .selectFrom('notifications')
    .innerJoin('users', 'users.id', 'notifications.user_id')
    .select([
      'notifications.id as id',
      'notifications.kind as kind',
      'notifications.resource as resource',
      'notifications.record_id as record_id',
      'users.email as email',
    ])
    .where('notifications.mail_pending', '=', true)
    .orderBy('notifications.id')
    .limit(MAILS_PER_RUN)
    .execute();
  const titles = await titlesOf(
    db,
    resources,
    pending.map((p) => ({ resource: p.resource, id: BigInt(String(p.record_id)) })),
  );
  let sent = 0;
  for (const p of pending) {
    // Another process took the scheduler over (this one stalled past its lease): the rest are its to send.
    if (!(await held())) break;
    const resource = resources.find((r) => r.name === p.resource);
    const title = titles.get(`${p.resource}:${String(p.record_id)}`) ?? null;
    const sentence = describe(p.kind as NotificationKind, resource?.label ?? p.resource, title);
    const link = `${appUrl}/${p.resource}/${String(p.record_id)}`;
    await send({
      to: p.email,
      subject: sentence,
      text:
        `${sentence}.\n\nOpen it: ${link}\n\n` +
        `You get these mails because "Email my notifications" is on in your profile (${appUrl}/profile).\n`,
      link,
      id: `notification-${String(p.id)}`,
    });
    await db
      .updateTable('notifications')
      .set({ mail_pending: false, mailed_at: nowIso() })
      .where('id', '=', p.id)
      .execute();
    sent++;
  }
  return sent;
}

/** What came due: a record, its assignee, its due time. */
type Due = { id: unknown; assigned_to: unknown; due_at: unknown };

/** Tells each assignee once per record and due time (the key holds the due time: moved later, it tells again). */
function noticeDue(db: Executor, kind: NotificationKind, resource: string, due: readonly Due[]): Promise<void> {
  return notify(
    db,
    due.map((r) => ({
      user_id: BigInt(String(r.assigned_to)),
      kind,
      resource,
      record_id: BigInt(String(r.id)),
      dedupe: `${kind}:${String(r.id)}:${new Date(String(r.due_at)).toISOString()}`,
    })),
  );
}

/**
 * The scheduler's reminders (see noticeDue). Each looks at what fell due since `since` or changed since then (a due
 * time moved into the past), so that a run reads only what is new. A task due tells its assignee; so does an open
 * inquiry past its due time with no response yet ("your inquiry is overdue").
 */
export async function remindDueTasks(db: Executor, since: Date, now = new Date()): Promise<void> {
  const due = await db
    .selectFrom('tasks')
    .select(['id', 'assigned_to', 'due_at'])
    .where('done_at', 'is', null)
    .where('assigned_to', 'is not', null)
    .where('due_at', '<=', now.toISOString())
    .where((eb) => eb.or([eb('due_at', '>', since.toISOString()), eb('updated_at', '>', since.toISOString())]))
    .execute();
  await noticeDue(db, 'task_due', 'tasks', due);
}

export async function noticeOverdue(db: Executor, since: Date, now = new Date()): Promise<void> {
  const open = (await db.selectFrom('stages').select('id').where('kind', '=', 'open').execute()).map((s) =>
    Number(s.id),
  );
  if (open.length === 0) return;
  const late = await db
    .selectFrom('inquiries')
    .select(['id', 'assigned_to', 'due_at'])
    .where('first_response_at', 'is', null)
    .where('assigned_to', 'is not', null)
    .where('due_at', '<=', now.toISOString())
    .where('stage_id', 'in', open)
    .where((eb) => eb.or([eb('due_at', '>', since.toISOString()), eb('updated_at', '>', since.toISOString())]))
    .execute();
  await noticeDue(db, 'overdue', 'inquiries', late);
}
