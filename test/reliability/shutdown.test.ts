// Graceful shutdown: SIGTERM while CSV exports and big list pages are in
// flight. Every one of them completes, new connections are refused, the
// process exits 0 and leaves the database closed cleanly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { openDatabase } from '../../src/db/connection.ts';
import { contact } from '../../src/resources/index.ts';
import { DIALECTS, migratedDatabase } from '../helpers/database.ts';
import { api, envOf, type Running, signUpAdmin, sleep, SOAK, type Warm, warmServer, within } from './helpers/served.ts';

const ROWS = 12_000;
const EXPORTS = 4;
const LISTS = 6;
const ROUNDS = SOAK ? 5 : 1;

/** The fields the server works out from others (the match and sort keys): a row written straight in needs them. */
const DERIVED = contact.fields.filter((f) => f.derive);

/** Rows written straight into the (migrated) database before the server starts: ~600 bytes of CSV each. */
async function seed(options: Parameters<typeof openDatabase>[0]): Promise<void> {
  const database = openDatabase(options);
  const withKeys = <T extends Record<string, unknown>>(row: T) => ({
    ...row,
    ...Object.fromEntries(DERIVED.map((f) => [f.name, f.derive!.value(row, database)])),
  });
  try {
    const now = new Date().toISOString();
    const stamp = database.dialect === 'postgres' ? new Date(now) : now;
    await database.db.transaction().execute(async (trx) => {
      for (let start = 0; start < ROWS; start += 500) {
        const rows = Array.from({ length: 500 }, (_, i) => {
          const n = start + i;
          return withKeys({
            name: `Seeded ${n}`,
            email: `seeded${n}@example.com`,
            city: `City ${n % 97}`,
            country: 'NL',
            detail: `${n} ${'lorem ipsum dolor sit amet '.repeat(18)}`.slice(0, 500),
            budget: `${n} EUR`,
            created_at: stamp,
            updated_at: stamp,
          });
        });
        await trx.insertInto('contacts').values(rows).execute();
      }
    });
  } finally {
    await database.close();
  }
}

/** Does a new TCP connection to the port get refused? */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

for (const dialect of DIALECTS) {
  describe(`graceful shutdown (${dialect})`, () => {
    test(`SIGTERM under load: in-flight requests complete, new ones are refused, exit 0, database closed (${ROUNDS} round${ROUNDS > 1 ? 's' : ''})`, {
      timeout: SOAK ? 900_000 : 120_000,
    }, async (t) => {
      const fresh = await migratedDatabase(dialect);
      const stats = { rounds: 0, inFlight: 0, failures: 0 };
      let next: Promise<Warm> | undefined;
      try {
        // info logs say when each request has arrived. The server loads while the rows are written.
        const env = envOf(fresh, { LOG_LEVEL: 'info' });
        next = warmServer(env);
        await seed(fresh.options);
        let token: string | undefined;
        for (let round = 1; round <= ROUNDS; round++) {
          const server: Running = await (await next).start();
          if (round < ROUNDS) next = warmServer(env);
          try {
            token ??= (await signUpAdmin(server.url)).token;
            const client = api(server.url, token);
            // Exports: answered headers first, then a stream of ~7 MB the client does not read yet.
            const exports = await Promise.all(
              Array.from({ length: EXPORTS }, async (_, i) => {
                const res = await fetch(
                  `${server.url}/api/v1/contacts/export?format=csv&sort=${i % 2 ? '-' : ''}name`,
                  {
                    headers: { authorization: `Bearer ${token}` },
                    signal: AbortSignal.timeout(90_000),
                  },
                );
                assert.equal(res.status, 200, `export ${i} started`);
                return res;
              }),
            );
            // Big list pages, each with a search and a sort to work through; sent, and seen arriving, before the signal.
            const pages = Array.from(
              { length: LISTS },
              (_, i) => `/api/v1/contacts?per_page=100&page=${i + 2}&search=seeded%20lorem&sort=-city,name`,
            );
            const lists = pages.map((p) => client.request('GET', p, { timeoutMs: 90_000 }));
            const deadline = Date.now() + 20_000;
            while (!pages.every((p) => server.output().includes(`"url":"${p}"`)) && Date.now() < deadline)
              await sleep(5);
            assert.ok(
              pages.every((p) => server.output().includes(`"url":"${p}"`)),
              'every list request reached the server before SIGTERM',
            );

            server.child.kill('SIGTERM');
            let refusedAt: number | undefined;
            const signalled = Date.now();
            while (Date.now() - signalled < 5000) {
              if (await refused(server.port)) {
                refusedAt = Date.now() - signalled;
                break;
              }
              await sleep(20);
            }
            assert.ok(refusedAt !== undefined, 'new connections are refused within 5 s of SIGTERM');
            assert.equal(server.child.exitCode, null, 'the process waits for the exports still being read');

            const bodies = await Promise.all(exports.map((res) => res.text()));
            for (const [i, body] of bodies.entries()) {
              const lines = body.split('\r\n').filter(Boolean);
              assert.equal(lines.length, ROWS + 1, `export ${i} is complete: a header and ${ROWS} rows`);
              assert.match(lines.at(-1)!, /^\d+,Seeded \d+,/, `export ${i} ends with a row`);
              assert.equal(
                lines.at(-1)!.split(',').length,
                lines[0]!.split(',').length,
                `export ${i} ends with a whole row`,
              );
            }
            for (const [i, answer] of (await Promise.all(lists)).entries()) {
              assert.equal(answer.status, 200, `list ${i}: ${answer.text.slice(0, 200)}`);
              assert.equal(answer.body.data.length, 100, `list ${i} is a whole page`);
            }
            stats.inFlight += EXPORTS + LISTS;
            const exit = await within(server.exited, 30_000, null);
            assert.deepEqual(
              exit,
              { code: 0, signal: null },
              `the process exits 0 on its own:\n${server.output().slice(-2000)}`,
            );
            assert.ok(await refused(server.port), 'nothing listens after the exit');
            // Logged after the database closed without an error (a failed close exits 1).
            assert.match(server.output(), /"msg":"shut down"/, 'the process says it shut down');
          } finally {
            await server.kill('SIGKILL');
          }

          if (dialect === 'sqlite') {
            const file = path.join(fresh.options.dataDir, 'leadbook.sqlite');
            assert.ok(
              !fs.existsSync(`${file}-wal`) || fs.statSync(`${file}-wal`).size === 0,
              'no write-ahead log left behind: the last connection checkpointed and closed',
            );
            const check = new SQLite(file, { readonly: true });
            try {
              assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
              assert.equal((check.prepare('select count(*) as n from contacts').get() as { n: number }).n, ROWS);
            } finally {
              check.close();
            }
          } else if (dialect === 'mysql') {
            const name = new URL(fresh.options.databaseUrl!).pathname.slice(1);
            const admin = await mysql.createConnection(fresh.options.databaseUrl!);
            try {
              let others = -1;
              for (let i = 0; i < 50 && others !== 0; i++) {
                const [rows] = await admin.query<mysql.RowDataPacket[]>(
                  'select count(*) as n from information_schema.processlist where db = ? and id <> connection_id()',
                  [name],
                );
                others = Number(rows[0]!.n);
                if (others) await sleep(50);
              }
              assert.equal(others, 0, "the app's connections are gone from the server's process list");
              const [counted] = await admin.query<mysql.RowDataPacket[]>('select count(*) as n from contacts');
              assert.equal(Number(counted[0]!.n), ROWS);
            } finally {
              await admin.end();
            }
          } else {
            const name = new URL(fresh.options.databaseUrl!).pathname.slice(1);
            const admin = new pg.Client({ connectionString: fresh.options.databaseUrl });
            await admin.connect();
            try {
              let others = -1;
              for (let i = 0; i < 50 && others !== 0; i++) {
                const { rows } = await admin.query(
                  'select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
                  [name],
                );
                others = rows[0].n;
                if (others) await sleep(50);
              }
              assert.equal(others, 0, "the app's connections are gone from pg_stat_activity");
            } finally {
              await admin.end();
            }
          }
          stats.rounds++;
        }
      } catch (error) {
        stats.failures++;
        throw error;
      } finally {
        await (await next?.catch(() => null))?.discard();
        t.diagnostic(
          `reliability shutdown ${dialect}: rounds=${stats.rounds} in_flight_requests=${stats.inFlight} failures=${stats.failures} lost_writes=0`,
        );
        await fresh.drop();
      }
    });
  });
}
