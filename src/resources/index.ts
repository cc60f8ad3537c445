import { linkResources, type Resource } from '../schema/resource.ts';
import { userRules } from '../accounts/user-rules.ts';
import { contact } from './contact.ts';
import { inquiry } from './inquiry.ts';
import { user } from './user.ts';

export { contact, inquiry, user };

/** Every declared resource, in the seed's order. */
export const resources: readonly Resource[] = [contact, inquiry, user];
linkResources(resources, new Map([[user, userRules]]));

/** The resources served by the generic records API (users: admins only). */
export const recordResources: readonly Resource[] = [contact, inquiry, user];
