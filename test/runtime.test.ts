// The runtime the app ships with: the pinned Node (package.json's `node`
// dependency; LEADBOOK_TEST_NODE names the major a CI pass means, e.g. 22),
// and the compiled build (dist/) that bin/leadbook.js runs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { freshDatabase } from './helpers/database.ts';
import { ROOT, runCli, serveCli } from './helpers/process.ts';

const run = promisify(execFile);
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};
const MIGRATION = /^\d{4}-\d{2}-\d{2}T\d{4}-[a-z0-9-]+\.ts$/;

describe('runtime', () => {
  test("the tests run on the Node meant (LEADBOOK_TEST_NODE: a major or an exact version; else package.json's node dependency)", () => {
    const pinned = pkg.dependencies.node;
    assert.match(pinned ?? '', /^\d+\.\d+\.\d+$/, 'package.json pins node to an exact version');
    const meant = process.env.LEADBOOK_TEST_NODE || pinned!;
    if (/^\d+$/.test(meant))
      assert.equal(process.versions.node.split('.')[0], meant, `running on ${process.version}, meant Node ${meant}`);
    else
      assert.equal(
        process.versions.node,
        meant,
        `running on ${process.version}, meant ${meant} (npm scripts run node_modules/.bin/node)`,
      );
  });

  test('`node bin/leadbook.js --version` prints the version of package.json', async () => {
    const result = await runCli(['--version']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), pkg.version);
  });

  test('the compiled serve starts and answers /healthz on SQLite; its password hashing runs at the lowest priority', async () => {
    const fresh = await freshDatabase('sqlite');
    try {
      // dist/cli/main.js itself (bin/leadbook.js has just brought dist/ up to date above).
      assert.ok(fs.existsSync(path.join(ROOT, 'dist/cli/main.js')));
      const served = await serveCli({ DATA_DIR: fresh.options.dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' }, 30_000);
      try {
        const res = await fetch(`${served.url}/healthz`);
        assert.equal(res.status, 200);
        const ready = await fetch(`${served.url}/readyz`);
        assert.equal(ready.status, 200);
        // The static files are found from dist/ too (public/ and htmx from its package).
        for (const asset of ['app.css', 'htmx.min.js'])
          assert.equal((await fetch(`${served.url}/assets/${asset}`)).status, 200, asset);
        // The process runs the compiled JavaScript, with no TypeScript loader.
        const cmdline = fs.readFileSync(`/proc/${served.child.pid}/cmdline`, 'utf8').split('\0');
        assert.ok(!cmdline.some((a) => /tsx/.test(a)), cmdline.join(' '));
        const maps = fs.readFileSync(`/proc/${served.child.pid}/maps`, 'utf8');
        assert.match(maps, /better-sqlite3\/prebuilds\/linux/, 'better-sqlite3 loads its N-API prebuild');
        // Once a password is hashed, the threads that hash run below the priority of the one that serves.
        const registered = await fetch(`${served.url}/api/v1/auth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Runtime', email: 'runtime@example.test', password: 'a runtime passphrase 42' }),
        });
        assert.equal(registered.status, 201, await registered.text());
        const threads = fs.readdirSync(`/proc/${served.child.pid}/task`).map((tid) => {
          const stat = fs.readFileSync(`/proc/${served.child.pid}/task/${tid}/stat`, 'utf8');
          // The fields after the command's closing parenthesis; the nice value is the 19th field of the line.
          const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
          return { tid, name: fs.readFileSync(`/proc/${served.child.pid}/task/${tid}/comm`, 'utf8').trim(), nice };
        });
        const hashing = threads.filter((t) => t.name === 'libuv-worker');
        assert.ok(hashing.length > 0, JSON.stringify(threads));
        assert.deepEqual(new Set(hashing.map((t) => t.nice)), new Set([19]), JSON.stringify(threads));
        // The main thread's id is the process's (Node 24 names it MainThread, Node 22 node).
        assert.equal(threads.find((t) => t.tid === String(served.child.pid))?.nice, 0, JSON.stringify(threads));
      } finally {
        await served.stop();
      }
    } finally {
      await fresh.drop();
    }
  });

  test('the leadbook command (its shebang) and npm start run Node with the same flags: a small young generation, an old space collected when it grows by half', async () => {
    const bin = path.join(ROOT, 'bin/leadbook.js');
    const shebang = fs.readFileSync(bin, 'utf8').split('\n')[0]!;
    assert.match(shebang, /^#!\/usr\/bin\/env -S node /);
    const flagsOf = (command: string) => command.split(/\s+/).filter((word) => word.startsWith('--'));
    const start = (pkg as unknown as { scripts: Record<string, string> }).scripts.start!;
    assert.deepEqual(flagsOf(shebang), flagsOf(start.replace(/ serve$/, '')));
    assert.ok(flagsOf(start).includes('--max-semi-space-size=4'), start);
    assert.ok(flagsOf(start).includes('--heap-growing-percent=50'), start);
    // Run as a program, the shebang's flags reach the Node that runs it (env -S splits them).
    const pathWithNode = `${path.dirname(process.execPath)}:${process.env.PATH}`;
    const result = await run(bin, ['--version'], { cwd: ROOT, env: { ...process.env, PATH: pathWithNode } });
    assert.equal(result.stdout.trim(), pkg.version);
  });

  test("the compiled app does not load Node's bundled undici (fetch, WebSocket), which it never uses", async () => {
    // An ES import of node:http reads its WebSocket getter, which loads undici: 2.4 MB of heap at idle.
    const probe =
      "await import('./dist/app.js'); await import('./dist/server.js'); " +
      "console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))))";
    const result = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT });
    assert.deepEqual(JSON.parse(result.stdout), []);
  });

  test('a fresh build discovers every migration from its own folder (and nothing else there)', async () => {
    // Compiled into a folder of its own, inside node_modules so that its imports resolve.
    const out = path.join(ROOT, 'node_modules/.cache', `leadbook-runtime-${randomBytes(4).toString('hex')}`);
    const fresh = await freshDatabase('sqlite');
    try {
      const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
      await run(
        process.execPath,
        [tsc, '-p', 'tsconfig.build.json', '--outDir', out, '--tsBuildInfoFile', path.join(out, '.tsbuildinfo')],
        { cwd: ROOT },
      );
      fs.writeFileSync(path.join(out, 'package.json'), '{"type": "module"}\n');
      const folder = fs.readdirSync(path.join(out, 'db/migrations')).sort();
      // What the build leaves beside the migrations: the helpers' folder and source maps, which must not count.
      assert.ok(folder.includes('lib') && folder.some((f) => f.endsWith('.js.map')), folder.join(', '));
      const script = `
        const { openDatabase } = await import(${JSON.stringify(path.join(out, 'db/connection.js'))});
        const { migrateToLatest } = await import(${JSON.stringify(path.join(out, 'db/migrate.js'))});
        const database = openDatabase({ dataDir: ${JSON.stringify(fresh.options.dataDir)} });
        const result = await migrateToLatest(database.db);
        await database.close();
        console.log(JSON.stringify(result.results.map((r) => r.status + ' ' + r.migrationName)));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
      const expected = fs
        .readdirSync(path.join(ROOT, 'src/db/migrations'))
        .filter((f) => MIGRATION.test(f))
        .sort()
        .map((f) => `Success ${f.replace(/\.ts$/, '')}`);
      assert.ok(expected.length >= 5, expected.join(', '));
      assert.deepEqual(JSON.parse(stdout), expected);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
      await fresh.drop();
    }
  });
});
