// An import killed half-way (SIGKILL, as a crash or an out-of-memory kill
// would end it): each batch is one transaction, so what is left is whole
// batches with their change-log entries, never part of one; the search index
// agrees with the rows (on SQLite a batch writes its search index rows once,
// at its end, with the trigger that writes them dropped for the batch:
// src/db/bulk-load.ts); and the indexes and triggers are those the migrations
// made, so that the next write is indexed as before.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { PLANTED } from '../../src/cli/fake-data.ts';
import { openDatabase } from '../../src/db/connection.ts';
import { containsText, matchesWords } from '../../src/db/dialect.ts';
import { asRecordTables } from '../../src/db/tables.ts';
import { IMPORT_BATCH } from '../../src/records/import.ts';
import { contact } from '../../src/resources/index.ts';
import { DIALECTS, type FreshDatabase, freshDatabase, indexesAndTriggers } from '../helpers/database.ts';
import { ROOT, runCli } from '../helpers/process.ts';

/** Two whole batches and a part of one. */
const ROWS = 2 * IMPORT_BATCH + 2_000;
const BIN = path.join(ROOT, 'bin/leadbook.js');
const envOf = (fresh: FreshDatabase) => ({
  DATA_DIR: fresh.options.dataDir,
  DATABASE_URL: fresh.options.databaseUrl ?? '',
  LOG_LEVEL: 'warn',
});

async function cli(fresh: FreshDatabase, args: string[], input = '') {
  const result = await runCli(args, envOf(fresh), input);
  assert.equal(result.code, 0, `leadbook ${args.join(' ')}: ${result.stderr}`);
}

/** How many imports the database has begun (an import's row is made once its file's header is read). */
async function importsBegun(fresh: FreshDatabase): Promise<number> {
  const database = openDatabase(fresh.options);
  try {
    const row = await asRecordTables(database.db)
      .selectFrom('imports')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await database.close();
  }
}

/**
 * `leadbook import contacts FILE`, killed with SIGKILL when `when` says so (given what its progress said so far);
 * answers whether it was killed (a fast import may end first).
 */
function importKilled(
  fresh: FreshDatabase,
  file: string,
  when: (said: string) => boolean | Promise<boolean>,
  options: string[] = [],
) {
  return new Promise<boolean>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'import', ...options, 'contacts', file], {
      env: { ...process.env, ...envOf(fresh) },
      cwd: ROOT,
    });
    let said = '';
    let ended = false;
    child.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    const watch = async () => {
      while (!ended) {
        if (await when(said)) child.kill('SIGKILL');
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    watch().catch(reject);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      ended = true;
      if (signal === 'SIGKILL') resolve(true);
      else if (code === 0) resolve(false);
      else reject(new Error(`the import failed (${code}): ${said}`));
    });
  });
}

/** Once the progress says `percent` % of the file was read (it speaks after each batch). */
const read = (percent: number) => (said: string) =>
  [...said.matchAll(/\((\d+)%\)/g)].some((m) => Number(m[1]) >= percent);

/** `ms` after the import has begun: within its first batch. */
const begun = (fresh: FreshDatabase, before: number, ms: number) => {
  let since: number | undefined;
  return async () => {
    if (since === undefined && (await importsBegun(fresh)) > before) since = Date.now();
    return since !== undefined && Date.now() - since >= ms;
  };
};

/** The contacts, their created (or `action`) change-log entries, and each word's matches by the index and a scan. */
async function stateOf(fresh: FreshDatabase, words: readonly string[], action = 'created') {
  const database = openDatabase(fresh.options);
  try {
    const db = asRecordTables(database.db);
    const count = async (q: { executeTakeFirstOrThrow(): Promise<{ n: unknown }> }) =>
      Number((await q.executeTakeFirstOrThrow()).n);
    const contacts = await count(db.selectFrom('contacts').select(sql<number>`count(*)`.as('n')));
    const created = await count(
      db
        .selectFrom('change_log')
        .where('resource', '=', 'contacts')
        .where('action', '=', action)
        .select(sql<number>`count(*)`.as('n')),
    );
    const columns = contact.searchText.map((f) => f.name);
    const ids = async (where: ReturnType<typeof matchesWords>) =>
      (await db.selectFrom('contacts').select('id').where(where).orderBy('id').execute()).map((r) => String(r.id));
    const search: Record<string, { indexed: string[]; scanned: string[] }> = {};
    for (const word of words)
      search[word] = {
        indexed: await ids(matchesWords(database.db, 'contacts', 'id', columns, [word])),
        scanned: await ids(
          sql`(${sql.join(
            columns.map((c) => containsText(database.db, c, word)),
            sql` or `,
          )})`,
        ),
      };
    return { contacts, created, search };
  } finally {
    await database.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`an import killed half-way (${dialect})`, () => {
    let source: FreshDatabase;
    let target: FreshDatabase;
    let migrated: FreshDatabase;
    let updated: FreshDatabase;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-import-crash-')), 'contacts.csv');

    before(async () => {
      [source, target, migrated, updated] = await Promise.all([
        freshDatabase('sqlite'),
        freshDatabase(dialect),
        freshDatabase(dialect),
        freshDatabase(dialect),
      ]);
      await cli(source, ['seed', '--contacts', String(ROWS), '--inquiries', '0', '--seed', '7']);
      await cli(source, ['user:create', '--admin', '--email', 'owner@example.com'], 'import crash pass phrase\n');
      await cli(source, ['export', 'contacts', file]);
      // The rows name their service, source and author, which the import looks up by name.
      for (const fresh of [target, updated]) {
        await cli(fresh, ['seed', '--contacts', '0', '--inquiries', '0']);
        await cli(fresh, ['user:create', '--admin', '--email', 'owner@example.com'], 'import crash pass phrase\n');
      }
      await cli(migrated, ['migrate']);
    });

    after(async () => {
      await Promise.all([source?.drop(), target?.drop(), migrated?.drop(), updated?.drop()]);
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    });

    test('each batch is there whole or not at all, with its entries; the index agrees with the rows', async (t) => {
      const words = [PLANTED.one, PLANTED.two, 'example', '@'];
      const schema = await indexesAndTriggers(migrated);
      let killed = 0;
      const rounds = [
        { name: 'in the first batch', when: begun(target, 0, 300) },
        { name: 'after a batch or two', when: read(60) },
      ];
      for (const round of rounds) {
        const before = await stateOf(target, []);
        if (await importKilled(target, file, round.when)) killed++;
        const now = await stateOf(target, words);
        const added = now.contacts - before.contacts;
        t.diagnostic(`${dialect}, killed ${round.name}: ${added} rows were there`);
        assert.ok(added % IMPORT_BATCH === 0 || added === ROWS, `whole batches only: ${added} rows added`);
        assert.equal(now.created, now.contacts, 'a created entry for every contact, none for a row not there');
        for (const word of words) {
          const { indexed, scanned } = now.search[word]!;
          assert.deepEqual(indexed, scanned, `"${word}": the search index and a scan agree`);
        }
        assert.deepEqual(await indexesAndTriggers(target), schema, 'the indexes and triggers the migrations made');
      }
      assert.ok(killed > 0, 'at least one import was killed before it ended');
      // After the kills, a whole import: every row of the file, each found by search as a scan finds it.
      const before = await stateOf(target, []);
      assert.equal(await importKilled(target, file, () => false), false);
      const done = await stateOf(target, words);
      assert.equal(done.contacts - before.contacts, ROWS);
      assert.ok(done.search[PLANTED.one]!.indexed.length > 0, `some contacts hold "${PLANTED.one}"`);
      for (const word of words) assert.deepEqual(done.search[word]!.indexed, done.search[word]!.scanned, word);
    });

    test('an import that updates (--upsert-by email), killed half-way: whole batches; the index agrees', async (t) => {
      // The same rows with other words: on SQLite each batch of updates writes its search index rows once.
      const changed = path.join(path.dirname(file), 'changed.csv');
      const planted = new RegExp(PLANTED.one, 'i');
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
      assert.equal(lines.length, ROWS + 1, 'a header, then a line a row');
      fs.writeFileSync(changed, lines.map((l) => l.replaceAll(new RegExp(PLANTED.one, 'gi'), 'lunar')).join('\n'));
      // What each number of whole batches leaves: an entry for each of their rows that held the word (one a line).
      const wholeBatches = Array.from({ length: Math.ceil(ROWS / IMPORT_BATCH) + 1 }, (_, k) =>
        lines.slice(1, 1 + k * IMPORT_BATCH).reduce((n, l) => n + (planted.test(l) ? 1 : 0), 0),
      );
      const words = [PLANTED.one, 'lunar', PLANTED.two, 'example'];
      await cli(updated, ['import', 'contacts', file]);
      const schema = await indexesAndTriggers(migrated);
      const upsert = ['--upsert-by', 'email'];
      for (const round of [read(30), () => false]) {
        const wasKilled = await importKilled(updated, changed, round, upsert);
        const now = await stateOf(updated, words, 'updated');
        t.diagnostic(`${dialect}: ${now.created} updated entries after ${wasKilled ? 'a kill' : 'the whole import'}`);
        assert.equal(now.contacts, ROWS, 'an update adds no row');
        assert.ok(wholeBatches.includes(now.created), `whole batches only: ${now.created} of ${wholeBatches}`);
        for (const word of words) {
          const { indexed, scanned } = now.search[word]!;
          assert.deepEqual(indexed, scanned, `"${word}": the search index and a scan agree`);
        }
        assert.deepEqual(await indexesAndTriggers(updated), schema, 'the indexes and triggers the migrations made');
      }
      const done = await stateOf(updated, words, 'updated');
      assert.equal(done.search[PLANTED.one]!.indexed.length, 0, `no contact holds "${PLANTED.one}" any more`);
      assert.ok(done.search.lunar!.indexed.length > 0, 'the contacts that held it hold "lunar"');
    });
  });
}
