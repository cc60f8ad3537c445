import { extendResource } from '../schema/resource.ts';
import { contact } from './contact.ts';

/** A contact's request: every contact field, then its own eight. */
export const inquiry = extendResource(contact, {
  name: 'inquiries',
  singular: 'inquiry',
  label: 'Inquiry',
  // Who has it, where it stands, which ticket: what a team reads first.
  listColumns: ['name', 'stage_id', 'assigned_to', 'ticket_id', 'created_at'],
  // "My open inquiries": one assignee's board, stage by stage, newest first, each column counted (made by the
  // hand-written migration T0012 before indexes could be declared; the generated one finds it there).
  indexes: { assignee_stage: ['assigned_to', 'stage_id', 'id'] },
  fields: {
    // Deleting the contact keeps the inquiry (the trash puts the link back when the contact is restored).
    contact_id: {
      kind: 'integer',
      label: 'Contact',
      references: 'contacts',
      onDelete: 'set null',
      sortable: true,
      countAs: 'inquiries_count',
    },
    stage_id: { kind: 'integer', label: 'Stage', references: 'stages', onDelete: 'restrict', sortable: true },
    inquiry_country: { kind: 'string', max: 255 },
    inquiry_status: { kind: 'boolean' },
    status: { kind: 'boolean' },
    inquiry_type: { kind: 'boolean' },
    assigned_to: {
      kind: 'integer',
      label: 'Assigned to',
      references: 'users',
      onDelete: 'set null',
      sortable: true,
      assignee: true,
    },
    assigned_date: { kind: 'dateTime', defaultNowWhen: 'assigned_to', sortable: true },
    ticket_id: { kind: 'bigInteger', label: 'Ticket', sortable: true },
    ticket_date: { kind: 'dateTime', sortable: true },
    // The response clock (CONTRACT.md): when someone of the team first acted on it (a note, a stage change, a task
    // done), and by when they should have; a rule sets the due time, an admin may change it.
    first_response_at: { kind: 'dateTime', label: 'First response', managed: true, sortable: true },
    due_at: { kind: 'dateTime', label: 'Respond by', adminOnly: true, sortable: true },
  },
  computed: {
    overdue: {
      schema: { type: 'boolean', description: 'past due_at with no first response yet', readOnly: true },
      value: (r) => r.first_response_at == null && r.due_at != null && Date.parse(String(r.due_at)) < Date.now(),
    },
  },
  filters: { overdue: 'open inquiries past due_at with no first response (true), or the others (false)' },
});
