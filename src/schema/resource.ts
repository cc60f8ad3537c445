// Resource declarations: plain data, checked once when the module loads, so a
// wrong declaration stops the boot with a clear message instead of failing
// mid-request.
import { type FormatName, formats } from './formats.ts';
import type { KeyOptions } from './keys.ts';
import { kinds, type FieldKind, type InputKind, type NamedKind } from './kinds.ts';
import { type Access, ADMIN_ACCESS, type Role, TEAM_ACCESS } from './roles.ts';

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
  /** Written by the server (a due time a rule sets); of the team, only an admin may write it too. */
  adminOnly?: boolean;
  /** The value of a field left out of a create. */
  default?: unknown;
  /** Defaults to the signed-in user's id on create. */
  defaultActor?: boolean;
  /** Names the user who is to do the work: deleting that user needs the work moved to someone (`reassign_to`). */
  assignee?: boolean;
  /** The resource whose ids this field holds (shown by its title, chosen from a list): a foreign key. */
  references?: string;
  /** A list field holding ids of this resource's records (each must name one; chosen from a list, ticked). */
  listOf?: string;
  /** The smallest value of an integer field. */
  min?: number;
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
  /**
   * Lists sorted by this field are ordered by the named derived field instead, a sort key worked out from this field
   * alone (names in the language's order: `name_sort`); the key stays hidden, cursors carry this field's value.
   */
  sortBy?: string;
  /** A reference: the referenced record, read on its own, says how many records name it, under this name. */
  countAs?: string;
  /**
   * Worked out by the server from other fields whenever one of them is written (a normalised email to match
   * records by): hidden, never written by a client, never in the change log (its sources are).
   */
  derive?: Derivation;
}

export interface Derivation {
  from: readonly string[];
  value(record: Readonly<Record<string, unknown>>, options: KeyOptions): string | null;
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
  /** The derived field lists sorted by this one are ordered by (see FieldDecl.sortBy), once the resource is built. */
  sortBy?: Field;
  /** Never written by a client: ignored when sent. */
  readOnly: boolean;
  defaultNowWhen?: string;
  choices?: readonly string[];
  format?: FormatName;
  unique: boolean;
  default?: unknown;
  defaultActor: boolean;
  adminOnly: boolean;
  assignee: boolean;
  references?: string;
  listOf?: string;
  min?: number;
  onDelete?: OnDelete;
  derive?: Derivation;
  /** The referenced record, read on its own, says how many records name it through this field, under this name. */
  countAs?: string;
  /**
   * The words a field with options shows for each value and for none (`null`), when a setting renames them
   * (Status: Closed / Open / New); see optionsOf. Set by records/settings.ts.
   */
  words?: Readonly<Record<string, string>>;
  /** The referenced resource, once every resource is declared (see linkResources). */
  target?: Resource;
  /** A list's resource (`listOf`), once every resource is declared. */
  listTarget?: Resource;
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
  /** What the create's answer shows once beside `data` (a webhook's secret): name → description. */
  reveals?: Readonly<Record<string, string>>;
  /** The columns of its list until a user chooses their own, in order: field names (default: the fields in index). */
  listColumns?: readonly string[];
  /**
   * Records some may read only when they are theirs: below the role `all`, a reader sees the records one of whose
   * user references (its creator) names them, and those whose boolean field `sharedWhen` is true (a personal saved
   * view, or one shared with the team). Lists, reads and exports apply it.
   */
  readScope?: { all: Role; sharedWhen?: string };
  /**
   * Indexes over several columns, for a read the one-column indexes serve badly (the board of one assignee, stage by
   * stage, newest first: `assignee_stage: ['assigned_to', 'stage_id', 'id']`); by name, the index being
   * `<table>_<name>`. `leadbook make:migration` writes them.
   */
  indexes?: Readonly<Record<string, readonly string[]>>;
  /**
   * Filters that are not one field's (`filter[overdue]=true`): by name, what they keep, for the documentation. The
   * resource's rules give each its condition (records/rules.ts).
   */
  filters?: Readonly<Record<string, string>>;
  /**
   * Its records are added from the page of a record they reference (a task on an inquiry's page), with these fields
   * in a small form there; the reference is filled in.
   */
  quickAdd?: readonly string[];
}

/** Rules a resource adds to the generic write path; records/rules.ts gives them their types. */
export type ResourceRules = object;

export interface Resource {
  name: string;
  /** The plural as words, for people: `assignment rules` (the name with its `-` as spaces). */
  plural: string;
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
  /** The columns of its list until a user chooses their own (ResourceDecl.listColumns). */
  listColumns: readonly Field[];
  /** Who reads only their own records and the shared ones (ResourceDecl.readScope). */
  readScope?: { all: Role; sharedWhen?: Field };
  /** Indexes over several columns, by name (ResourceDecl.indexes). */
  indexes: Readonly<Record<string, readonly Field[]>>;
  /** The fields of the form that adds one on a referenced record's page (ResourceDecl.quickAdd); empty: none. */
  quickAdd: readonly Field[];
  /** What the write path runs besides the generic checks (the last admin stays): given with the resource list. */
  rules: ResourceRules;
  /** The fields of other resources that reference this one (a contact's inquiries), once linkResources has run. */
  referencedBy: { resource: Resource; field: Field }[];
  decl: ResourceDecl;
}

const NAME = /^[a-z][a-z0-9_]*$/;
/** A resource's name is its address too: words may be joined by `-` there (`assignment-rules`), by `_` in its table. */
const RESOURCE_NAME = /^[a-z][a-z0-9_]*(-[a-z0-9_]+)*$/;

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
  const derived = Boolean(decl.derive);
  const flag = (value: boolean | undefined) => value ?? !(system || derived);
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
    hidden: derived || (decl.hidden ?? false),
    primary: decl.primary ?? false,
    autoIncrement: decl.autoIncrement ?? false,
    unsigned: decl.unsigned ?? false,
    timestamp: decl.timestamp,
    sortable: decl.sortable ?? false,
    readOnly: system || derived || Boolean(decl.managed),
    defaultNowWhen: decl.defaultNowWhen,
    choices: decl.choices,
    format: decl.format,
    unique: decl.unique ?? false,
    default: decl.default,
    defaultActor: decl.defaultActor ?? false,
    adminOnly: decl.adminOnly ?? false,
    assignee: decl.assignee ?? false,
    references: decl.references,
    listOf: decl.listOf,
    min: decl.min,
    onDelete: decl.references ? (decl.onDelete ?? 'restrict') : undefined,
    derive: decl.derive,
    countAs: decl.countAs,
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
  if (!RESOURCE_NAME.test(decl.name))
    throw new Error(`resource ${decl.name}: a resource name is lower_snake_case, or kebab-case`);
  const fields = Object.entries(decl.fields).map(([name, f]) => buildField(decl.name, name, f));
  const byName = new Map(fields.map((f) => [f.name, f]));
  const primaries = fields.filter((f) => f.primary);
  if (primaries.length !== 1) throw new Error(`resource ${decl.name}: exactly one primary field is needed`);
  for (const f of fields) {
    if (f.defaultNowWhen && !byName.has(f.defaultNowWhen)) {
      throw new Error(`resource ${decl.name}, field ${f.name}: defaultNowWhen names no field`);
    }
    for (const source of f.derive?.from ?? [])
      if (!byName.has(source))
        throw new Error(`resource ${decl.name}, field ${f.name}: derived from ${source}, which is not declared`);
    if (f.defaultNowWhen && !f.kind.instant) {
      throw new Error(`resource ${decl.name}, field ${f.name}: only a date-time can default to now`);
    }
    const sortBy = decl.fields[f.name]!.sortBy;
    if (sortBy !== undefined) {
      f.sortBy = byName.get(sortBy);
      if (f.sortBy?.derive?.from.length !== 1 || f.sortBy.derive.from[0] !== f.name)
        throw new Error(
          `resource ${decl.name}, field ${f.name}: sortBy names ${sortBy}, which is not derived from it alone`,
        );
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
  const listColumns = (decl.listColumns ?? visible.filter((f) => f.inIndex).map((f) => f.name)).map((name) => {
    const field = byName.get(name);
    if (!field || field.hidden) throw new Error(`resource ${decl.name}: listColumns names ${name}, no visible field`);
    return field;
  });
  if (listColumns.length === 0) throw new Error(`resource ${decl.name}: its list needs at least one column`);
  const sharedWhen = decl.readScope?.sharedWhen;
  const shared = sharedWhen === undefined ? undefined : byName.get(sharedWhen);
  if (sharedWhen !== undefined && (shared?.kind.name !== 'boolean' || shared.hidden))
    throw new Error(`resource ${decl.name}: readScope.sharedWhen names ${sharedWhen}, no visible boolean field`);
  if (decl.title && (!byName.has(decl.title) || title.hidden))
    throw new Error(`resource ${decl.name}: title names no visible field`);
  const indexes = Object.fromEntries(
    Object.entries(decl.indexes ?? {}).map(([name, columns]) => {
      if (!NAME.test(name)) throw new Error(`resource ${decl.name}: index name ${name} is not lower_case`);
      if (columns.length < 2) throw new Error(`resource ${decl.name}: index ${name} needs two columns or more`);
      return [
        name,
        columns.map((column) => {
          const field = byName.get(column);
          if (!field) throw new Error(`resource ${decl.name}: index ${name} names ${column}, no field`);
          return field;
        }),
      ];
    }),
  );
  const quickAdd = (decl.quickAdd ?? []).map((name) => {
    const field = byName.get(name);
    if (!field?.fillable || field.hidden || field.references)
      throw new Error(`resource ${decl.name}: quickAdd names ${name}, which is not a writable field of its own`);
    return field;
  });
  return {
    name: decl.name,
    table: decl.name.replaceAll('-', '_'),
    plural: decl.name.replaceAll('-', ' '),
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
    listColumns,
    readScope: decl.readScope && { all: decl.readScope.all, sharedWhen: shared },
    indexes,
    quickAdd,
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
    for (const field of resource.fields.filter((f) => f.listOf)) {
      field.listTarget = byName.get(field.listOf!);
      if (!field.listTarget || field.kind.name !== 'list')
        throw new Error(`resource ${resource.name}, field ${field.name}: listOf names a declared resource, on a list`);
    }
    if (resource.readScope && resource.owners.length === 0)
      throw new Error(`resource ${resource.name}: a readScope needs a reference to users (whose record it is)`);
  }
}

/** What a record read on its own counts: the records of another resource that name it (a contact's inquiries). */
export const countsOf = (resource: Resource) => resource.referencedBy.filter((r) => r.field.countAs);

/** A field's options (a tri-state's true and false) in the words it shows them with. */
export const optionsOf = (field: Field) =>
  field.kind.options?.map((o) => ({ ...o, label: field.words?.[o.value] ?? o.label })) ?? [];

/** What a field with options shows when it holds none. */
export const unsetWordOf = (field: Field) => field.words?.null ?? 'Not set';

/** The fields that hold one of a few states or none (the seed's three booleans): their words are settings. */
export const stateFieldsOf = (resource: Resource) =>
  resource.fields.filter((f) => f.kind.options && f.nullable && f.fillable && !f.hidden);

/**
 * The records that remark on a resource's records (notes on a contact) and belong to them (deleted with them), by
 * the reference that names the record: their creation shows on its timeline.
 */
export const annotationsOf = (resource: Resource) =>
  resource.referencedBy.filter((r) => r.resource.decl.timelineAction && r.field.onDelete === 'cascade');

/**
 * The records added from a resource's record page (tasks on an inquiry's page): those declaring `quickAdd` that
 * belong to the record (deleted with it), by the reference that names it.
 */
export const quickAddsOf = (resource: Resource) =>
  resource.referencedBy.filter((r) => r.resource.quickAdd.length && r.field.onDelete === 'cascade');

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
