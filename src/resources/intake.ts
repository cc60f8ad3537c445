// Inquiries that arrive by themselves (CONTRACT.md, "Intake"): a public form's
// submission becomes an inquiry through the same create as any other (the
// contact match, then the assignment rules), by the system (`via: intake`, no
// creator). What does not come from a person is answered as if it did and
// stored nowhere, only counted for the form: a filled trap field (`website`),
// or a hosted form sent within 2 s of being served or after 24 h (its render
// token, signed with the app's key, says when). The count is kept outside the
// form's record: it is no change of the form (no log entry, the same ETag). An
// `Idempotency-Key` is kept for 24 hours with a hash of the submission, in the
// create's transaction: the same key and body answer the same reference and
// create nothing; another body is refused.
import { AppError, FieldErrorBag } from '../errors.ts';
import type { Database } from '../db/connection.ts';
import { isUniqueViolation } from '../db/dialect.ts';
import type { Executor } from '../db/tables.ts';
import { createRecord } from '../records/operations.ts';
import type { Row } from '../records/repository.ts';
import { formats } from '../schema/formats.ts';
import { INTAKE_FIELDS } from './intake-form.ts';
import { inquiry } from './inquiry.ts';
import { hmac, randomToken, safeEqual, sha256 } from '../accounts/secrets.ts';

/** How long a hosted form's token and an idempotency key live. */
export const DAY_MS = 24 * 60 * 60 * 1000;
/** A person needs longer than this to fill in a form. */
const TOO_FAST_MS = 2000;
/** The fields a submission may carry besides the form's: the trap, the hosted form's token. */
export const TRAP = 'website';
export const TOKEN = '_t';
const MAX_KEY = 255;

export interface IntakeForm {
  id: bigint;
  slug: string;
  fields: string[];
  required: string[];
  source_id: number | null;
  service_id: number | null;
  success_message: string;
  allowed_origins: string[];
}

/** The active form with this slug (an address that cannot be a slug names none: a NUL would not reach PostgreSQL). */
export async function findForm(db: Executor, slug: string): Promise<IntakeForm | undefined> {
  if (!formats.slug.parse(slug).ok || slug.length > 60) return undefined;
  const row = await db
    .selectFrom('intake_forms')
    .selectAll()
    .where('slug', '=', slug)
    .where('active', '=', true)
    .executeTakeFirst();
  if (!row) return undefined;
  const list = (v: string | null) => (v ? (JSON.parse(v) as string[]) : []);
  const required = list(row.required);
  return {
    id: BigInt(String(row.id)),
    slug: row.slug,
    // A required field is asked, whether or not the fields name it.
    fields: [...new Set([...list(row.fields), ...required])],
    required,
    source_id: row.source_id === null ? null : Number(row.source_id),
    service_id: row.service_id === null ? null : Number(row.service_id),
    success_message: row.success_message,
    allowed_origins: list(row.allowed_origins),
  };
}

/** The hosted form's render token: when it was served, signed for this form. */
export function renderToken(key: Buffer, form: IntakeForm, now = Date.now()): string {
  return `${now}.${hmac(key, `intake ${String(form.id)} ${now}`)}`;
}

/** How long ago a token was served; null when it is not one of ours for this form. */
function tokenAge(key: Buffer, form: IntakeForm, token: unknown, now: number): number | null {
  const [at, signature] = typeof token === 'string' ? token.split('.') : [];
  if (!at || !signature || !/^\d{1,15}$/.test(at)) return null;
  return safeEqual(signature, hmac(key, `intake ${String(form.id)} ${at}`)) ? now - Number(at) : null;
}

/** Why a submission is spam: the trap filled in; a hosted form's token missing or forged, too fresh or too old. */
export type DropReason = 'honeypot' | 'bad_token' | 'too_fast' | 'expired';

export interface Received {
  reference: string;
  /** Thrown away as spam (answered the same way), and why; null when received. */
  dropped: DropReason | null;
}

const present = (v: unknown) => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** Why a submission is spam, if it is (see the top of the file). */
function spam(key: Buffer, form: IntakeForm, body: Row, hosted: boolean): DropReason | null {
  if (present(body[TRAP])) return 'honeypot';
  if (!hosted) return null;
  const age = tokenAge(key, form, body[TOKEN], Date.now());
  if (age === null) return 'bad_token';
  if (age < TOO_FAST_MS) return 'too_fast';
  return age > DAY_MS ? 'expired' : null;
}

/** The submission as inquiry input: only the form's fields, checked against it; the form's source and service. */
function inquiryInput(form: IntakeForm, body: Row): Row {
  const bag = new FieldErrorBag();
  for (const name of Object.keys(body))
    if (name !== TRAP && name !== TOKEN && !form.fields.includes(name))
      bag.add(
        name,
        (INTAKE_FIELDS as readonly string[]).includes(name)
          ? 'is not asked by this form'
          : 'is not a field of this form',
      );
  for (const name of form.required) if (!present(body[name])) bag.add(name, 'is required');
  bag.throwIfAny('The form has invalid fields.');
  const input: Row = Object.fromEntries(form.fields.filter((f) => present(body[f])).map((f) => [f, body[f]]));
  if (form.source_id !== null) input.source_id = form.source_id;
  if (form.service_id !== null) input.service_id = form.service_id;
  return input;
}

class KeyTaken extends Error {}

/** Stores the key of this submission unless it is there already (then KeyTaken rolls the create back). */
async function keep(trx: Executor, form: IntakeForm, key: string, hash: string, reference: string): Promise<void> {
  // A plain insert that a key already kept refuses: MariaDB answers an upsert's RETURNING with the row it kept.
  try {
    await trx
      .insertInto('idempotency_keys')
      .values({ scope: `intake:${form.slug}`, key, body_hash: hash, reference, created_at: new Date().toISOString() })
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw new KeyTaken();
    throw error;
  }
}

/** The answer kept for this key within the last 24 hours, if any: its reference, and the hash of its body. */
function kept(db: Executor, form: IntakeForm, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['body_hash', 'reference'])
    .where('scope', '=', `intake:${form.slug}`)
    .where('key', '=', key)
    .where('created_at', '>', new Date(Date.now() - DAY_MS).toISOString())
    .executeTakeFirst();
}

/** The kept reference when the body is the same; 422 when the key was kept for another body. */
function sameBody(row: { body_hash: string; reference: string }, hash: string): string {
  if (row.body_hash !== hash)
    throw new AppError(
      422,
      'idempotency_key_reused',
      'This Idempotency-Key was used in the last 24 hours for another submission.',
      { 'Idempotency-Key': ['was used for another body'] },
    );
  return row.reference;
}

/** A submission's fingerprint, its fields in name order (a whole number past 2^53 arrives as a BigInt: kept apart). */
const hashOf = (input: Row) =>
  sha256(
    JSON.stringify(
      Object.entries(input).sort(([a], [b]) => a.localeCompare(b)),
      (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v),
    ),
  );

/**
 * Takes one submission (see the top of the file). `hosted`: from the page at /f/<slug>, with its render token.
 * `throttle` counts it against the address's limit (and refuses it when over); a retry of a kept key is not counted.
 */
export async function receive(
  database: Database,
  signing: Buffer,
  form: IntakeForm,
  body: unknown,
  options: { hosted: boolean; idempotencyKey?: string; throttle: () => Promise<void> },
): Promise<Received> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError(422, 'validation_failed', 'Send the form’s fields as an object.', {
      body: ['must be an object of the form’s fields'],
    });
  const submitted = body as Row;
  const key = options.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > MAX_KEY))
    throw new AppError(422, 'validation_failed', 'The Idempotency-Key header is not usable.', {
      'Idempotency-Key': [`must be 1 to ${MAX_KEY} characters`],
    });
  const earlier = key === undefined ? undefined : await kept(database.db, form, key);
  if (earlier) return { reference: sameBody(earlier, hashOf(inquiryInput(form, submitted))), dropped: null };
  await options.throttle();
  const dropped = spam(signing, form, submitted, options.hosted);
  if (dropped) {
    await database.db
      .insertInto('intake_form_drops')
      .values({ form_id: form.id, dropped: 1n })
      .onConflict((oc) =>
        oc.column('form_id').doUpdateSet((eb) => ({ dropped: eb('intake_form_drops.dropped', '+', 1n) })),
      )
      .execute();
    // Answered as a person's would be: a retry with its key gets the same reference (derived, so kept nowhere).
    const reference =
      key === undefined ? randomToken(12) : hmac(signing, `dropped ${form.id} ${key} ${hashOf(submitted)}`);
    return { reference: reference.slice(0, 16), dropped };
  }
  const input = inquiryInput(form, submitted);
  const hash = hashOf(input);
  const reference = randomToken(12);
  try {
    await createRecord(
      { database, via: 'intake', actor: { id: 0n, role: 'admin' } },
      inquiry,
      input,
      key === undefined ? undefined : (trx) => keep(trx, form, key, hash, reference),
    );
  } catch (error) {
    if (!(error instanceof KeyTaken)) throw error;
    // Another process's submission with this key committed first: answer as it was answered.
    const first = await kept(database.db, form, key!);
    if (first) return { reference: sameBody(first, hash), dropped: null };
    throw error;
  }
  return { reference, dropped: null };
}

/** How many submissions each form dropped as spam, by form id. */
export async function droppedCounts(db: Executor): Promise<Map<string, number>> {
  const rows = await db.selectFrom('intake_form_drops').select(['form_id', 'dropped']).execute();
  return new Map(rows.map((r) => [String(r.form_id), Number(r.dropped)]));
}

/** Forgets idempotency keys older than 24 hours (the scheduler). */
export async function purgeIdempotencyKeys(db: Executor): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(Date.now() - DAY_MS).toISOString())
    .execute();
}
