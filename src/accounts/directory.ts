// Names of team members, for showing created_by / assigned_to and for the
// assignee lists. A team is small: the whole directory is one query.
import type { Database } from '../db/connection.ts';

export interface Member {
  id: number;
  name: string;
}

export async function teamMembers(database: Database): Promise<Member[]> {
  const rows = await database.db.selectFrom('users').select(['id', 'name']).orderBy('name').orderBy('id').execute();
  return rows.map((r) => ({ id: Number(r.id), name: String(r.name) }));
}
