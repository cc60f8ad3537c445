// Frozen in time: a number that changes whenever something a signed-in request
// relies on may have changed (a user row updated or deleted; a personal access
// token deleted, or its owner, abilities or expiry changed), in that change's
// own transaction, by triggers: a process may keep what it read of a token and
// its user for as long as the number stays the same, and reads the number (one
// row) instead. A token's last use, written once a minute, does not move it.
// On MariaDB Leadbook's tokens are `leadbook_personal_access_tokens` (see the
// baseline), and a trigger fires for each row (it has no statement triggers).
// Never imports app code.
import { type Kysely, PostgresAdapter, SqliteAdapter, sql } from 'kysely';

/** The token columns whose change moves the number. */
const TOKEN_COLUMNS = ['user_id', 'token_hash', 'abilities', 'expires_at'];

export async function up(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const run = (text: string) => sql.raw(text).execute(db);
  await run('create table auth_epoch (id integer primary key, n bigint not null)');
  await run('insert into auth_epoch (id, n) values (1, 0)');
  const bump = 'update auth_epoch set n = n + 1 where id = 1';
  if (adapter instanceof SqliteAdapter) {
    await run(`create trigger users_auth_epoch_update after update on users begin ${bump}; end`);
    await run(`create trigger users_auth_epoch_delete after delete on users begin ${bump}; end`);
    await run(
      `create trigger tokens_auth_epoch_update after update of ${TOKEN_COLUMNS.join(', ')} on personal_access_tokens begin ${bump}; end`,
    );
    await run(`create trigger tokens_auth_epoch_delete after delete on personal_access_tokens begin ${bump}; end`);
  } else if (adapter instanceof PostgresAdapter) {
    await run(`create function lb_auth_epoch() returns trigger language plpgsql as $$
    begin
      ${bump};
      return null;
    end $$`);
    const on = (name: string, event: string, table: string) =>
      run(`create trigger ${name} after ${event} on ${table} for each statement execute function lb_auth_epoch()`);
    await on('users_auth_epoch', 'update or delete', 'users');
    await on('tokens_auth_epoch_update', `update of ${TOKEN_COLUMNS.join(', ')}`, 'personal_access_tokens');
    await on('tokens_auth_epoch_delete', 'delete', 'personal_access_tokens');
  } else {
    const tokens = 'leadbook_personal_access_tokens';
    const changed = TOKEN_COLUMNS.map((c) => `not (old.${c} <=> new.${c})`).join(' or ');
    await run(`create trigger users_auth_epoch_update after update on users for each row ${bump}`);
    await run(`create trigger users_auth_epoch_delete after delete on users for each row ${bump}`);
    await run(`create trigger tokens_auth_epoch_update after update on ${tokens} for each row
      begin if ${changed} then ${bump}; end if; end`);
    await run(`create trigger tokens_auth_epoch_delete after delete on ${tokens} for each row ${bump}`);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const run = (text: string) => sql.raw(text).execute(db);
  const tokens = adapter instanceof SqliteAdapter || adapter instanceof PostgresAdapter ? 'personal_access_tokens' : 'leadbook_personal_access_tokens';
  const triggers: [string, string][] =
    adapter instanceof PostgresAdapter
      ? [['users_auth_epoch', 'users'], ['tokens_auth_epoch_update', tokens], ['tokens_auth_epoch_delete', tokens]]
      : [
          ['users_auth_epoch_update', 'users'],
          ['users_auth_epoch_delete', 'users'],
          ['tokens_auth_epoch_update', tokens],
          ['tokens_auth_epoch_delete', tokens],
        ];
  for (const [name, table] of triggers)
    await run(adapter instanceof PostgresAdapter ? `drop trigger ${name} on ${table}` : `drop trigger ${name}`);
  if (adapter instanceof PostgresAdapter) await run('drop function lb_auth_epoch');
  await run('drop table auth_epoch');
}
