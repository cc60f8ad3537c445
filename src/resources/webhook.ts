import { defineResource } from '../schema/resource.ts';

/** What an endpoint may hear about (CONTRACT.md, "Webhooks"). */
export const WEBHOOK_EVENTS = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'inquiry.created',
  'inquiry.updated',
  'inquiry.deleted',
  'inquiry.assigned',
  'note.created',
  'task.created',
  'task.done',
  'intake.received',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * An endpoint that hears about changes (CONTRACT.md, "Webhooks"; src/webhooks/ delivers). Its signing secret is made
 * by the server, shown once in the create's answer and kept encrypted; rotating it keeps the old one signing beside
 * the new for a day (`previous_secret` until `previous_secret_until`). The dispatcher keeps `failing_since` and turns
 * the endpoint off (`disabled_reason`) when it answers 410 Gone or has failed for 3 days.
 */
export const webhook = defineResource({
  name: 'webhooks',
  singular: 'webhook',
  label: 'Webhook',
  title: 'url',
  access: 'admin',
  nav: false,
  trash: false,
  reveals: { secret: 'The signing secret (whsec_…), shown in this answer only' },
  listColumns: ['url', 'events', 'description', 'active', 'failing_since'],
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    url: {
      kind: 'string',
      max: 2000,
      required: true,
      format: 'uri',
      label: 'URL',
      hint: 'Where each event is POSTed, signed as Standard Webhooks says. Private and loopback addresses are refused.',
    },
    events: {
      kind: 'list',
      max: 40,
      choices: WEBHOOK_EVENTS,
      required: true,
      hint: `One per line: ${WEBHOOK_EVENTS.join(', ')}.`,
    },
    description: { kind: 'string', max: 255 },
    active: {
      kind: 'boolean',
      default: true,
      nullable: false,
      hint: 'Inactive: nothing is sent; events that were waiting are sent once it is active again.',
    },
    secret: { kind: 'string', max: 255, hidden: true, managed: true },
    previous_secret: { kind: 'string', max: 255, hidden: true, managed: true },
    previous_secret_until: { kind: 'dateTime', managed: true, label: 'Old secret signs until' },
    failing_since: { kind: 'dateTime', managed: true, label: 'Failing since' },
    disabled_reason: { kind: 'string', max: 255, managed: true, label: 'Turned off because' },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
});
