// Which field each column of an imported file fills. A header matches a field
// by its name or its label, ignoring case, spaces, `-` and `_` ("E-mail" is
// `email`, "Assigned to" is `assigned_to`), or by a well-known synonym
// ("Mobile" is the phone); what a user mapped by hand before for this resource
// is remembered and offered again; a mapping given with the file overrides all
// of that. A column that fills no field is left out, and said so.
import type { Executor } from '../db/tables.ts';
import { validationFailed, type FieldErrors } from '../errors.ts';
import type { Field, Resource } from '../schema/resource.ts';

/** A column of the file and the field it fills (null: left out). */
export interface ColumnMapping {
  header: string;
  field: string | null;
}

/** A header reduced to what matching compares: no case, spaces, `-`, `_` or dots. */
export const headerKey = (header: string) => header.toLowerCase().replace(/[\s\-_.]+/g, '');

/**
 * Other words spreadsheets and other CRMs use for a field, by field name (any resource with such a field). The
 * company someone works for is the seed's occupation: the one field where a lead's line of work is kept.
 */
const SYNONYMS: Record<string, readonly string[]> = {
  email: ['e-mail', 'email address', 'e-mail address', 'mail', 'electronic mail'],
  phone: ['mobile', 'mobile phone', 'mobile number', 'cell', 'cell phone', 'telephone', 'tel', 'phone number'],
  name: ['full name', 'contact name', 'customer', 'customer name', 'lead name'],
  occupation: ['company', 'company name', 'organisation', 'organization', 'employer', 'job title', 'position'],
  address: ['street', 'street address', 'address line 1'],
  city: ['town', 'locality'],
  country: ['country name', 'nation'],
  detail: ['details', 'notes', 'description', 'message', 'comment'],
  service_id: ['service', 'product', 'interested in'],
  source_id: ['source', 'lead source', 'channel'],
  assigned_to: ['assignee', 'owner', 'agent', 'assigned'],
  stage_id: ['stage', 'status stage', 'pipeline stage'],
  contact_id: ['contact'],
};

/** The fields an import fills, and the read-only ones it takes back from an export without writing them. */
export function importFields(resource: Resource): { writable: Field[]; readOnly: Field[] } {
  return { writable: [...resource.writable], readOnly: resource.visible.filter((f) => f.readOnly) };
}

/** Every field a header may name, by header key: names first, then labels, then synonyms (first come, first kept). */
function fieldsByKey(resource: Resource): Map<string, Field> {
  const { writable, readOnly } = importFields(resource);
  const fields = [...writable, ...readOnly];
  const byKey = new Map<string, Field>();
  const add = (key: string, field: Field) => {
    if (!byKey.has(key)) byKey.set(key, field);
  };
  for (const f of fields) add(headerKey(f.name), f);
  for (const f of fields) add(headerKey(f.label), f);
  for (const f of fields) for (const word of SYNONYMS[f.name] ?? []) add(headerKey(word), f);
  return byKey;
}

/** What users mapped headers to before, for this resource, by header key. */
export async function rememberedMappings(db: Executor, resource: Resource): Promise<Map<string, string | null>> {
  const rows = await db
    .selectFrom('import_mappings')
    .select(['header', 'field'])
    .where('resource', '=', resource.name)
    .execute();
  return new Map(rows.map((r) => [r.header, r.field]));
}

/** Remembers the choices of a mapping given by hand (header key → field, or null: left out). */
export async function rememberMappings(db: Executor, resource: Resource, chosen: Record<string, string | null>) {
  const updated_at = new Date().toISOString();
  for (const [header, field] of Object.entries(chosen)) {
    const key = headerKey(header).slice(0, 255);
    if (!key) continue;
    await db
      .insertInto('import_mappings')
      .values({ resource: resource.name, header: key, field, updated_at })
      .onConflict((oc) => oc.columns(['resource', 'header']).doUpdateSet({ field, updated_at }))
      .execute();
  }
}

/**
 * A mapping sent with a file (`{"E-mail address": "email", "City": null}`), checked: an object of header → field
 * name (or null or "" to leave the column out); else a 422 naming `mapping`.
 */
export function readMapping(resource: Resource, raw: unknown): Record<string, string | null> {
  if (raw === undefined || raw === null || raw === '') return {};
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw validationFailed({ mapping: ['must be a JSON object of header to field, e.g. {"E-mail": "email"}'] });
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw validationFailed({ mapping: ['must be a JSON object of header to field, e.g. {"E-mail": "email"}'] });
  const { writable } = importFields(resource);
  const out: Record<string, string | null> = Object.create(null);
  const wrong: string[] = [];
  for (const [header, field] of Object.entries(value)) {
    if (field === null || field === '') out[header] = null;
    else if (typeof field === 'string' && writable.some((f) => f.name === field)) out[header] = field;
    else
      wrong.push(
        `${header}: ${typeof field === 'string' ? `${field} is not a field you can import` : 'not a field name'}`,
      );
  }
  if (wrong.length)
    throw validationFailed(
      { mapping: wrong },
      `The mapping names fields ${resource.name} cannot import. ` +
        `Fields you can import: ${writable.map((f) => f.name).join(', ')}.`,
    );
  return out;
}

/**
 * The field of each column: the mapping given, else the header's name, label or synonym, else what was chosen for
 * it before. Two columns filling one field, a column without a name that is mapped, or a file that fills no field
 * at all are 422s before anything is read.
 */
export function mapColumns(
  resource: Resource,
  headers: string[],
  given: Record<string, string | null>,
  remembered: Map<string, string | null>,
): ColumnMapping[] {
  const byKey = fieldsByKey(resource);
  const givenByKey = new Map(Object.entries(given).map(([h, f]) => [headerKey(h), f]));
  const columns = headers.map((raw): ColumnMapping => {
    const header = raw.trim();
    const key = headerKey(header);
    if (Object.hasOwn(given, header) || givenByKey.has(key))
      return { header, field: Object.hasOwn(given, header) ? given[header]! : givenByKey.get(key)! };
    const field = byKey.get(key);
    if (field) return { header, field: field.name };
    const before = remembered.get(key);
    return { header, field: before && resource.field(before)?.fillable ? before : null };
  });
  const errors: FieldErrors = Object.create(null);
  const seen = new Map<string, string>();
  for (const { header, field } of columns) {
    if (!field) continue;
    if (seen.has(field))
      errors[header || '(no name)'] = [
        `fills ${field}, as the column "${seen.get(field)}" does: leave one of them out`,
      ];
    seen.set(field, header);
  }
  if (Object.keys(errors).length)
    throw validationFailed(
      errors,
      `Two columns fill the same field. Map one of them to another field, or leave it out.`,
    );
  if (!columns.some((c) => c.field && resource.field(c.field)?.fillable)) {
    const importable = importFields(resource)
      .writable.map((f) => f.name)
      .join(', ');
    throw validationFailed(
      { file: [`has no column ${resource.name} can import (its header row is ${headers.join(', ')})`] },
      `No column of the file matches a field of ${resource.name}. Map the columns, or name them: ${importable}.`,
    );
  }
  return columns;
}
