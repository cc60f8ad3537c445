// The roles of a team member, from least to most allowed here: what a user
// record's `role` holds, and what a resource's `access` names.
export const ROLES = ['admin', 'agent'] as const;
export type Role = (typeof ROLES)[number];
