// Written by hand. Frozen: never edit it.
// The columns each user chose for each list, and the settings admins keep (a key and its JSON value).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table list_columns (
    user_id bigint not null references users (id) on delete cascade,
    resource varchar(64) not null,
    columns varchar(1000) not null,
    primary key (user_id, resource)
  )`.execute(db);
  await sql`create table settings (
    key varchar(100) primary key,
    value text not null,
    updated_at varchar(32) not null
  )`.execute(db);
}
