import { hashPassword, passwordProblems } from '../accounts/passwords.ts';
import { passwordKind } from '../schema/kinds.ts';
import { defineResource } from '../schema/resource.ts';
import { ROLES } from '../schema/roles.ts';

/**
 * A team member's account: the seed's fields (`frist_name` spelled as the seed
 * spells it), plus `role`. Secrets are hidden; fields kept by the account flows
 * (verification, two-factor) are managed and ignored when a client sends them.
 */
export const user = defineResource({
  name: 'users',
  singular: 'user',
  label: 'User',
  access: 'admin',
  listColumns: ['name', 'email', 'role', 'active', 'created_at'],
  // Deleting an account is final; deactivating it (active: false) keeps its name on its work.
  trash: false,
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true, unsigned: true },
    name: { kind: 'string', max: 255, required: true, sortable: true },
    frist_name: { kind: 'string', max: 255, label: 'First name' },
    last_name: { kind: 'string', max: 255 },
    email: { kind: 'string', max: 255, required: true, input: 'email', format: 'email', unique: true, sortable: true },
    email_verified_at: { kind: 'dateTime', managed: true },
    // Left out of a create, the account is invited: its owner chooses the password through a mailed link, and
    // until then the stored value is empty, which nothing matches (see accounts/invitations.ts).
    password: {
      kind: passwordKind({ hash: hashPassword, problems: passwordProblems }),
      max: 255,
      hidden: true,
      nullable: false,
      default: '',
      hint: 'Leave empty to email an invitation: they choose their own password through a link that works for 7 days.',
    },
    two_factor_secret: { kind: 'text', hidden: true, managed: true },
    two_factor_recovery_codes: { kind: 'text', hidden: true, managed: true },
    two_factor_confirmed_at: { kind: 'dateTime', managed: true },
    remember_token: { kind: 'string', max: 100, hidden: true, managed: true },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
    address: { kind: 'string', max: 255 },
    city: { kind: 'string', max: 100 },
    country: { kind: 'string', max: 100 },
    bio: { kind: 'string', max: 255 },
    image_name: { kind: 'string', max: 100, managed: true },
    phone: { kind: 'string', max: 50, format: 'phone' },
    role: { kind: 'string', max: 20, choices: ROLES, default: 'agent', required: true, searchable: false },
    active: {
      kind: 'boolean',
      default: true,
      nullable: false,
      hint: 'An inactive account cannot sign in; its sessions and tokens end; its name stays on its work.',
    },
    notify_email: {
      kind: 'boolean',
      label: 'Email my notifications',
      default: true,
      nullable: false,
      hint: 'Besides the bell: work assigned to you, mentions, tasks due and your inquiries overdue, each as a mail.',
    },
  },
  computed: {
    two_factor_enabled: { schema: { type: 'boolean' }, value: (u) => u.two_factor_confirmed_at !== null },
    avatar_url: {
      schema: { type: ['string', 'null'] },
      value: (u) =>
        u.image_name ? `/api/v1/avatars/${String(u.id)}?v=${encodeURIComponent(String(u.image_name))}` : null,
    },
  },
});
