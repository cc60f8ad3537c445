// Frozen in time: whose turn it is, per assignment rule. The row is locked
// while a new inquiry's assignee is picked, so that arrivals on several
// processes take turns one after another; it goes with its rule. Never imports
// app code.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(`create table assignment_turns (
    rule_id bigint primary key references assignment_rules (id) on delete cascade,
    last_user_id bigint
  )`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('assignment_turns').execute();
}
