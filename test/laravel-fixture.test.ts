// The original Laravel service's database, built by Laravel's own PHP code (test/laravel/fixture.php),
// on SQLite and on MariaDB: its secrets check out through PHP (bcrypt, the encrypter, Fortify's
// recovery codes, Sanctum's token lookup) and through independent tools (oathtool, node:crypto, a
// second database driver), its rows are all there with their 64-bit values exact, the same seed
// gives the same rows, and `--foreign` really makes a column type the takeover must refuse.
// The MariaDB part is skipped when the server does not answer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  buildFixture,
  type FreshLaravelDatabase,
  freshLaravelDatabase,
  type LaravelDriver,
  type LaravelManifest,
  type LaravelTarget,
  MARIADB_URL,
  mariadbAnswers,
  mariadbConnection,
  type PhpReader,
  phpReader,
} from './laravel/php.ts';

const ROWS = 200;
const TWO_TO_53 = 2n ** 53n;
const mariadbUp = await mariadbAnswers();

/** A query on the database itself, not through PHP: better-sqlite3 or mysql2, with 64-bit integers exact. */
async function direct(target: LaravelTarget, sql: string): Promise<Record<string, unknown>[]> {
  if (target.driver === 'sqlite') {
    const db = new Database(target.database, { readonly: true });
    try {
      return db.prepare(sql).safeIntegers(true).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const connection = await mariadbConnection(target.database);
  try {
    const [rows] = await connection.query(sql);
    return rows as Record<string, unknown>[];
  } finally {
    await connection.end();
  }
}

/** The declared type of a column: pragma table_info on SQLite, information_schema on MariaDB. */
async function columnType(target: LaravelTarget, table: string, column: string): Promise<string> {
  const rows =
    target.driver === 'sqlite'
      ? await direct(target, `select type as t from pragma_table_info('${table}') where name = '${column}'`)
      : await direct(
          target,
          `select column_type as t from information_schema.columns
           where table_schema = database() and table_name = '${table}' and column_name = '${column}'`,
        );
  assert.equal(rows.length, 1, `${table}.${column} exists`);
  return String(rows[0]!.t).toLowerCase();
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const oathtool = promisify(execFile);

for (const driver of ['sqlite', 'mysql'] as LaravelDriver[]) {
  const skip = driver === 'mysql' && !mariadbUp ? `no MariaDB answers at ${MARIADB_URL.host}` : false;

  describe(`the Laravel-made original database on ${driver}`, { skip }, () => {
    let fresh: FreshLaravelDatabase;
    let manifest: LaravelManifest;
    let php: PhpReader;
    // SQLite gets a key made by Laravel's Encrypter::generateKey; MariaDB one given on the command line.
    const givenKey = driver === 'mysql' ? `base64:${randomBytes(32).toString('base64')}` : undefined;

    before(async () => {
      fresh = await freshLaravelDatabase(driver);
      manifest = await buildFixture(fresh.target, {
        seed: 7,
        contacts: ROWS,
        inquiries: ROWS,
        appKey: givenKey,
        timezone: 'Europe/Berlin',
      });
      php = phpReader(fresh.target, manifest);
    });
    after(() => fresh?.drop());

    test('the manifest, PHP and the database itself agree on the row counts', async () => {
      if (givenKey) assert.equal(manifest.app_key, givenKey);
      else assert.match(manifest.app_key, /^base64:[A-Za-z0-9+/]{43}=$/);
      assert.equal(manifest.counts.contacts, ROWS);
      assert.equal(manifest.counts.inquiries, ROWS);
      assert.equal(manifest.counts.users, manifest.users.length);
      assert.equal(manifest.counts.personal_access_tokens, manifest.tokens.length);
      for (const table of ['contacts', 'inquiries', 'users', 'personal_access_tokens', 'sessions', 'password_resets']) {
        const [counted] = await direct(fresh.target, `select count(*) as n from ${table}`);
        assert.equal(Number(counted!.n), manifest.counts[table], `${table} in the database`);
      }
      assert.equal((await php.rows('contacts')).length, ROWS);
      const migrations = await php.rows('migrations');
      assert.deepEqual(
        migrations.map((row) => row.migration),
        manifest.migrations,
      );
      assert.ok(manifest.migrations.includes('2019_12_14_000001_create_personal_access_tokens_table'));
    });

    test('every password checks out through BcryptHasher, stored as $2y$ with 10 rounds', async () => {
      assert.ok(manifest.users.length >= 8);
      assert.ok(
        manifest.users.some((user) => [...user.name].some((char) => char.codePointAt(0)! > 127)),
        'a non-ASCII name',
      );
      const stored = new Map((await php.rows('users')).map((row) => [row.email, row]));
      for (const user of manifest.users) {
        assert.match(String(stored.get(user.email)?.password), /^\$2y\$10\$[./A-Za-z0-9]{53}$/);
        assert.equal(await php.hashCheck(user.email, user.password), true, user.email);
      }
      assert.equal(await php.hashCheck(manifest.users[0]!.email, `${manifest.users[0]!.password}x`), false);
    });

    test('two-factor secrets decrypt to the manifest, give TOTP codes, and their recovery codes check', async () => {
      const withTwoFactor = manifest.users.filter((user) => user.two_factor !== null);
      assert.ok(withTwoFactor.some((user) => user.confirmed));
      assert.ok(
        withTwoFactor.some((user) => !user.confirmed),
        'one user enabled two-factor but never confirmed it',
      );
      assert.ok(manifest.users.some((user) => user.two_factor === null));
      const stored = new Map((await php.rows('users')).map((row) => [row.email, row]));
      for (const user of withTwoFactor) {
        const { secret, recovery_codes: codes } = user.two_factor!;
        const row = stored.get(user.email)!;
        assert.equal(row.two_factor_confirmed_at === null, !user.confirmed, user.email);
        // The stored value is Laravel's payload: base64 of JSON with iv, value and mac.
        const payload = JSON.parse(Buffer.from(String(row.two_factor_secret), 'base64').toString('utf8'));
        assert.deepEqual(Object.keys(payload).sort(), ['iv', 'mac', 'tag', 'value']);
        assert.match(secret, /^[A-Z2-7]{16}$/);
        assert.equal(await php.decryptSecret(user.email), secret);
        const { stdout } = await oathtool('oathtool', ['--totp', '-b', secret]);
        assert.match(stdout.trim(), /^\d{6}$/);
        assert.equal(codes.length, 8);
        for (const code of codes) assert.match(code, /^[A-Za-z0-9]{10}-[A-Za-z0-9]{10}$/);
        assert.deepEqual(await php.recoveryCodes(user.email), codes);
        assert.equal(await php.recoveryCheck(user.email, codes[5]!), true);
        assert.equal(await php.recoveryCheck(user.email, codes[5]!.toLowerCase()), false);
      }
      assert.equal(await php.decryptSecret(manifest.users.find((user) => !user.two_factor)!.email), null);
    });

    test('Sanctum tokens: the SHA-256 of the secret is stored, and findToken finds each with its expiry', async () => {
      const stored = new Map((await php.rows('personal_access_tokens')).map((row) => [row.id, row]));
      assert.ok(manifest.tokens.some((token) => token.expired));
      assert.ok([...stored.values()].some((row) => row.last_used_at !== null));
      for (const token of manifest.tokens) {
        const [id, secret] = token.plain.split('|') as [string, string];
        assert.equal(Number(id), token.id);
        assert.match(secret, /^[A-Za-z0-9]{40}$/);
        const row = stored.get(token.id)!;
        assert.equal(row.token, sha256(secret));
        assert.equal(row.tokenable_type, 'App\\Models\\User');
        assert.equal(row.tokenable_id, token.user_id);
        assert.deepEqual(JSON.parse(String(row.abilities)), token.abilities);
        const check = await php.tokenCheck(token.plain);
        assert.ok(check.found, token.name);
        assert.equal(check.expired, token.expired, token.name);
        assert.equal(check.valid, !token.expired, token.name);
        assert.deepEqual(check.abilities, token.abilities);
      }
      const [firstId, firstSecret] = manifest.tokens[0]!.plain.split('|') as [string, string];
      assert.deepEqual(await php.tokenCheck(`${firstId}|${firstSecret.slice(1)}x`), { found: false });
      assert.deepEqual(await php.tokenCheck(`${manifest.tokens[1]!.id}|${firstSecret}`), { found: false });
    });

    test('the rows hold 64-bit ticket numbers exactly, dangling references, NULL beside empty strings', async () => {
      const inquiries = await php.rows('inquiries');
      const big = inquiries.filter((row) => typeof row.ticket_id === 'bigint' && row.ticket_id > TWO_TO_53);
      assert.ok(big.length >= 3, 'ticket numbers beyond 2^53');
      const directBig = await direct(
        fresh.target,
        'select id, ticket_id from inquiries where ticket_id > 9007199254740992',
      );
      assert.deepEqual(
        directBig.map((row) => String(row.ticket_id)).sort(),
        big.map((row) => String(row.ticket_id)).sort(),
        'PHP and the database driver read the same 64-bit values',
      );
      const userIds = new Set(manifest.users.map((user) => user.id));
      const contacts = await php.rows('contacts');
      assert.ok(contacts.some((row) => typeof row.created_by === 'number' && !userIds.has(row.created_by)));
      assert.ok(inquiries.some((row) => typeof row.assigned_to === 'number' && !userIds.has(row.assigned_to)));
      assert.ok(contacts.some((row) => row.name === '') && contacts.some((row) => row.name === null));
      assert.ok(contacts.some((row) => typeof row.name === 'string' && [...row.name].length === 255));
      assert.ok(contacts.some((row) => typeof row.detail === 'string' && [...row.detail].length === 500));
      for (const flag of ['inquiry_status', 'status', 'inquiry_type']) {
        assert.deepEqual(new Set(inquiries.map((row) => row[flag])), new Set([0, 1, null]), flag);
      }
      const serviceIds = new Set(contacts.map((row) => row.service_id));
      assert.ok(serviceIds.has(null) && [...serviceIds].every((id) => id === null || (id as number) <= 9));
    });

    test('timestamps are wall-clock times in the app zone, as Eloquent formats them', async () => {
      const contacts = await php.rows('contacts');
      for (const row of contacts) {
        if (row.created_at !== null) assert.match(String(row.created_at), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      }
      assert.ok(contacts.some((row) => row.created_at === null));
      // The hour Berlin's clocks repeat when summer time ends: the same text stands for two instants.
      assert.ok(contacts.some((row) => String(row.created_at).startsWith('2021-10-31 02:')));
      const eloquent = await php.rows('inquiries', true);
      const first = eloquent.find((row) => typeof row.assigned_date === 'string')!;
      assert.match(String(first.assigned_date), /Z$/, 'Eloquent serializes cast dates in UTC');
      assert.equal(typeof eloquent.find((row) => row.status !== null)!.status, 'boolean');
    });

    if (driver === 'mysql') {
      test('MariaDB tables are utf8mb4_unicode_ci with BIGINT UNSIGNED ids, as Laravel makes them', async () => {
        assert.equal(await columnType(fresh.target, 'users', 'id'), 'bigint(20) unsigned');
        assert.equal(await columnType(fresh.target, 'inquiries', 'ticket_id'), 'bigint(20)');
        assert.equal(await columnType(fresh.target, 'inquiries', 'status'), 'tinyint(1)');
        const tables = await direct(
          fresh.target,
          `select table_name as name, table_collation as c from information_schema.tables
           where table_schema = database()`,
        );
        assert.equal(tables.length, 8);
        for (const table of tables) assert.equal(table.c, 'utf8mb4_unicode_ci', String(table.name));
      });
    }

    test('--foreign makes contacts.budget a decimal; without it the column is a string', async () => {
      const foreign = await freshLaravelDatabase(driver);
      try {
        const made = await buildFixture(foreign.target, { contacts: 30, inquiries: 5, foreign: true });
        assert.equal(made.foreign, true);
        const expected = driver === 'mysql' ? 'decimal(12,2)' : 'numeric';
        assert.equal(await columnType(foreign.target, 'contacts', 'budget'), expected);
        assert.equal(
          await columnType(foreign.target, 'inquiries', 'budget'),
          driver === 'mysql' ? 'varchar(255)' : 'varchar',
        );
      } finally {
        await foreign.drop();
      }
      assert.equal(
        await columnType(fresh.target, 'contacts', 'budget'),
        driver === 'mysql' ? 'varchar(255)' : 'varchar',
      );
    });
  });
}

test('the same seed gives the same contacts and inquiries; another seed gives others', async () => {
  const made: Record<string, unknown>[][] = [];
  for (const seed of [11, 11, 12]) {
    const fresh = await freshLaravelDatabase('sqlite');
    try {
      const manifest = await buildFixture(fresh.target, { seed, contacts: 40, inquiries: 40 });
      const php = phpReader(fresh.target, manifest);
      made.push([...(await php.rows('contacts')), ...(await php.rows('inquiries'))]);
    } finally {
      await fresh.drop();
    }
  }
  assert.deepEqual(made[0], made[1]);
  assert.notDeepEqual(made[0], made[2]);
});
