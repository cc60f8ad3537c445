import { defineResource } from '../schema/resource.ts';

/**
 * A saved view of a list: a name for a search, its filters, its sort and its columns (a list query string and a list
 * of field names), kept by its owner for themself or shared with the team.
 */
export const view = defineResource({
  name: 'views',
  singular: 'view',
  label: 'Saved view',
  nav: false,
  trash: false,
  // Everyone keeps their own views; an admin may tidy anyone's.
  access: { create: 'viewer', own: 'viewer', any: 'admin', bulk: 'admin' },
  // A personal view is its owner's alone; a shared one everyone's. Admins see all, to tidy them.
  readScope: { all: 'admin', sharedWhen: 'shared' },
  listColumns: ['name', 'resource', 'shared', 'created_by', 'created_at'],
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    name: { kind: 'string', max: 100, required: true, sortable: true },
    resource: { kind: 'string', max: 64, required: true, choices: ['contacts', 'inquiries'], searchable: false },
    query: { kind: 'string', max: 2000, searchable: false, hint: 'The list query: search, filters and sort.' },
    columns: { kind: 'string', max: 1000, searchable: false, hint: 'Field names, comma-separated.' },
    shared: { kind: 'boolean', default: false, nullable: false, hint: 'Shown to the whole team.' },
    created_by: { kind: 'integer', label: 'Owner', defaultActor: true, references: 'users', onDelete: 'cascade' },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
});
