// The command line as a user meets it: help, migrate, and serve on each database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { recordResources } from '../src/resources/index.ts';
import { DIALECTS, freshDatabase } from './helpers/database.ts';
import { runCli, serveCli } from './helpers/process.ts';

describe('leadbook command', () => {
  test('--help on the command and on each subcommand', async () => {
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    for (const word of ['serve', 'migrate', 'user:create', 'DATABASE_URL', 'DATA_DIR'])
      assert.match(top.stdout, new RegExp(word));
    for (const sub of ['serve', 'migrate', 'user:create']) {
      const help = await runCli([sub, '--help']);
      assert.equal(help.code, 0, sub);
      assert.match(help.stdout, new RegExp(`Usage: leadbook ${sub}`));
    }
    // The CSV commands name the record resources, from the declarations.
    for (const sub of ['import', 'export']) {
      const help = await runCli([sub, '--help']);
      assert.equal(help.code, 0, sub);
      // (commander wraps the description at 80 columns: compared with the line breaks and indents made single spaces)
      const words = help.stdout.replace(/\s+/g, ' ');
      assert.match(words, new RegExp(`resource one of ${recordResources.map((r) => r.name).join(', ')}`), sub);
    }
    const wrong = await runCli(['nonsense']);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /unknown command/);
  });

  test('user:create reads the password from standard input, and refuses weak or duplicate accounts', async () => {
    const fresh = await freshDatabase('sqlite');
    const env = { DATA_DIR: fresh.options.dataDir, DATABASE_URL: '' };
    try {
      const made = await runCli(
        ['user:create', '--admin', '--email', 'Owner@Example.com', '--name', 'Owner'],
        env,
        'a long cli pass phrase\n',
      );
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /Created admin Owner@Example.com/);
      assert.doesNotMatch(made.stdout + made.stderr, /a long cli pass phrase/);
      const weak = await runCli(['user:create', '--email', 'weak@example.com'], env, 'password\n');
      assert.equal(weak.code, 1);
      assert.match(weak.stderr, /password: is one of the most common passwords/);
      const twice = await runCli(['user:create', '--email', 'owner@example.com'], env, 'another pass phrase\n');
      assert.match(twice.stderr, /email: is already taken/);

      const served = await serveCli({ ...env, LOG_LEVEL: 'warn' });
      try {
        const login = await fetch(`${served.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'owner@example.com', password: 'a long cli pass phrase' }),
        });
        assert.equal(login.status, 200, 'the account signs in, email matched case-insensitively');
        assert.equal(((await login.json()) as { data: { role: string } }).data.role, 'admin');
      } finally {
        await served.stop();
      }
    } finally {
      await fresh.drop();
    }
  });

  test('a bad DATABASE_URL is a clear message, not a stack trace', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: 'oracle://x' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /DATABASE_URL must start with postgres:\/\/, mysql:\/\/ or mariadb:\/\//);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });

  for (const dialect of DIALECTS) {
    test(`migrate, then serve, on ${dialect}`, async () => {
      const fresh = await freshDatabase(dialect);
      const env = { DATA_DIR: fresh.options.dataDir, DATABASE_URL: fresh.options.databaseUrl ?? '', LOG_LEVEL: 'warn' };
      try {
        const first = await runCli(['migrate'], env);
        assert.equal(first.code, 0, first.stderr);
        // MariaDB starts from one migration that stands for the others' history (src/db/migrations/mysql/).
        assert.match(
          first.stdout,
          dialect === 'mysql' ? /Success: 2026-11-26T0006-mysql-baseline/ : /Success: 2026-11-22T0001-records/,
        );
        const again = await runCli(['migrate'], env);
        assert.match(again.stdout, /up to date/);
        if (dialect === 'sqlite') assert.ok(fs.existsSync(path.join(fresh.options.dataDir, 'leadbook.sqlite')));

        const served = await serveCli(env);
        try {
          const json = { 'content-type': 'application/json' };
          const account = { email: 'first@example.com', password: 'first account pass phrase' };
          const registered = await fetch(`${served.url}/api/v1/auth/register`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ name: 'First', ...account }),
          });
          assert.equal(registered.status, 201);
          const issued = await fetch(`${served.url}/api/v1/auth/token`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ ...account, device_name: 'cli test' }),
          });
          const { token } = (await issued.json()) as { token: string };
          const created = await fetch(`${served.url}/api/v1/contacts`, {
            method: 'POST',
            headers: { ...json, authorization: `Bearer ${token}` },
            body: '{"name":"From the CLI"}',
          });
          assert.equal(created.status, 201);
          // A CSV imported by the command line is in the change log as the command line's, by the first admin.
          const file = path.join(fresh.options.dataDir, 'cli.csv');
          fs.writeFileSync(file, 'name,city\nImported by the CLI,Oslo\n');
          const imported = await runCli(['import', 'contacts', file], env);
          assert.equal(imported.code, 0, imported.stderr);
          const auth = { authorization: `Bearer ${token}` };
          const found = (await (
            await fetch(`${served.url}/api/v1/contacts?filter[name]=Imported%20by%20the%20CLI`, { headers: auth })
          ).json()) as { data: { id: number }[] };
          const activity = (await (
            await fetch(`${served.url}/api/v1/contacts/${found.data[0]!.id}/activity`, { headers: auth })
          ).json()) as { data: { action: string; via: string; actor: { name: string } }[] };
          assert.deepEqual(
            activity.data.map((e) => [e.action, e.via, e.actor.name]),
            [['created', 'cli', 'First']],
          );
          const ready = await fetch(`${served.url}/readyz`);
          assert.equal(ready.status, 200);
        } finally {
          await served.stop();
        }
        assert.equal(served.child.exitCode, 0, 'SIGTERM shuts down cleanly');
      } finally {
        await fresh.drop();
      }
    });
  }

  test('serve applies migrations on start in a new DATA_DIR', async () => {
    const fresh = await freshDatabase('sqlite');
    try {
      const served = await serveCli({ DATA_DIR: fresh.options.dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' });
      try {
        assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
        const list = await fetch(`${served.url}/api/v1/inquiries`);
        assert.equal(list.status, 401, 'the tables exist and the records need a signed-in user');
        assert.ok(fs.existsSync(path.join(fresh.options.dataDir, 'app.key')), 'the app key was generated');
        assert.equal(fs.statSync(path.join(fresh.options.dataDir, 'app.key')).mode & 0o777, 0o600);
      } finally {
        await served.stop();
      }
    } finally {
      await fresh.drop();
    }
  });
});
