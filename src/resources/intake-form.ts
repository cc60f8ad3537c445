import { defineResource } from '../schema/resource.ts';

/** The inquiry fields a public form may ask for: the inquirer's own, not the desk's (stage, assignee, ticket). */
export const INTAKE_FIELDS = [
  'name',
  'email',
  'phone',
  'occupation',
  'address',
  'country',
  'city',
  'detail',
  'budget',
  'inquiry_country',
] as const;

/**
 * A public form that brings inquiries in by themselves (CONTRACT.md, "Intake"): served at `/f/<slug>` (works without
 * JavaScript, can be embedded) and at `POST /api/v1/intake/<slug>`, it asks for `fields` (`required` among them),
 * gives each inquiry its source and service, and answers with `success_message`. Browsers on `allowed_origins` may
 * send it from their own pages and frame the hosted one. `dropped` counts what the spam checks threw away.
 */
export const intakeForm = defineResource({
  name: 'intake-forms',
  singular: 'intake form',
  label: 'Intake form',
  access: 'admin',
  nav: false,
  trash: false,
  listColumns: ['name', 'slug', 'fields', 'active'],
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    name: { kind: 'string', max: 100, required: true, unique: true, sortable: true },
    slug: {
      kind: 'string',
      max: 60,
      required: true,
      unique: true,
      format: 'slug',
      hint: 'Its address: /f/<slug>. Lower-case letters, digits and dashes.',
    },
    fields: {
      kind: 'list',
      max: 40,
      choices: INTAKE_FIELDS,
      required: true,
      label: 'Fields asked',
      hint: `One per line, in order: ${INTAKE_FIELDS.join(', ')}.`,
    },
    required: {
      kind: 'list',
      max: 40,
      choices: INTAKE_FIELDS,
      label: 'Required fields',
      hint: 'One per line; a required field is asked even when the fields above leave it out.',
    },
    source_id: { kind: 'integer', label: 'Source', references: 'sources', onDelete: 'set null' },
    service_id: { kind: 'integer', label: 'Service', references: 'services', onDelete: 'set null' },
    success_message: {
      kind: 'string',
      max: 500,
      default: 'Thank you: we have your message and will answer soon.',
      nullable: false,
      label: 'Success message',
    },
    allowed_origins: {
      kind: 'list',
      max: 200,
      format: 'origin',
      label: 'Allowed origins',
      hint: 'Sites that may send this form from their pages or frame it, one per line: https://www.example.com',
    },
    active: { kind: 'boolean', default: true, nullable: false, hint: 'Inactive: the form answers 404.' },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
});
