import { emailKey, nameCityKey, phoneKey, sortKey } from '../schema/keys.ts';
import { defineResource } from '../schema/resource.ts';

/** A prospective customer. Fields, rules and flags as the seed gives them. */
export const contact = defineResource({
  name: 'contacts',
  singular: 'contact',
  label: 'Contact',
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    // Sorted as the language does ("Åsa" with the A's), by the derived key below.
    name: { kind: 'string', max: 255, sortable: true, sortBy: 'name_sort' },
    // Checked when written; addresses stored before that (by the original service) are served as they are.
    email: { kind: 'string', max: 255, input: 'email', format: 'email', sortable: true },
    phone: { kind: 'string', max: 100, format: 'phone' },
    occupation: { kind: 'string', max: 100 },
    address: { kind: 'string', max: 255 },
    country: { kind: 'string', max: 100, sortable: true },
    city: { kind: 'string', max: 100, sortable: true },
    service_id: { kind: 'integer', label: 'Service', references: 'services', onDelete: 'set null', sortable: true },
    source_id: { kind: 'integer', label: 'Source', references: 'sources', onDelete: 'set null', sortable: true },
    detail: { kind: 'string', max: 500 },
    budget: { kind: 'string', max: 255 },
    created_by: { kind: 'integer', label: 'Created by', defaultActor: true, references: 'users', onDelete: 'set null' },
    created_at: { kind: 'dateTime', timestamp: 'create', sortable: true },
    updated_at: { kind: 'dateTime', timestamp: 'update', sortable: true },
    // Derived and indexed (sortable gives the index): an inquiry finds its contact by either key; lists sort names by
    // the third.
    email_key: {
      kind: 'string',
      max: 255,
      sortable: true,
      derive: { from: ['email'], value: (r) => emailKey(r.email) },
    },
    phone_key: {
      kind: 'string',
      max: 32,
      sortable: true,
      derive: { from: ['phone'], value: (r, options) => phoneKey(r.phone, options) },
    },
    name_sort: { kind: 'string', max: 255, sortable: true, derive: { from: ['name'], value: (r) => sortKey(r.name) } },
    // The same person at the same place, however typed: one of the ways duplicates are found (indexed below).
    name_city_key: {
      kind: 'string',
      max: 255,
      derive: { from: ['name', 'city'], value: (r) => nameCityKey(r.name, r.city) },
    },
  },
  indexes: { name_city: ['name_city_key', 'id'] },
  needsOneOf: ['name', 'email', 'phone'],
  listColumns: ['name', 'email', 'phone', 'city', 'country', 'created_at'],
});
