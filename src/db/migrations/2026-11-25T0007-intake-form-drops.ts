// Frozen in time: each intake form's count of submissions dropped as spam, in a
// table of its own. It was a column of the form's record, bumped without a
// change-log entry (one per spam drop would flood the log) and changing the
// form's ETag under an admin editing it. The counts so far move across; the
// next migration drops the column. Never imports app code.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(`create table intake_form_drops (
    form_id bigint not null primary key references intake_forms (id) on delete cascade,
    dropped bigint not null
  )`)
    .execute(db);
  await sql
    .raw('insert into intake_form_drops (form_id, dropped) select id, dropped from intake_forms where dropped > 0')
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('intake_form_drops').execute();
}
