import { linkResources, type Resource } from '../schema/resource.ts';
import { userRules } from '../accounts/user-rules.ts';
import { contact } from './contact.ts';
import { inquiry } from './inquiry.ts';
import { inquiryRules } from './inquiry-rules.ts';
import { service, source, stage } from './lookups.ts';
import { view } from './view.ts';
import { note } from './note.ts';
import { noteRules } from './note-rules.ts';
import { task } from './task.ts';
import { taskRules } from './task-rules.ts';
import { user } from './user.ts';
import { assignmentRule } from './assignment-rule.ts';
import { assignmentRuleRules } from './assignment.ts';
import { intakeForm } from './intake-form.ts';
import { webhook } from './webhook.ts';
import { webhookRules } from './webhook-rules.ts';

export { assignmentRule, contact, intakeForm, inquiry, note, service, source, stage, task, user, view, webhook };

/** Every declared resource: the seed's, in its order, then ours. */
export const resources: readonly Resource[] = [
  contact,
  inquiry,
  user,
  note,
  stage,
  source,
  service,
  view,
  task,
  assignmentRule,
  intakeForm,
  webhook,
];
linkResources(
  resources,
  new Map<Resource, object>([
    [user, userRules],
    [note, noteRules],
    [inquiry, inquiryRules],
    [task, taskRules],
    [assignmentRule, assignmentRuleRules],
    [webhook, webhookRules],
  ]),
);

/** The resources served by the generic records API (users: admins only). */
export const recordResources: readonly Resource[] = resources;
