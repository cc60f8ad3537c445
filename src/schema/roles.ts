// The roles of a team member and what each may do with a resource's records
// (CONTRACT.md, "Roles"). A resource declares, per kind of work, the least role
// that may do it; the operations ask `allows` and nothing else.
export const ROLES = ['admin', 'manager', 'agent', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, agent: 1, manager: 2, admin: 3 };

/** Whether `role` is `least` or above it. */
export const atLeast = (role: Role, least: Role) => RANK[role] >= RANK[least];

/**
 * The least role for each kind of work on a resource's records. `own`: changing or deleting a record one of whose
 * user references (its creator, its assignee) names you; `any`: anyone's; `bulk`: import, export and the trash.
 */
export interface Access {
  read: Role;
  create: Role;
  own: Role;
  any: Role;
  bulk: Role;
}

/** The team's records: everyone reads, agents add and keep their own, managers everyone's. */
export const TEAM_ACCESS: Access = { read: 'viewer', create: 'agent', own: 'agent', any: 'manager', bulk: 'manager' };
export const ADMIN_ACCESS: Access = { read: 'admin', create: 'admin', own: 'admin', any: 'admin', bulk: 'admin' };

/** What a request may ask of a resource's records. */
export type Ability = 'read' | 'create' | 'update' | 'delete' | 'import' | 'export';

/** Whether `role` may do `ability`; for update and delete, `owned` says whether the record is the actor's. */
export function allows(role: Role, access: Access, ability: Ability, owned = false): boolean {
  switch (ability) {
    case 'read':
    case 'create':
      return atLeast(role, access[ability]);
    case 'update':
    case 'delete':
      return atLeast(role, owned ? access.own : access.any);
    case 'import':
    case 'export':
      return atLeast(role, access.bulk);
  }
}
