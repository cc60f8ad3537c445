import { defineResource } from '../schema/resource.ts';
import type { Access } from '../schema/roles.ts';

/** Lists that admins keep and the whole team picks from. */
const ADMINS_KEEP: Partial<Access> = { create: 'admin', own: 'admin', any: 'admin', bulk: 'admin' };

/** What a contact or an inquiry is about, or where it came from: a name from a list admins keep. */
const lookup = (name: 'sources' | 'services', singular: string, label: string) =>
  defineResource({
    name,
    singular,
    label,
    access: ADMINS_KEEP,
    // Kept from the settings page.
    nav: false,
    trash: false,
    fields: {
      id: { kind: 'bigInteger', primary: true, autoIncrement: true },
      name: { kind: 'string', max: 100, required: true, unique: true, sortable: true },
      // Kept for the records that name it, no longer offered for new ones.
      active: { kind: 'boolean', default: true, nullable: false, hint: 'Inactive: no longer offered for new records.' },
      created_at: { kind: 'dateTime', timestamp: 'create' },
      updated_at: { kind: 'dateTime', timestamp: 'update' },
    },
  });

export const source = lookup('sources', 'source', 'Source');
export const service = lookup('services', 'service', 'Service');

/** A step of the pipeline an inquiry moves through; `kind` says whether it is still open, won or lost. */
export const stage = defineResource({
  name: 'stages',
  singular: 'stage',
  label: 'Stage',
  access: ADMINS_KEEP,
  nav: false,
  trash: false,
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    name: { kind: 'string', max: 100, required: true, unique: true },
    position: { kind: 'integer', required: true, sortable: true, hint: 'Stages show in this order, lowest first.' },
    kind: {
      kind: 'string',
      max: 10,
      choices: ['open', 'won', 'lost'],
      default: 'open',
      required: true,
      searchable: false,
      hint: 'Open: work goes on. Won or lost: the inquiry is closed.',
    },
    active: {
      kind: 'boolean',
      default: true,
      nullable: false,
      hint: 'Archived: no longer offered; its inquiries keep it.',
    },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
});

/** A new install's pipeline (CONTRACT.md). */
export const DEFAULT_STAGES = [
  { name: 'New', position: 1, kind: 'open' },
  { name: 'Contacted', position: 2, kind: 'open' },
  { name: 'Qualified', position: 3, kind: 'open' },
  { name: 'Won', position: 4, kind: 'won' },
  { name: 'Lost', position: 5, kind: 'lost' },
] as const;
