// HTML forms and CSV files send every value as text. This turns a form's
// fields into what the JSON API would send, so the same operation validates
// both doors: an empty box means "not set" (a kind with options reads its own
// "not set"), the rest is read by the field's kind, and anything unreadable is
// passed through for the kind to refuse by name.
import type { Field, Resource } from '../schema/resource.ts';

function formValue(field: Field, raw: string): unknown {
  if (!field.kind.options && raw.trim() === '') return field.nullable ? null : raw;
  return field.kind.fromForm(raw);
}

/** The writable fields present in a form, as JSON-API input. */
export function formInput(
  resource: Resource,
  form: Record<string, unknown>,
  fields: readonly Field[] = resource.writable,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    if (!Object.hasOwn(form, field.name)) continue;
    let raw = form[field.name];
    // A list's ticked boxes come as many values of one name, its lines as one.
    if (Array.isArray(raw)) raw = field.kind.name === 'list' ? raw.join('\n') : raw.at(-1);
    if (typeof raw !== 'string') continue;
    // An empty password box on an edit form means "keep the current one".
    if (field.kind.writeOnly && raw === '') continue;
    input[field.name] = formValue(field, raw);
  }
  return input;
}
