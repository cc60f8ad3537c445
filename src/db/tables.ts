// The database's tables as Kysely sees them (`Kysely<DB>`). The record tables
// are derived from the resource declarations (each field's kind, choices and
// nullability); the account tables, created by the migrations
// 2026-11-22T0002-accounts and 2026-11-23T0001-invitations, are declared here
// by hand. Select types are what the drivers hand back (SQLite reads every
// integer as a BigInt and a boolean as 0/1; pg reads int8 as digits and a
// timestamp as a Date); insert and update types are what the app writes.
import type { ColumnType, Kysely } from 'kysely';
import type { contact } from '../resources/contact.ts';
import type { inquiry } from '../resources/inquiry.ts';
import type { user } from '../resources/user.ts';
import type { note } from '../resources/note.ts';
import type { service, source, stage } from '../resources/lookups.ts';
import type { view } from '../resources/view.ts';
import type { task } from '../resources/task.ts';
import type { assignmentRule } from '../resources/assignment-rule.ts';
import type { intakeForm } from '../resources/intake-form.ts';
import type { webhook } from '../resources/webhook.ts';
import type { KindName } from '../schema/kinds.ts';
import type { Declared, FieldDecl } from '../schema/resource.ts';

// A number may be compared with (where) any integer column; none reads back as one but a 32-bit integer on pg.
type Int = ColumnType<number | bigint, number, number | bigint>;
type BigInt64 = ColumnType<bigint | string | number, bigint | number | string, bigint | number | string>;
type Bool = ColumnType<boolean | number | bigint, boolean, boolean>;
type Instant = ColumnType<string | Date, string, string>;
/** A row id: the primary key of users, tokens; user_id elsewhere. */
type Id = ColumnType<bigint | string | number, bigint, bigint>;
type GeneratedId = ColumnType<bigint | string | number, bigint | undefined, never>;
type Nullable<C> =
  C extends ColumnType<infer S, infer I, infer U> ? ColumnType<S | null, I | null | undefined, U | null> : never;
/** A column the database fills when an insert leaves it out. */
type Defaulted<C> = C extends ColumnType<infer S, infer I, infer U> ? ColumnType<S, I | undefined, U> : never;

/** Each kind's column. */
interface KindColumns {
  string: ColumnType<string, string, string>;
  text: ColumnType<string, string, string>;
  integer: Int;
  bigInteger: BigInt64;
  boolean: Bool;
  dateTime: Instant;
  /** JSON text (the kind reads and writes it). */
  list: ColumnType<string, string, string>;
  map: ColumnType<string, string, string>;
  password: ColumnType<string, string, string>;
}

// Indexed by every KindName (a field's kind): a kind missing here fails to compile.
// A kind named by a string, or made for the field (the password's) and named by its `name`.
type KindOf<D extends FieldDecl> = D['kind'] extends KindName
  ? D['kind']
  : D['kind'] extends { name: infer N extends KindName }
    ? N
    : never;
type Choice<D extends FieldDecl> = D extends { choices: readonly (infer C extends string)[] }
  ? ColumnType<C, C, C>
  : KindColumns[KindOf<D>];
// As buildField decides: nullable when declared so, else when neither required nor the primary key.
type IsNullable<D extends FieldDecl> = D extends { nullable: boolean }
  ? D['nullable']
  : D extends { required: true }
    ? false
    : D extends { primary: true }
      ? false
      : true;
type ColumnOf<D extends FieldDecl> = D extends { primary: true }
  ? GeneratedId
  : IsNullable<D> extends false
    ? D extends { default: unknown }
      ? Defaulted<Choice<D>>
      : Choice<D>
    : Nullable<Choice<D>>;

/** The row type of a declared resource's table. */
export type RecordTable<R> =
  R extends Declared<infer F> ? { [K in keyof F as string extends K ? never : K]: ColumnOf<F[K]> } : never;

export interface ContactsTable extends RecordTable<typeof contact> {}
export interface InquiriesTable extends RecordTable<typeof inquiry> {}
export interface UsersTable extends RecordTable<typeof user> {}
export interface NotesTable extends RecordTable<typeof note> {}
export interface StagesTable extends RecordTable<typeof stage> {}
export interface SourcesTable extends RecordTable<typeof source> {}
export interface ServicesTable extends RecordTable<typeof service> {}
export interface ViewsTable extends RecordTable<typeof view> {}
export interface TasksTable extends RecordTable<typeof task> {}
export interface AssignmentRulesTable extends RecordTable<typeof assignmentRule> {}
export interface IntakeFormsTable extends RecordTable<typeof intakeForm> {}
export interface WebhooksTable extends RecordTable<typeof webhook> {}

/** An Idempotency-Key kept for 24 hours (migration 2026-11-25T0006): what it answered, for which body. */
export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  body_hash: string;
  reference: string;
  created_at: Instant;
}

/** Whose turn it is, per assignment rule (migration 2026-11-25T0004): the user it gave an inquiry to last. */
export interface AssignmentTurnsTable {
  rule_id: Id;
  last_user_id: Nullable<Id>;
}

/** Each intake form's count of submissions dropped as spam (migration 2026-11-25T0007), outside its record. */
export interface IntakeFormDropsTable {
  form_id: Id;
  dropped: BigInt64;
}

/** The columns a user chose for a resource's list (migration 2026-11-23T0010). */
export interface ListColumnsTable {
  user_id: Id;
  resource: string;
  columns: string;
}

/** Settings an admin keeps, by key, as JSON (migration 2026-11-23T0010): the words of the three states, for one. */
export interface SettingsTable {
  key: string;
  value: string;
  updated_at: Instant;
}

/** Server-side state of an account that is not part of the user record. */
export interface AccountStatesTable {
  user_id: Id;
  totp_last_step: Nullable<BigInt64>;
  consecutive_failures: Defaulted<Int>;
  reset_required: Defaulted<Bool>;
}

export interface SessionsTable {
  id: string;
  token_hash: string;
  user_id: Id;
  two_factor_pending: Defaulted<Bool>;
  remember_me: Defaulted<Bool>;
  password_confirmed_at: Nullable<Instant>;
  ip: string | null;
  user_agent: string | null;
  created_at: Instant;
  last_seen_at: Instant;
  expires_at: Instant;
}

export interface PersonalAccessTokensTable {
  id: GeneratedId;
  user_id: Id;
  name: string;
  token_hash: string;
  created_at: Instant;
  last_used_at: Nullable<Instant>;
  /** JSON text, a list of read/create/update/delete; null: all four (migration 2026-11-26T0004). */
  abilities: ColumnType<string | null, string | null | undefined, string | null>;
  /** Null: never expires. */
  expires_at: Nullable<Instant>;
  /** When the owner was mailed that the token expires within a week (once). */
  expiry_mailed_at: Nullable<Instant>;
}

/** One open mailed token per user: a password reset, or an invitation. */
export interface MailedTokensTable {
  user_id: Id;
  token_hash: string;
  created_at: Instant;
}

export interface AvatarsTable {
  user_id: Id;
  content_type: string;
  data: Uint8Array;
  updated_at: Instant;
}

/** Counters of @fastify/rate-limit (accounts/throttle.ts). */
export interface RateLimitsTable {
  key: string;
  hits: Int;
  /** Milliseconds since the epoch. */
  reset_at: ColumnType<number | bigint | string, number, number>;
}

/** Each record table's row count, kept by triggers (migration T0003). */
export interface RecordCountsTable {
  table_name: string;
  shard: Int;
  n: BigInt64;
}

/** One row (id 1), moved by triggers when a user, or a token's owner, abilities or expiry, changes (T0007). */
export interface AuthEpochTable {
  id: Int;
  n: BigInt64;
}

/** One entry of the change log (2026-11-23T0003-change-log): `changes` and `hidden_changed` are JSON text. */
export interface ChangeLogTable {
  id: GeneratedId;
  at: Instant;
  actor_id: Nullable<Id>;
  via: string;
  action: string;
  resource: string | null;
  record_id: Nullable<Id>;
  changes: string | null;
  hidden_changed: string | null;
  /** The entry this one follows from (2026-11-23T0004): a deletion's cascade, a restore's undone change. */
  cause_id: ColumnType<bigint | string | number | null, bigint | null | undefined, bigint | null>;
  /** The import that wrote it (2026-11-26T0001), which a rollback reads. */
  import_id: ColumnType<bigint | string | number | null, bigint | null | undefined, bigint | null>;
}

/** One import (migration 2026-11-26T0001): who, when, which file and how it was read, its counts. */
export interface ImportsTable {
  id: GeneratedId;
  resource: string;
  actor_id: Nullable<Id>;
  via: string;
  /** uploaded (the wizard holds the file) | running | done | failed (stopped part-way) | rolled_back */
  status: string;
  filename: string | null;
  file: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  size: Nullable<BigInt64>;
  encoding: string | null;
  delimiter: string | null;
  /** JSON: [{header, field}] as the file was mapped. */
  columns: string | null;
  upsert_by: string | null;
  bytes_read: Defaulted<BigInt64>;
  created: Defaulted<BigInt64>;
  updated: Defaulted<BigInt64>;
  unchanged: Defaulted<BigInt64>;
  failed: Defaulted<BigInt64>;
  error: string | null;
  started_at: Instant;
  heartbeat_at: Nullable<Instant>;
  finished_at: Nullable<Instant>;
  rolled_back_at: Nullable<Instant>;
  rolled_back_by: Nullable<Id>;
  /** JSON: what the rollback did ({removed, restored, skipped}). */
  rollback: string | null;
}

/** A row an import could not take, as it was read (cells, JSON) and why (errors, JSON). */
export interface ImportFailuresTable {
  import_id: Id;
  row_number: BigInt64;
  line: BigInt64;
  cells: string;
  errors: string;
}

/** Which field a header (normalised) was last mapped to, per resource; field null: the column was left out. */
export interface ImportMappingsTable {
  resource: string;
  header: string;
  field: string | null;
  updated_at: Instant;
}

/** What told a user about work (migration 2026-11-25T0002), and the outbox of its mail. */
export interface NotificationsTable {
  id: GeneratedId;
  user_id: Id;
  kind: string;
  resource: string;
  record_id: Id;
  at: Instant;
  read_at: Nullable<Instant>;
  mail_pending: Bool;
  mailed_at: Nullable<Instant>;
  dedupe: string | null;
}

/** Who holds a timed job's lease (the scheduler), until when. */
export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: Instant;
}

/** One event for one webhook endpoint, and how sending it went (migration 2026-11-26T0006). */
export interface WebhookDeliveriesTable {
  id: GeneratedId;
  webhook_id: Id;
  change_id: Nullable<Id>;
  event: string;
  /** The record the event is about (`contacts:12`): its deliveries to one endpoint go out in order. */
  queue: string;
  payload: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: Defaulted<Int>;
  next_attempt_at: Instant;
  claimed_by: Nullable<ColumnType<string, string, string>>;
  claimed_until: Nullable<Instant>;
  last_status_code: Nullable<Int>;
  last_error: Nullable<ColumnType<string, string, string>>;
  latency_ms: Nullable<Int>;
  response_excerpt: Nullable<ColumnType<string, string, string>>;
  created_at: Instant;
  last_attempt_at: Nullable<Instant>;
}

/** How far the webhook dispatcher has read the change log, and the ids below that it has not seen commit yet. */
export interface WebhookCursorTable {
  name: string;
  last_id: BigInt64;
  /** JSON: [[id, first missed at (ms)], …]. */
  gaps: string;
}

export interface DB {
  contacts: ContactsTable;
  inquiries: InquiriesTable;
  users: UsersTable;
  notes: NotesTable;
  stages: StagesTable;
  sources: SourcesTable;
  services: ServicesTable;
  views: ViewsTable;
  tasks: TasksTable;
  assignment_rules: AssignmentRulesTable;
  assignment_turns: AssignmentTurnsTable;
  intake_forms: IntakeFormsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_cursor: WebhookCursorTable;
  intake_form_drops: IntakeFormDropsTable;
  idempotency_keys: IdempotencyKeysTable;
  notifications: NotificationsTable;
  list_columns: ListColumnsTable;
  settings: SettingsTable;
  account_states: AccountStatesTable;
  sessions: SessionsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  password_resets: MailedTokensTable;
  invitations: MailedTokensTable;
  change_log: ChangeLogTable;
  imports: ImportsTable;
  import_failures: ImportFailuresTable;
  import_mappings: ImportMappingsTable;
  leases: LeasesTable;
  avatars: AvatarsTable;
  rate_limits: RateLimitsTable;
  record_counts: RecordCountsTable;
  auth_epoch: AuthEpochTable;
}

/** The database, or a transaction on it. */
export type Executor = Kysely<DB>;

/**
 * The one escape hatch: generic record code names its table and columns by the strings of a declaration (any
 * resource), which no static type can follow. It sees every table as rows of unknown values; everything else
 * uses `Kysely<DB>`.
 */
export type AnyRecordTables = Record<string, Record<string, unknown>>;
export const asRecordTables = (db: Executor): Kysely<AnyRecordTables> => db as unknown as Kysely<AnyRecordTables>;
