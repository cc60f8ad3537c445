// Written by hand. Frozen: never edit it.
// "My open inquiries" (the board for one assignee, stage by stage) reads inquiries by (assigned_to, stage_id), newest
// first, and counts them: one index walk each instead of a scan of a stage's or an assignee's index.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists inquiries_assignee_stage on inquiries (assigned_to, stage_id, id)`.execute(db);
}
