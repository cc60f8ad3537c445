import { defineResource } from '../schema/resource.ts';

/**
 * A remark on a contact or an inquiry, by a team member. Its creation shows on the record's timeline. Only its author
 * or an admin changes or deletes it. `@name` or `@email` of a teammate is kept as their id in `mentions` (JSON), for
 * notifications.
 */
export const note = defineResource({
  name: 'notes',
  singular: 'note',
  label: 'Note',
  title: 'body',
  nav: false,
  timelineAction: 'note',
  access: { any: 'admin' },
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    body: { kind: 'text', max: 10_000, required: true, label: 'Note' },
    contact_id: { kind: 'integer', label: 'Contact', references: 'contacts', onDelete: 'cascade' },
    inquiry_id: { kind: 'integer', label: 'Inquiry', references: 'inquiries', onDelete: 'cascade' },
    mentions: { kind: 'string', max: 1000, managed: true, searchable: false, inIndex: false, inView: false },
    created_by: { kind: 'integer', label: 'Author', defaultActor: true, references: 'users', onDelete: 'set null' },
    created_at: { kind: 'dateTime', timestamp: 'create', sortable: true },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
  needsOneOf: ['contact_id', 'inquiry_id'],
});
