// Small readers for the account endpoints' bodies; every problem names its field.
import { AppError, FieldErrorBag } from '../errors.ts';
import { parseText } from '../schema/values.ts';
import { passwordProblems } from './passwords.ts';

export type Body = Record<string, unknown>;

/** The body as an object with only the named keys; anything else is a 422 naming it. */
export function bodyWith(body: unknown, allowed: readonly string[]): Body {
  const source = body ?? {};
  if (typeof source !== 'object' || Array.isArray(source))
    throw new AppError(422, 'validation_failed', 'The request body must be a JSON object.');
  const bag = new FieldErrorBag();
  for (const key of Object.keys(source)) if (!allowed.includes(key)) bag.add(key, 'is not a field this request takes');
  bag.throwIfAny();
  return source as Body;
}

/** A required string field, checked as sent (never trimmed). */
export function text(body: Body, name: string, bag: FieldErrorBag, max = 255): string {
  const value = body[name];
  if (value === undefined || value === null || value === '') {
    bag.add(name, 'is required');
    return '';
  }
  // The same text rules as record fields: no NUL (PostgreSQL cannot hold one, even in
  // a query parameter) and no lone surrogate (it would become U+FFFD on the way in).
  const parsed = parseText(value, max);
  if (!parsed.ok) {
    bag.add(name, parsed.message);
    return '';
  }
  return parsed.value;
}

export function optionalText(body: Body, name: string, bag: FieldErrorBag, max = 255): string | undefined {
  return body[name] === undefined || body[name] === null ? undefined : text(body, name, bag, max);
}

export function optionalBoolean(body: Body, name: string, bag: FieldErrorBag): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    bag.add(name, 'must be true or false');
    return false;
  }
  return value;
}

/**
 * A new password (a reset, an invitation): required, then the password rules (accounts/passwords.ts), the same
 * messages whichever door it came through; an empty one is too short.
 */
export function newPassword(body: Body, name: string, bag: FieldErrorBag): string {
  const value = body[name];
  if (value === undefined || value === null) {
    bag.add(name, 'is required');
    return '';
  }
  const parsed = parseText(value, Number.MAX_SAFE_INTEGER);
  if (!parsed.ok) {
    bag.add(name, parsed.message);
    return '';
  }
  for (const problem of passwordProblems(parsed.value)) bag.add(name, problem);
  return parsed.value;
}
