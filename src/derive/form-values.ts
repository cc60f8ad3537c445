// HTML forms send every value as text. This turns a form's fields into what
// the JSON API would send, so the same operation validates both doors: an
// empty box means "not set", a tri-state radio sends true/false/"", and
// anything unreadable is passed through for the field kind to refuse by name.
import type { Field, Resource } from '../schema/resource.ts';

function formValue(field: Field, raw: string): unknown {
  const kind = field.kind.name;
  if (kind === 'boolean') {
    if (raw === '' || raw === 'null') return null;
    if (raw === 'true' || raw === '1' || raw === 'on') return true;
    if (raw === 'false' || raw === '0') return false;
    return raw;
  }
  if (raw.trim() === '') return field.nullable ? null : raw;
  if (kind === 'integer' && /^\s*-?\d+\s*$/.test(raw)) return Number(raw.trim());
  if (kind === 'bigInteger' || kind === 'dateTime') return raw.trim();
  return raw;
}

/** The writable fields present in a form, as JSON-API input. */
export function formInput(resource: Resource, form: Record<string, unknown>, fields: readonly Field[] = resource.writable): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    if (!Object.hasOwn(form, field.name)) continue;
    let raw = form[field.name];
    if (Array.isArray(raw)) raw = raw.at(-1);
    if (typeof raw !== 'string') continue;
    // An empty password box on an edit form means "keep the current one".
    if (field.kind.name === 'password' && raw === '') continue;
    input[field.name] = formValue(field, raw);
  }
  return input;
}
