import { defineResource } from '../schema/resource.ts';

/** A prospective customer. Fields, rules and flags as the seed gives them. */
export const contact = defineResource({
  name: 'contacts',
  singular: 'contact',
  label: 'Contact',
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    name: { kind: 'string', max: 255, sortable: true },
    // Checked when written; addresses stored before that (by the original service) are served as they are.
    email: { kind: 'string', max: 255, input: 'email', format: 'email', sortable: true },
    phone: { kind: 'string', max: 100, format: 'phone' },
    occupation: { kind: 'string', max: 100 },
    address: { kind: 'string', max: 255 },
    country: { kind: 'string', max: 100, sortable: true },
    city: { kind: 'string', max: 100, sortable: true },
    service_id: { kind: 'integer' },
    source_id: { kind: 'integer' },
    detail: { kind: 'string', max: 500 },
    budget: { kind: 'string', max: 255 },
    created_by: { kind: 'integer', label: 'Created by', defaultActor: true, references: 'users', onDelete: 'set null' },
    created_at: { kind: 'dateTime', timestamp: 'create', sortable: true },
    updated_at: { kind: 'dateTime', timestamp: 'update', sortable: true },
  },
  needsOneOf: ['name', 'email', 'phone'],
});
