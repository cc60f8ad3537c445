// Backup and restore: `leadbook backup` while the app serves a stream of
// writes gives a snapshot of one moment (the state after some write, whole);
// `leadbook restore` brings a backup back into a fresh database with the same
// record counts and row checksums as the source; the restored database serves.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type DatabaseOptions, openDatabase } from '../../src/db/connection.ts';
import { asRecordTables } from '../../src/db/tables.ts';
import { DIALECTS, freshDatabase, type FreshDatabase, migratedDatabase } from '../helpers/database.ts';
import { backupDatabase, restoreDatabase } from '../../src/cli/backup.ts';
import { loadConfig } from '../../src/config.ts';
import { recordResources, resources, user } from '../../src/resources/index.ts';
import type { Field, Resource } from '../../src/schema/resource.ts';
import { inDependencyOrder, sampleInput } from '../helpers/samples.ts';
import {
  type Api,
  api,
  asListed,
  envOf,
  type Running,
  signUpAdmin,
  SOAK,
  type Warm,
  type WarmCommand,
  warmCommand,
  warmServer,
} from './helpers/served.ts';

const ROUNDS = SOAK ? 10 : 1;
const TABLES = resources.map((r) => r.table);
// Every record resource, from the declarations (the accounts: the admin the suite signs up); a new one is covered
// without edits. Each write stamps its sequence number into a plain text field of the record.
const WRITTEN = inDependencyOrder(recordResources.filter((r) => r !== user));
const SEEDED = new Map(WRITTEN.map((r, i) => [r, i === 0 ? 600 : 300]));
const stampOf = (resource: Resource): Field => {
  const plain = resource.writable.filter((f) => f.kind.textual && !f.format && !f.choices && (f.max ?? 0) >= 20);
  const field = plain.find((f) => f !== resource.title) ?? plain[0];
  if (!field) throw new Error(`${resource.name} has no plain text field to stamp writes into`);
  return field;
};
const restoredCounts = new RegExp(
  `^Restored .*: ${TABLES.map((t) => (t === user.table ? `1 ${t}` : `\\d+ ${t}`)).join(', ')}\\.`,
);
// The same key for the source and every restored copy: a backup holds the data, not DATA_DIR/app.key.
const APP_KEY = Buffer.alloc(32, 7).toString('base64');

/** Rows written straight into a new, migrated database, before the app starts. */
async function seed(options: DatabaseOptions): Promise<void> {
  const database = openDatabase(options);
  try {
    const now = new Date().toISOString();
    for (const [resource, count] of SEEDED) {
      for (let start = 0; start < count; start += 200) {
        const rows = Array.from({ length: Math.min(200, count - start) }, (_, i) => {
          // Declared sample values; references to the first record of an earlier resource (there are no users yet).
          const input = sampleInput(resource, start + i, `seed${start + i}`, (target) =>
            target === user ? undefined : 1,
          );
          // (Numbered: the stamped field may be a unique one, as a source's name is.)
          const row: Record<string, unknown> = { ...input, [stampOf(resource).name]: `seed ${start + i}` };
          for (const f of resource.fields) if (f.timestamp) row[f.name] = now;
          return Object.fromEntries(
            Object.entries(row).map(([name, value]) => {
              const kind = resource.field(name)!.kind;
              const stored = kind.toDb(value);
              return [
                name,
                database.dialect === 'postgres' && kind.instant && typeof stored === 'string'
                  ? new Date(stored)
                  : stored,
              ];
            }),
          );
        });
        await asRecordTables(database.db).insertInto(resource.table).values(rows).execute();
      }
    }
  } finally {
    await database.close();
  }
}

/** Counts and a SHA-256 over every row, every column, in id order, of the three tables. */
async function fingerprint(options: DatabaseOptions): Promise<Record<string, { count: number; sha256: string }>> {
  const database = openDatabase(options);
  try {
    const out: Record<string, { count: number; sha256: string }> = {};
    for (const table of TABLES) {
      const rows = await asRecordTables(database.db).selectFrom(table).selectAll().orderBy('id').execute();
      const hash = createHash('sha256');
      for (const row of rows) {
        hash.update(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
        hash.update('\n');
      }
      out[table] = { count: rows.length, sha256: hash.digest('hex') };
    }
    return out;
  } finally {
    await database.close();
  }
}

/** Every record of a resource, through the API. */
async function everything(client: Api, resource: string): Promise<Map<string, Record<string, unknown>>> {
  const all = new Map<string, Record<string, unknown>>();
  for (let cursor = ''; ; ) {
    const page = await client.get(`/api/v1/${resource}?per_page=100&sort=id&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(page.status, 200, page.text);
    for (const record of page.body.data) all.set(String(record.id), record);
    if (!page.body.meta.next_cursor) return all;
    cursor = page.body.meta.next_cursor;
  }
}

interface Write {
  seq: number;
  resource: string;
  id: string;
  record: Record<string, unknown>;
}

const configOf = (fresh: FreshDatabase) => loadConfig(envOf(fresh, { APP_KEY }));
const seqOf = (resource: Resource, record: Record<string, unknown>) =>
  Number(/^w(\d+)$/.exec(String(record[stampOf(resource).name]))?.[1] ?? 0);
const everyResource = async (client: Api) =>
  new Map(await Promise.all(WRITTEN.map(async (r) => [r, await everything(client, r.name)] as const)));
const bigJson = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

for (const dialect of DIALECTS) {
  describe(`backup and restore (${dialect})`, () => {
    test(`a backup taken under writes is one moment's state; restored, it matches the source and serves (${ROUNDS} round${ROUNDS > 1 ? 's' : ''})`, {
      timeout: SOAK ? 1_800_000 : 180_000,
    }, async (t) => {
      const source = await migratedDatabase(dialect);
      const copies: FreshDatabase[] = [];
      const servers: Running[] = [];
      const stats = { rounds: 0, backups: 0, restores: 0, writes: 0, writesDuringBackup: 0, failures: 0, lost: 0 };
      const warming: Promise<Warm>[] = [];
      const commands: Promise<WarmCommand>[] = [];
      const freshCopy = async () => {
        const f = await freshDatabase(dialect);
        copies.push(f);
        return f;
      };
      try {
        // Each server loads while there is other work to do.
        const warm = warmServer(envOf(source, { APP_KEY }));
        await seed(source.options);
        const server = await (await warm).start();
        servers.push(server);
        const admin = await signUpAdmin(server.url);
        const client = api(server.url, admin.token);
        const initial = await everyResource(client);
        const history: Write[] = [];
        const ids = new Map([...initial].map(([r, records]) => [r, [...records.keys()]]));
        // As a number: an integer field (service_id) takes no digit string.
        const firstOf = (target: Resource) => {
          const id = target === user ? admin.id : ids.get(target)?.[0];
          return id === undefined ? undefined : Number(id);
        };
        let seq = 0;

        for (let round = 1; round <= ROUNDS; round++) {
          const [copyStill, copyDuring] = [await freshCopy(), await freshCopy()];
          const restoredWarm = warmServer(envOf(copyDuring, { APP_KEY }));
          warming.push(restoredWarm);
          // The command as an operator runs it (bin/leadbook.js), loaded ahead so that it runs while the writer goes on.
          const during = path.join(source.options.dataDir, `during-${round}.backup`);
          const backupCommand = warmCommand(['backup', during], envOf(source, { APP_KEY }), 'bin');
          commands.push(backupCommand);
          // One writer, so that the writes commit in the order they are sent.
          let writing = true;
          const writer = (async () => {
            while (writing) {
              const s = ++seq;
              const resource = WRITTEN[s % WRITTEN.length]!;
              const list = ids.get(resource)!;
              const create = s % 3 === 0;
              const stamp = { [stampOf(resource).name]: `w${s}` };
              const answer = create
                ? await client.request('POST', `/api/v1/${resource.name}`, {
                    json: { ...sampleInput(resource, s, `write${s}`, firstOf), ...stamp },
                  })
                : await client.request('PATCH', `/api/v1/${resource.name}/${list[(s * 7919) % list.length]}`, {
                    json: stamp,
                  });
              assert.equal(answer.status, create ? 201 : 200, answer.text);
              const id = String(answer.body.data.id);
              if (create) list.push(id);
              history.push({ seq: s, resource: resource.name, id, record: asListed(answer.body.data) });
              // A write may change the records it names too (a note is an inquiry's first response): their state
              // after this write is read back.
              for (const field of resource.fields) {
                const named = answer.body.data[field.name];
                if (!field.target || named === null || named === undefined || !WRITTEN.includes(field.target)) continue;
                const read = await client.get(`/api/v1/${field.target.name}/${named}`);
                if (read.status === 200)
                  history.push({
                    seq: s,
                    resource: field.target.name,
                    id: String(named),
                    record: asListed(read.body.data),
                  });
              }
            }
          })();
          // (A refused write ends the writer: the wait ends with it instead of waiting for ever.)
          const wait = () => Promise.race([new Promise((r) => setTimeout(r, 10)), writer]);
          while (history.length < 20 * round) await wait();

          const loadedCommand = await backupCommand;
          const before = seq;
          const backedUp = await loadedCommand.run();
          const afterBackup = seq;
          assert.equal(backedUp.code, 0, backedUp.stderr);
          assert.match(backedUp.stdout, /^Backed up /);
          stats.backups++;
          while (seq < afterBackup + 20) await wait();
          writing = false;
          await writer;

          // A second backup once the writes have stopped: restored, it is the source, row for row.
          const still = path.join(source.options.dataDir, `still-${round}.backup`);
          // (The commands' own functions, in this process: the command line was run above.)
          assert.match(await backupDatabase(configOf(source), still), /^Backed up /);
          stats.backups++;
          for (const [file, copy] of [
            [still, copyStill],
            [during, copyDuring],
          ] as const) {
            assert.match(await restoreDatabase(configOf(copy), file), restoredCounts);
          }
          stats.restores += 2;
          assert.deepEqual(
            await fingerprint(copyStill.options),
            await fingerprint(source.options),
            'the restored backup has the same counts and row checksums as the source',
          );

          // The backup taken during the writes, restored and served: exactly the state after one write m.
          const restoredServer = await (await restoredWarm).start();
          servers.push(restoredServer);
          const readBack = api(restoredServer.url, admin.token);
          const snapshot = await everyResource(readBack);
          const m = Math.max(
            0,
            ...[...snapshot].flatMap(([r, records]) => [...records.values()].map((record) => seqOf(r, record))),
          );
          assert.ok(
            m >= before - 1 && m <= afterBackup,
            `the snapshot is of a moment while the backup ran: after write ${m}, the backup ran from ${before} to ${afterBackup}`,
          );
          stats.writesDuringBackup += afterBackup - before;
          for (const resource of WRITTEN) {
            const expected = new Map(initial.get(resource));
            for (const w of history) if (w.resource === resource.name && w.seq <= m) expected.set(w.id, w.record);
            const got = snapshot.get(resource)!;
            const wrong = [...new Set([...expected.keys(), ...got.keys()])].filter(
              (id) => bigJson(got.get(id)) !== bigJson(expected.get(id)),
            );
            stats.lost += wrong.length;
            assert.deepEqual(
              wrong.slice(0, 10),
              [],
              `${resource.name} in the backup are exactly the state after write ${m} (${wrong.length} differ)`,
            );
          }
          await restoredServer.kill('SIGTERM');
          stats.rounds++;
        }
        stats.writes = seq;

        // Refusals: a file that is not a backup, and (SQLite) a restore under a running app. Nothing changes.
        const print = await fingerprint(source.options);
        const junk = path.join(source.options.dataDir, 'notes.txt');
        fs.writeFileSync(junk, 'this is not a backup\n');
        await assert.rejects(restoreDatabase(configOf(source), junk), /notes\.txt is not a Leadbook backup/);
        const wrongKind = path.join(source.options.dataDir, dialect === 'sqlite' ? 'pg.backup' : 'sqlite.backup');
        fs.writeFileSync(wrongKind, dialect === 'sqlite' ? 'PGDMP\x01\x0e\x00' : 'SQLite format 3\0');
        await assert.rejects(
          restoreDatabase(configOf(source), wrongKind),
          /is (a pg_dump archive|a backup of an SQLite database)/,
        );
        const otherSqlite = path.join(source.options.dataDir, 'other.sqlite');
        if (dialect === 'sqlite') {
          const other = new SQLite(otherSqlite);
          other.exec('create table unrelated_things (x)');
          other.close();
          await assert.rejects(restoreDatabase(configOf(source), otherSqlite), {
            message: new RegExp(`is not a Leadbook backup: it has no leadbook_migrations, ${TABLES.join(', ')} tables`),
          });
          await assert.rejects(
            restoreDatabase(configOf(source), path.join(source.options.dataDir, 'still-1.backup')),
            /is in use: stop every `leadbook serve`/,
            'a restore under a running app is refused',
          );
        }
        assert.deepEqual(await fingerprint(source.options), print, 'a refused restore changes nothing');
        const stillServes = await client.get('/api/v1/contacts?per_page=1');
        assert.equal(stillServes.status, 200, 'the app serves on after a refused restore');
      } catch (error) {
        stats.failures++;
        throw error;
      } finally {
        t.diagnostic(
          `reliability backup ${dialect}: rounds=${stats.rounds} backups=${stats.backups} restores=${stats.restores} writes=${stats.writes} writes_during_backups=${stats.writesDuringBackup} failures=${stats.failures} lost_writes=${stats.lost}`,
        );
        for (const s of servers) await s.kill('SIGKILL');
        for (const w of [...warming, ...commands]) await (await w.catch(() => null))?.discard();
        for (const f of [source, ...copies]) await f.drop();
      }
    });
  });
}
