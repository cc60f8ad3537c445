// Reads a write request's body against a resource declaration: every field's
// kind checks its own value; unknown fields are refused, read-only ones ignored.
import { FieldErrorBag, validationFailed } from '../errors.ts';
import { countsOf, type Resource } from '../schema/resource.ts';
import type { Row } from './repository.ts';

export type WriteMode = 'create' | 'update';

export function readInput(resource: Resource, body: unknown, mode: WriteMode): Row {
  const source = body ?? {};
  if (typeof source !== 'object' || Array.isArray(source)) {
    throw validationFailed({}, 'The request body must be a JSON object of field values.');
  }
  const bag = new FieldErrorBag();
  const values: Row = {};
  // What a response adds to the fields (a user's two_factor_enabled, a contact's inquiries_count) comes back ignored.
  const answered = new Set([...Object.keys(resource.computed), ...countsOf(resource).map((c) => c.field.countAs!)]);
  for (const [name, raw] of Object.entries(source)) {
    const field = resource.field(name);
    if (field?.readOnly || (!field && answered.has(name))) continue;
    if (!field?.fillable) {
      bag.add(name, 'is not a field you can write');
      continue;
    }
    // A required text is not given by blanks either (Laravel's `required` reads it so too).
    const blank =
      raw === null || (field.required && field.kind.textual && typeof raw === 'string' && raw.trim() === '');
    if (blank) {
      if (field.nullable) values[name] = null;
      else bag.add(name, 'is required');
      continue;
    }
    const parsed = field.kind.fromJson(raw, field);
    if (parsed.ok) values[name] = parsed.value;
    else bag.add(name, parsed.message);
  }
  if (mode === 'create') {
    for (const field of resource.writable) {
      if (field.required && field.default === undefined && !(field.name in values) && !bag.errors[field.name])
        bag.add(field.name, 'is required');
    }
  }
  bag.throwIfAny();
  return values;
}
