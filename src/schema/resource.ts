// Resource declarations: plain data, checked once when the module loads, so a
// wrong declaration stops the boot with a clear message instead of failing
// mid-request.
import { type FormatName, formats } from './formats.ts';
import { kinds, type FieldKind, type InputKind, type NamedKind } from './kinds.ts';
import { type Access, ADMIN_ACCESS, TEAM_ACCESS } from './roles.ts';

export type OnDelete = 'restrict' | 'set null' | 'cascade';

export interface FieldFlags {
  searchable: boolean;
  fillable: boolean;
  inForm: boolean;
  inIndex: boolean;
  inView: boolean;
}

/** What a declaration writes for one field; everything else has a default. */
export interface FieldDecl extends Partial<FieldFlags> {
  /** A kind by name, or a kind made for the field (`passwordKind(policy)`). */
  kind: NamedKind | FieldKind;
  input?: InputKind;
  max?: number;
  required?: boolean;
  /** May be set to null; by default every field that is not required may. */
  nullable?: boolean;
  label?: string;
  /** A sentence under the input of forms. */
  hint?: string;
  /** Never leaves the server: not in responses, logs, lists, filters or sorts. */
  hidden?: boolean;
  primary?: boolean;
  /** The seed's first integer flag. */
  autoIncrement?: boolean;
  /** The seed's second integer flag. */
  unsigned?: boolean;
  /** Maintained by the server (`created_at`, `updated_at`). */
  timestamp?: 'create' | 'update';
  /** Set to now when the named field is set and no value for this one is given. */
  defaultNowWhen?: string;
  /** The only values a text field may hold. */
  choices?: readonly string[];
  format?: FormatName;
  /** No two records share the value, compared case-insensitively. */
  unique?: boolean;
  /** Kept by the server's own flows (2FA, mail verification); ignored when a client sends it. */
  managed?: boolean;
  /** The value of a field left out of a create. */
  default?: unknown;
  /** Defaults to the signed-in user's id on create. */
  defaultActor?: boolean;
  /** Names the user who is to do the work: deleting that user needs the work moved to someone (`reassign_to`). */
  assignee?: boolean;
  /** The resource whose ids this field holds (shown by its title, chosen from a list): a foreign key. */
  references?: string;
  /**
   * What deleting the referenced record does to this one: refused, the reference cleared, or this record deleted too.
   */
  onDelete?: OnDelete;
  /**
   * The index pages offer to sort by it: a migration gives it an index on
   * (field, id), so every page, however deep, is one index walk. The API
   * sorts by any visible field; by the others it sorts, but not fast.
   */
  sortable?: boolean;
}

export interface Field extends FieldFlags {
  name: string;
  kind: FieldKind;
  input: InputKind;
  label: string;
  hint?: string;
  max?: number;
  required: boolean;
  nullable: boolean;
  hidden: boolean;
  primary: boolean;
  autoIncrement: boolean;
  unsigned: boolean;
  timestamp?: 'create' | 'update';
  sortable: boolean;
  /** Never written by a client: ignored when sent. */
  readOnly: boolean;
  defaultNowWhen?: string;
  choices?: readonly string[];
  format?: FormatName;
  unique: boolean;
  default?: unknown;
  defaultActor: boolean;
  assignee: boolean;
  references?: string;
  onDelete?: OnDelete;
  /** The referenced resource, once every resource is declared (see linkResources). */
  target?: Resource;
  /** The seed's rules, as it writes them: `nullable`, `string`, `max:255`. */
  rules: string[];
}

/** A value every response carries that is worked out from the stored fields. */
export interface ComputedField {
  schema: Record<string, unknown>;
  value(record: Record<string, unknown>): unknown;
}

export interface ResourceDecl {
  /** Plural, as in the URL and the table: `contacts`. */
  name: string;
  singular: string;
  label: string;
  fields: Record<string, FieldDecl>;
  computed?: Record<string, ComputedField>;
  /** Who may do what with the records: admins only, or the team's rules (CONTRACT.md, "Roles") with changes. */
  access?: 'admin' | Partial<Access>;
  /**
   * A record must hold at least one of these fields (not null, not blank): a contact needs a name, an email or a
   * phone.
   */
  needsOneOf?: readonly string[];
  /** The field that names a record to a person (in lists of references, titles, pickers); default `name`. */
  title?: string;
  /** Has an entry in the main navigation (for those who may use it); default true. */
  nav?: boolean;
  /**
   * Its records remark on the records they reference (a note on a contact): their creation shows on those records'
   * timelines under this action, with their title (the note's text).
   */
  timelineAction?: 'note';
  /** A deleted record waits in the trash, restorable, for TRASH_DAYS (default); false: deleting is final. */
  trash?: boolean;
}

/** Rules a resource adds to the generic write path; records/rules.ts gives them their types. */
export type ResourceRules = object;

export interface Resource {
  name: string;
  table: string;
  singular: string;
  label: string;
  fields: readonly Field[];
  primaryKey: Field;
  /** Looks a field up by name without falling into Object.prototype. */
  field(name: string): Field | undefined;
  /** Fields that may appear in a response, a filter or a sort. */
  visible: readonly Field[];
  writable: readonly Field[];
  searchText: readonly Field[];
  searchIntegral: readonly Field[];
  computed: Readonly<Record<string, ComputedField>>;
  access: Access;
  /** The user references that make a record someone's own (its creator, its assignee), once linkResources has run. */
  owners: Field[];
  /** Fields of which a record must hold at least one (empty: no such rule). */
  needsOneOf: readonly Field[];
  /** The resource this one extends (an inquiry is a contact and more): a record of it can start one of these. */
  base?: Resource;
  /** The field that names a record to a person. */
  title: Field;
  nav: boolean;
  trash: boolean;
  /** What the write path runs besides the generic checks (the last admin stays): given with the resource list. */
  rules: ResourceRules;
  /** The fields of other resources that reference this one (a contact's inquiries), once linkResources has run. */
  referencedBy: { resource: Resource; field: Field }[];
  decl: ResourceDecl;
}

const NAME = /^[a-z][a-z0-9_]*$/;

function humanize(name: string): string {
  const words = name.replace(/_id$/, '').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function buildField(resource: string, name: string, decl: FieldDecl): Field {
  const where = `resource ${resource}, field ${name}`;
  if (!NAME.test(name)) throw new Error(`${where}: a field name is lower_snake_case`);
  const kind: FieldKind | undefined = typeof decl.kind === 'string' ? kinds[decl.kind] : decl.kind;
  if (!kind) {
    const hint =
      String(decl.kind) === 'password' ? ' (a password field takes kind: passwordKind({ hash, problems }))' : '';
    throw new Error(`${where}: unknown kind ${String(decl.kind)}${hint}`);
  }
  const max = decl.max ?? kind.defaultMax;
  if (kind.textual && !(Number.isInteger(max) && max! > 0))
    throw new Error(`${where}: a text field needs a positive max`);
  const system = Boolean(decl.primary || decl.timestamp);
  if (decl.choices && decl.default !== undefined && !decl.choices.includes(decl.default as string)) {
    throw new Error(`${where}: the default is not one of the choices`);
  }
  const flag = (value: boolean | undefined) => value ?? !system;
  const required = decl.required ?? false;
  const nullable = decl.nullable ?? (!required && !decl.primary);
  // `sometimes`, as Laravel says it: may be left out, but not set to null.
  const rules = system && decl.primary ? [] : [required ? 'required' : nullable ? 'nullable' : 'sometimes'];
  if (!system) rules.push(...kind.seedRules(max));
  const format = decl.format && formats[decl.format];
  if (format?.rule) rules.push(format.rule);
  return {
    name,
    kind,
    input: decl.input ?? (format ? format.input : kind.defaultInput),
    label: decl.label ?? humanize(name),
    hint: decl.hint,
    max,
    required,
    nullable,
    hidden: decl.hidden ?? false,
    primary: decl.primary ?? false,
    autoIncrement: decl.autoIncrement ?? false,
    unsigned: decl.unsigned ?? false,
    timestamp: decl.timestamp,
    sortable: decl.sortable ?? false,
    readOnly: system || Boolean(decl.managed),
    defaultNowWhen: decl.defaultNowWhen,
    choices: decl.choices,
    format: decl.format,
    unique: decl.unique ?? false,
    default: decl.default,
    defaultActor: decl.defaultActor ?? false,
    assignee: decl.assignee ?? false,
    references: decl.references,
    onDelete: decl.references ? (decl.onDelete ?? 'restrict') : undefined,
    rules,
    searchable: flag(decl.searchable),
    fillable: flag(decl.fillable),
    inForm: flag(decl.inForm),
    inIndex: flag(decl.inIndex),
    inView: flag(decl.inView),
  };
}

/**
 * A resource that keeps its declaration's field types, so that db/tables.ts derives the row type of its table
 * from them (each field's kind, choices and nullability).
 */
export type Declared<F extends Record<string, FieldDecl>> = Resource & {
  readonly decl: ResourceDecl & { readonly fields: F };
};

export function defineResource<const F extends Record<string, FieldDecl>>(
  decl: ResourceDecl & { fields: F },
): Declared<F> {
  if (!NAME.test(decl.name)) throw new Error(`resource ${decl.name}: a resource name is lower_snake_case`);
  const fields = Object.entries(decl.fields).map(([name, f]) => buildField(decl.name, name, f));
  const byName = new Map(fields.map((f) => [f.name, f]));
  const primaries = fields.filter((f) => f.primary);
  if (primaries.length !== 1) throw new Error(`resource ${decl.name}: exactly one primary field is needed`);
  for (const f of fields) {
    if (f.defaultNowWhen && !byName.has(f.defaultNowWhen)) {
      throw new Error(`resource ${decl.name}, field ${f.name}: defaultNowWhen names no field`);
    }
    if (f.defaultNowWhen && !f.kind.instant) {
      throw new Error(`resource ${decl.name}, field ${f.name}: only a date-time can default to now`);
    }
  }
  const needsOneOf = (decl.needsOneOf ?? []).map((name) => {
    const field = byName.get(name);
    if (!field?.fillable || field.required)
      throw new Error(`resource ${decl.name}: needsOneOf names ${name}, which is not an optional writable field`);
    return field;
  });
  const visible = fields.filter((f) => !f.hidden);
  const title = byName.get(decl.title ?? 'name') ?? primaries[0]!;
  if (decl.title && (!byName.has(decl.title) || title.hidden))
    throw new Error(`resource ${decl.name}: title names no visible field`);
  return {
    name: decl.name,
    table: decl.name,
    singular: decl.singular,
    label: decl.label,
    fields,
    primaryKey: primaries[0]!,
    field: (name) => byName.get(name),
    visible,
    writable: fields.filter((f) => f.fillable && !f.readOnly),
    searchText: visible.filter((f) => f.searchable && f.kind.textual),
    searchIntegral: visible.filter((f) => f.searchable && f.kind.integral),
    computed: decl.computed ?? {},
    access: decl.access === 'admin' ? ADMIN_ACCESS : { ...TEAM_ACCESS, ...decl.access },
    owners: [],
    needsOneOf,
    title,
    nav: decl.nav ?? true,
    trash: decl.trash ?? true,
    rules: {},
    referencedBy: [],
    decl,
  };
}

/**
 * Ties every reference to the resource it names, and each resource to the fields that reference it, and gives
 * each resource its rules; once, where the resource list is made.
 */
export function linkResources(
  resources: readonly Resource[],
  rules: ReadonlyMap<Resource, ResourceRules> = new Map(),
): void {
  for (const [resource, r] of rules) resource.rules = r;
  const byName = new Map(resources.map((r) => [r.name, r]));
  for (const resource of resources) {
    for (const field of resource.fields.filter((f) => f.references)) {
      const target = byName.get(field.references!);
      if (!target)
        throw new Error(
          `resource ${resource.name}, field ${field.name}: references ${field.references}, which is not declared`,
        );
      if (!field.kind.integral)
        throw new Error(`resource ${resource.name}, field ${field.name}: a reference holds an id, an integer`);
      field.target = target;
      target.referencedBy.push({ resource, field });
      if (target.name === 'users' && resource.name !== 'users') resource.owners.push(field);
    }
  }
}

/**
 * The records that remark on a resource's records (notes on a contact) and belong to them (deleted with them), by
 * the reference that names the record: their creation shows on its timeline.
 */
export const annotationsOf = (resource: Resource) =>
  resource.referencedBy.filter((r) => r.resource.decl.timelineAction && r.field.onDelete === 'cascade');

/** A resource that has every field of `base` (same order, same rules) and more after them. */
export function extendResource<B extends Record<string, FieldDecl>, const F extends Record<string, FieldDecl>>(
  base: Declared<B>,
  decl: ResourceDecl & { fields: F },
): Declared<B & F> {
  for (const name of Object.keys(decl.fields)) {
    if (base.field(name)) throw new Error(`resource ${decl.name}: field ${name} is already declared by ${base.name}`);
  }
  return {
    ...defineResource({
      needsOneOf: base.decl.needsOneOf,
      ...decl,
      fields: { ...base.decl.fields, ...decl.fields } as B & F,
    }),
    base,
  };
}
