import { defineResource } from '../schema/resource.ts';

/** A team member's account. `frist_name` is spelled as the seed spells it. */
export const user = defineResource({
  name: 'users',
  singular: 'user',
  label: 'User',
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true, unsigned: true },
    name: { kind: 'string', max: 255, required: true },
    frist_name: { kind: 'string', max: 255, label: 'First name' },
    last_name: { kind: 'string', max: 255 },
    email: { kind: 'string', max: 255, required: true, input: 'email' },
    email_verified_at: { kind: 'dateTime' },
    password: { kind: 'string', max: 255, required: true, input: 'password', hidden: true },
    two_factor_secret: { kind: 'text', hidden: true },
    two_factor_recovery_codes: { kind: 'text', hidden: true },
    two_factor_confirmed_at: { kind: 'dateTime' },
    remember_token: { kind: 'string', max: 100, hidden: true },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
    address: { kind: 'string', max: 255 },
    city: { kind: 'string', max: 100 },
    country: { kind: 'string', max: 100 },
    bio: { kind: 'string', max: 255 },
    image_name: { kind: 'string', max: 100 },
    phone: { kind: 'string', max: 50 },
  },
});
