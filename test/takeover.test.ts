// Moving into the original service's database in place (issue 17): the database is made by Laravel's own PHP code
// (test/laravel/), Leadbook takes it over, and then every user signs in as before (password; TOTP from their secret,
// computed by oathtool; a recovery code once), every Sanctum token answers with its abilities, every record reads as
// PHP reads it, and PHP's own Hash::check, Crypt and Fortify's recovery-code logic still accept what Leadbook left.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { contact } from '../src/resources/contact.ts';
import { inquiry } from '../src/resources/inquiry.ts';
import { parse } from 'lossless-json';
import type { Json } from './helpers/json.ts';
import { call, runCli, type Served, serveCli } from './helpers/process.ts';
import {
  buildFixture,
  type FreshLaravelDatabase,
  freshLaravelDatabase,
  type LaravelManifest,
  type LaravelUser,
  mariadbAnswers,
  mariadbConnection,
  type PhpReader,
  phpReader,
} from './laravel/php.ts';

const phpMissing = (() => {
  try {
    execFileSync('php', ['-r', 'echo 1;']);
    return false;
  } catch {
    return true;
  }
})();
const skip = phpMissing
  ? 'php is not installed (apt-get install php-cli php-illuminate-database …)'
  : !(await mariadbAnswers())
    ? 'no MariaDB answers at 127.0.0.1:3306'
    : false;

/** The database's tables and columns, with types, nullability and defaults, and the row count of each table. */
async function schemaOf(database: string): Promise<string> {
  const connection = await mariadbConnection(database);
  try {
    const [columns] = await connection.query(
      `select table_name, column_name, column_type, is_nullable, column_default, extra from information_schema.columns
       where table_schema = ? order by table_name, ordinal_position`,
      [database],
    );
    const [tables] = await connection.query(
      'select table_name from information_schema.tables where table_schema = ? order by 1',
      [database],
    );
    const counts: Record<string, number> = {};
    for (const { table_name: name } of tables as { table_name: string }[]) {
      const [rows] = await connection.query(`select count(*) as n from \`${name}\``);
      counts[name] = Number((rows as { n: string }[])[0]!.n);
    }
    return JSON.stringify({ columns, counts });
  } finally {
    await connection.end();
  }
}

const totp = (secret: string) => execFileSync('oathtool', ['--totp', '-b', secret]).toString().trim();

/** Laravel's `Y-m-d H:i:s` in UTC (the fixture's APP_TIMEZONE) as the API writes an instant. */
const laravelInstant = (value: unknown) =>
  value === null ? null : new Date(`${String(value).replace(' ', 'T')}Z`).toISOString();

/** Every record of a path as the API serves it, page by page, integers kept as their digits. */
async function servedRecords(served: Served, token: string, path: string): Promise<Record<string, unknown>[]> {
  const records: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const response: Response = await fetch(`${served.url}/api/v1/${path}?per_page=100&sort=id&cursor=${cursor ?? ''}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    // Ticket numbers beyond 2^53 compare exactly.
    const page = parse(text, null, (digits) => digits) as { data: Record<string, unknown>[]; meta: Json };
    records.push(...page.data);
    cursor = page.meta.next_cursor;
  } while (cursor);
  return records;
}

/**
 * Every contact and inquiry of the original rows is served with PHP's values, field by field; `eloquent` reads them
 * through the models' casts (instants as UTC), else as the query builder gives them (instants as written, in UTC).
 */
async function sameRecords(served: Served, user: LaravelUser, php: PhpReader, eloquent = false): Promise<void> {
  const issued = await call(served.url, 'POST', '/api/v1/auth/token', null, {
    email: user.email,
    password: user.password,
    device_name: 'reader',
  });
  assert.equal(issued.status, 201, issued.text);
  for (const [resource, path] of [
    [contact, 'contacts'],
    [inquiry, 'inquiries'],
  ] as const) {
    const rows = new Map((await php.rows(path, eloquent)).map((r) => [String(r.id), r]));
    const original = (await servedRecords(served, issued.body.token, path)).filter((r) => rows.has(String(r.id)));
    assert.equal(original.length, rows.size, `${path}: every row is served`);
    for (const record of original) {
      const row = rows.get(String(record.id))!;
      for (const field of resource.fields.filter((f) => !f.hidden && f.name in row && f.name !== 'id')) {
        const value = row[field.name];
        const expected =
          value === null
            ? null
            : field.kind.name === 'dateTime'
              ? eloquent
                ? new Date(String(value)).toISOString()
                : laravelInstant(value)
              : field.kind.name === 'boolean'
                ? Boolean(Number(value))
                : String(value);
        const actual = record[field.name];
        assert.deepEqual(
          actual === null || typeof actual === 'boolean' || field.kind.name === 'dateTime' ? actual : String(actual),
          expected,
          `${path} ${record.id} ${field.name}`,
        );
      }
    }
  }
}

describe('taking over the original Laravel database (MariaDB)', { skip }, () => {
  let fresh: FreshLaravelDatabase;
  let manifest: LaravelManifest;
  let php: PhpReader;
  let env: Record<string, string>;
  let served: Served;
  const usedRecoveryCodes = new Map<string, string>();

  before(async () => {
    fresh = await freshLaravelDatabase('mysql');
    manifest = await buildFixture(fresh.target, { contacts: 2000, inquiries: 2000 });
    php = phpReader(fresh.target, manifest);
    env = {
      DATABASE_URL: fresh.databaseUrl!,
      LARAVEL_APP_KEY: manifest.app_key,
      LARAVEL_COEXIST: 'true',
      LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    await served?.stop();
    await fresh?.drop();
  });

  test('serve refuses a database that holds another app, and says what to run', async () => {
    const before = await schemaOf(fresh.target.database);
    const result = await runCli(['migrate'], env);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /leadbook takeover --check/);
    assert.equal(await schemaOf(fresh.target.database), before, 'nothing changed');
  });

  test('--check reports what it found and what it would add, and changes nothing', async () => {
    const before = await schemaOf(fresh.target.database);
    const result = await runCli(['takeover', '--check', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const { plan } = JSON.parse(result.stdout);
    const found = Object.fromEntries(plan.found.map((t: { table: string; rows: number }) => [t.table, t.rows]));
    assert.deepEqual(found, {
      users: manifest.users.length,
      contacts: 2000,
      inquiries: 2000,
      sessions: manifest.counts.sessions,
      personal_access_tokens: manifest.tokens.length,
      password_resets: manifest.counts.password_resets,
      migrations: manifest.migrations.length,
    });
    assert.deepEqual(plan.problems, []);
    for (const table of ['change_log', 'stages', 'leadbook_sessions', 'leadbook_personal_access_tokens'])
      assert.ok(plan.createTables.includes(table), table);
    assert.ok(
      plan.addColumns.some((c: { table: string; column: string }) => c.table === 'users' && c.column === 'role'),
    );
    assert.equal(await schemaOf(fresh.target.database), before, 'nothing changed');
  });

  test('--check on a database with a column of a foreign type reports it, refuses, and changes nothing', async () => {
    const foreign = await freshLaravelDatabase('mysql');
    try {
      await buildFixture(foreign.target, { contacts: 20, inquiries: 20, foreign: true });
      const foreignEnv = { ...env, DATABASE_URL: foreign.databaseUrl! };
      const before = await schemaOf(foreign.target.database);
      const check = await runCli(['takeover', '--check'], foreignEnv);
      assert.equal(check.code, 1);
      assert.match(check.stdout, /contacts\.budget is decimal\(12,2\)/);
      const apply = await runCli(['takeover'], foreignEnv);
      assert.equal(apply.code, 1, 'the takeover itself refuses too');
      assert.equal(await schemaOf(foreign.target.database), before, 'nothing changed');
    } finally {
      await foreign.drop();
    }
  });

  test('the takeover adds beside the original rows and changes none of them; run again, it changes nothing', async () => {
    const originalTables = ['users', 'contacts', 'inquiries', 'personal_access_tokens', 'sessions', 'migrations'];
    const rowsBefore = Object.fromEntries(await Promise.all(originalTables.map(async (t) => [t, await php.rows(t)])));
    const first = await runCli(['takeover'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Made services rows for ids/);
    assert.match(first.stdout, /naming no user/);
    assert.match(first.stdout, /Admin: /);
    for (const table of originalTables) {
      const after = await php.rows(table);
      assert.equal(after.length, rowsBefore[table].length, table);
      // Each original column keeps every value; Leadbook's added columns are beside them.
      after.forEach((row, i) => {
        for (const [column, value] of Object.entries(rowsBefore[table][i] as Record<string, unknown>))
          assert.deepEqual(row[column], value, `${table} ${i} ${column}`);
      });
    }
    // Its own record writes (the lookup rows, the admin's role) left their change-log entries.
    const connection = await mariadbConnection(fresh.target.database);
    try {
      const [entries] = await connection.query(
        `select resource, action, count(*) as n from change_log group by resource, action order by resource`,
      );
      const [lookups] = await connection.query(
        'select (select count(*) from services) + (select count(*) from sources) as n',
      );
      const counted = Object.fromEntries(
        (entries as { resource: string; action: string; n: string }[]).map((e) => [
          `${e.resource} ${e.action}`,
          Number(e.n),
        ]),
      );
      assert.equal(
        (counted['services created'] ?? 0) + (counted['sources created'] ?? 0),
        Number((lookups as { n: string }[])[0]!.n),
      );
      assert.equal(counted['users updated'], 1, "the admin's role");
    } finally {
      await connection.end();
    }
    const schema = await schemaOf(fresh.target.database);
    const again = await runCli(['takeover'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await schemaOf(fresh.target.database), schema, 'a second run changes nothing');
  });

  test('every user signs in with the password, TOTP code or recovery code they had', async () => {
    served = await serveCli(env, 60_000);
    for (const user of manifest.users) {
      const body = { email: user.email, password: user.password, device_name: 'takeover test' };
      const twoFactor = user.two_factor && user.confirmed;
      if (!twoFactor) {
        const signedIn = await call(served.url, 'POST', '/api/v1/auth/token', null, body);
        assert.equal(signedIn.status, 201, `${user.email}: ${signedIn.text}`);
        continue;
      }
      const without = await call(served.url, 'POST', '/api/v1/auth/token', null, body);
      assert.notEqual(without.status, 201, `${user.email} needs the second factor`);
      const withCode = await call(served.url, 'POST', '/api/v1/auth/token', null, {
        ...body,
        code: totp(user.two_factor!.secret),
      });
      assert.equal(withCode.status, 201, `${user.email} TOTP: ${withCode.text}`);
      const code = user.two_factor!.recovery_codes[2]!;
      const withRecovery = await call(served.url, 'POST', '/api/v1/auth/token', null, { ...body, recovery_code: code });
      assert.equal(withRecovery.status, 201, `${user.email} recovery code: ${withRecovery.text}`);
      usedRecoveryCodes.set(user.email, code);
      const again = await call(served.url, 'POST', '/api/v1/auth/token', null, { ...body, recovery_code: code });
      assert.ok([401, 422].includes(again.status), `${user.email}: a recovery code works once (${again.status})`);
    }
    assert.ok(usedRecoveryCodes.size >= 1, 'the fixture has users with two-factor');
  });

  test('every Sanctum token answers GET /api/v1/me as its user, with its abilities honoured', async () => {
    for (const token of manifest.tokens) {
      const me = await call(served.url, 'GET', '/api/v1/me', token.plain);
      if (token.expired) {
        assert.equal(me.status, 401, `${token.name} expired`);
        continue;
      }
      const reads = token.abilities.includes('*') || token.abilities.some((a) => /read|view/.test(a));
      if (!reads) {
        assert.equal(me.status, 403, `${token.name} (${token.abilities}) may not read`);
        continue;
      }
      assert.equal(me.status, 200, `${token.name}: ${me.text}`);
      assert.equal(String(me.body.data.id), String(token.user_id));
      const creates = token.abilities.includes('*') || token.abilities.some((a) => /create/.test(a));
      const made = await call(served.url, 'POST', '/api/v1/contacts', token.plain, { name: `Made by ${token.name}` });
      assert.equal(made.status, creates ? 201 : 403, `${token.name} (${token.abilities}) creating: ${made.text}`);
    }
  });

  test('every contact and inquiry reads as PHP reads the row, field by field', async () => {
    const admin = manifest.users.find((u) => !u.two_factor)!;
    await sameRecords(served, admin, php);
  });

  test('beside the original app: PHP still accepts the password, secret and remaining recovery codes', async () => {
    for (const user of manifest.users) {
      assert.equal(await php.hashCheck(user.email, user.password), true, `${user.email}: bcrypt kept`);
      if (!user.two_factor) continue;
      assert.equal(await php.decryptSecret(user.email), user.two_factor.secret, user.email);
      const used = usedRecoveryCodes.get(user.email);
      const codes = await php.recoveryCodes(user.email);
      assert.equal(codes.length, user.two_factor.recovery_codes.length, `${user.email}: a used code is replaced`);
      for (const code of user.two_factor.recovery_codes)
        assert.equal(await php.recoveryCheck(user.email, code), code !== used, `${user.email} ${code}`);
      if (used) assert.ok(!codes.includes(used));
    }
  });

  test('beside the original app: a password changed in Leadbook is bcrypt, as Laravel writes it, and PHP accepts it', async () => {
    const user = manifest.users.find((u) => !u.two_factor && u.email_verified)!;
    const issued = await call(served.url, 'POST', '/api/v1/auth/token', null, {
      email: user.email,
      password: user.password,
      device_name: 'password change',
    });
    assert.equal(issued.status, 201, issued.text);
    const changed = `${user.password} and then some`;
    const put = await call(served.url, 'PUT', '/api/v1/me/password', issued.body.token, {
      current_password: user.password,
      password: changed,
    });
    assert.equal(put.status, 204, put.text);
    const stored = (await php.rows('users')).find((row) => row.email === user.email)!;
    assert.match(String(stored.password), /^\$2y\$12\$/);
    assert.equal(await php.hashCheck(user.email, changed), true, 'PHP accepts the new password');
    assert.equal(await php.hashCheck(user.email, user.password), false, 'and no longer the old one');
    const again = await call(served.url, 'POST', '/api/v1/auth/token', null, {
      email: user.email,
      password: changed,
      device_name: 'after the change',
    });
    assert.equal(again.status, 201, again.text);
    const kept = (await php.rows('users')).find((row) => row.email === user.email)!;
    assert.equal(kept.password, stored.password, 'signing in leaves the bcrypt hash as it is');
  });
});

describe('a Laravel database kept in another timezone (APP_TIMEZONE=Europe/Berlin)', { skip }, () => {
  let fresh: FreshLaravelDatabase;
  let manifest: LaravelManifest;
  let served: Served;
  const zone = 'Europe/Berlin';

  before(async () => {
    fresh = await freshLaravelDatabase('mysql');
    manifest = await buildFixture(fresh.target, { contacts: 300, inquiries: 300, timezone: zone });
  });
  after(async () => {
    await served?.stop();
    await fresh?.drop();
  });

  test('instants read as Laravel meant them, and Leadbook writes them as Laravel reads them', async () => {
    const env = { DATABASE_URL: fresh.databaseUrl!, LARAVEL_APP_KEY: manifest.app_key, APP_TIMEZONE: zone };
    const user = manifest.users.find((u) => !u.two_factor)!;
    const taken = await runCli(['takeover', '--admin', user.email], { ...env, LOG_LEVEL: 'warn' });
    assert.equal(taken.code, 0, taken.stderr);
    served = await serveCli({ ...env, LOG_LEVEL: 'warn' }, 60_000);
    const php = phpReader(fresh.target, manifest);
    // PHP's models read the wall-clock times in the app's zone (and the hour the clock turned back as its second).
    await sameRecords(served, user, php, true);
    const issued = await call(served.url, 'POST', '/api/v1/auth/token', null, {
      email: user.email,
      password: user.password,
      device_name: 'writer',
    });
    const patched = await call(served.url, 'PATCH', '/api/v1/contacts/1', issued.body.token, { city: 'Leipzig' });
    assert.equal(patched.status, 200, patched.text);
    const row = (await php.rows('contacts', true)).find((r) => Number(r.id) === 1)!;
    assert.equal(
      new Date(String(row.updated_at)).toISOString().slice(0, 19),
      patched.body.data.updated_at.slice(0, 19),
    );
  });
});
