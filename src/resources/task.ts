import { defineResource } from '../schema/resource.ts';

/**
 * A follow-up: something someone is to do by a time, about a contact or an inquiry (or neither). Added from the
 * record's page with its title and due time; its assignee (the one who adds it, unless another is named) marks it
 * done with one click, which is an update like any other, logged.
 */
export const task = defineResource({
  name: 'tasks',
  singular: 'task',
  label: 'Task',
  title: 'title',
  listColumns: ['title', 'due_at', 'assigned_to', 'done_at', 'inquiry_id', 'contact_id'],
  quickAdd: ['title', 'due_at'],
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    title: { kind: 'string', max: 200, required: true, sortable: true },
    due_at: { kind: 'dateTime', label: 'Due', sortable: true },
    done_at: { kind: 'dateTime', label: 'Done', sortable: true },
    assigned_to: {
      kind: 'integer',
      label: 'Assigned to',
      references: 'users',
      onDelete: 'set null',
      sortable: true,
      assignee: true,
    },
    contact_id: { kind: 'integer', label: 'Contact', references: 'contacts', onDelete: 'cascade' },
    inquiry_id: { kind: 'integer', label: 'Inquiry', references: 'inquiries', onDelete: 'cascade' },
    created_by: { kind: 'integer', label: 'Created by', defaultActor: true, references: 'users', onDelete: 'set null' },
    created_at: { kind: 'dateTime', timestamp: 'create', sortable: true },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
  // "My tasks": one assignee's open ones by due time.
  indexes: { assignee_due: ['assigned_to', 'done_at', 'due_at', 'id'] },
});
