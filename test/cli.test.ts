// The command line as a user meets it: help, migrate, and serve on each database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DIALECTS, freshDatabase } from './helpers/database.ts';
import { runCli, serveCli } from './helpers/process.ts';

describe('leadbook command', () => {
  test('--help on the command and on each subcommand', async () => {
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    for (const word of ['serve', 'migrate', 'DATABASE_URL', 'DATA_DIR']) assert.match(top.stdout, new RegExp(word));
    for (const sub of ['serve', 'migrate']) {
      const help = await runCli([sub, '--help']);
      assert.equal(help.code, 0, sub);
      assert.match(help.stdout, new RegExp(`Usage: leadbook ${sub}`));
    }
    const wrong = await runCli(['nonsense']);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /unknown command/);
  });

  test('a bad DATABASE_URL is a clear message, not a stack trace', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: 'mysql://x' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /DATABASE_URL must start with postgres:\/\//);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });

  for (const dialect of DIALECTS) {
    test(`migrate, then serve, on ${dialect}`, async () => {
      const fresh = await freshDatabase(dialect);
      const env = { DATA_DIR: fresh.options.dataDir, DATABASE_URL: fresh.options.databaseUrl ?? '', LOG_LEVEL: 'warn' };
      try {
        const first = await runCli(['migrate'], env);
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stdout, /Success: 2026-11-22T0001-records/);
        const again = await runCli(['migrate'], env);
        assert.match(again.stdout, /up to date/);
        if (dialect === 'sqlite') assert.ok(fs.existsSync(path.join(fresh.options.dataDir, 'leadbook.sqlite')));

        const served = await serveCli(env);
        try {
          const created = await fetch(`${served.url}/api/v1/contacts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"From the CLI"}' });
          assert.equal(created.status, 201);
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
        const list = await fetch(`${served.url}/api/v1/inquiries`);
        assert.equal(list.status, 200);
        assert.deepEqual(((await list.json()) as { meta: unknown }).meta, { page: 1, per_page: 25, total: 0, last_page: 1 });
      } finally {
        await served.stop();
      }
    } finally {
      await fresh.drop();
    }
  });
});
