// `leadbook seed --pipeline`, run as a user runs it, on each dialect: every
// inquiry is linked to a seeded contact, the inquiries are spread over the
// active stages, and those assigned go to 8 of the agents, about a tenth of
// the inquiries each (what the pipeline bench, bench/pipeline.ts, needs);
// every other field is the one the same seed gives without it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AGENTS, PIPELINE_ASSIGNEES } from '../src/cli/fake-data.ts';
import { openDatabase } from '../src/db/connection.ts';
import { asRecordTables } from '../src/db/tables.ts';
import { DIALECTS, type FreshDatabase, freshDatabase } from './helpers/database.ts';
import { runCli } from './helpers/process.ts';

const CONTACTS = 500;
const INQUIRIES = 2000;
const SEED = 7;
/** The fields the pipeline places; the rest must be as without it. */
const PLACED = new Set(['contact_id', 'stage_id', 'assigned_to']);

type Row = Record<string, unknown>;

async function seeded(fresh: FreshDatabase, pipeline: boolean): Promise<void> {
  const args = ['seed', '--contacts', String(CONTACTS), '--inquiries', String(INQUIRIES), '--seed', String(SEED)];
  const result = await runCli(pipeline ? [...args, '--pipeline'] : args, {
    DATA_DIR: fresh.options.dataDir,
    DATABASE_URL: fresh.options.databaseUrl ?? '',
    LOG_LEVEL: 'warn',
  });
  assert.equal(result.code, 0, `seed failed: ${result.stderr}`);
}

async function rowsOf(fresh: FreshDatabase, table: string): Promise<Row[]> {
  const database = openDatabase(fresh.options);
  try {
    return (await asRecordTables(database.db).selectFrom(table).selectAll().orderBy('id').execute()) as Row[];
  } finally {
    await database.close();
  }
}

const plain = (value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

for (const dialect of DIALECTS) {
  describe(`leadbook seed --pipeline on ${dialect}`, () => {
    let withPipeline: FreshDatabase;
    let without: FreshDatabase;
    let inquiries: Row[];
    let stages: Row[];
    let users: Row[];

    before(async () => {
      withPipeline = await freshDatabase(dialect);
      without = await freshDatabase(dialect);
      await Promise.all([seeded(withPipeline, true), seeded(without, false)]);
      inquiries = await rowsOf(withPipeline, 'inquiries');
      stages = await rowsOf(withPipeline, 'stages');
      users = await rowsOf(withPipeline, 'users');
    });

    after(async () => {
      await withPipeline?.drop();
      await without?.drop();
    });

    test('every inquiry is linked to one of the contacts, and most contacts have one', async () => {
      const contactIds = new Set((await rowsOf(withPipeline, 'contacts')).map((c) => String(c.id)));
      assert.equal(contactIds.size, CONTACTS);
      assert.equal(inquiries.length, INQUIRIES);
      const unlinked = inquiries.filter((i) => !contactIds.has(String(i.contact_id)));
      assert.deepEqual(unlinked.slice(0, 3), [], `${unlinked.length} inquiries name no seeded contact`);
      const linked = new Set(inquiries.map((i) => String(i.contact_id)));
      assert.ok(linked.size > CONTACTS * 0.9, `${linked.size} of ${CONTACTS} contacts have an inquiry`);
    });

    test('the inquiries are spread over the active stages, open and closed', () => {
      assert.equal(stages.length, 5, 'the default pipeline');
      for (const s of stages) {
        const n = inquiries.filter((i) => String(i.stage_id) === String(s.id)).length;
        assert.ok(n > INQUIRIES * 0.15 && n < INQUIRIES * 0.25, `${s.name}: ${n} of ${INQUIRIES}`);
      }
    });

    test('assigned inquiries go to the first 8 agents, about a tenth of all inquiries each', () => {
      const assignees = AGENTS.slice(0, PIPELINE_ASSIGNEES).map(
        (a) => users.find((u) => u.email === a.email)!.id as unknown,
      );
      const assigned = inquiries.filter((i) => i.assigned_to !== null);
      assert.ok(assigned.length > INQUIRIES * 0.7 && assigned.length < INQUIRIES * 0.8, `${assigned.length} assigned`);
      for (const id of assignees) {
        const n = assigned.filter((i) => String(i.assigned_to) === String(id)).length;
        assert.ok(n > INQUIRIES * 0.07 && n < INQUIRIES * 0.12, `agent ${String(id)}: ${n} of ${INQUIRIES}`);
      }
      const others = assigned.filter((i) => !assignees.some((id) => String(id) === String(i.assigned_to)));
      assert.deepEqual(others.slice(0, 3), [], 'no inquiry goes to another agent');
    });

    test('every other field is what the same seed gives without a pipeline', async () => {
      const plainRows = await rowsOf(without, 'inquiries');
      assert.equal(plainRows.length, INQUIRIES);
      const first = (await rowsOf(without, 'stages')).find((s) => s.kind === 'open' && Number(s.position) === 1)!;
      assert.ok(
        plainRows.every((i) => i.contact_id === null && String(i.stage_id) === String(first.id)),
        'without it: no contact, the first open stage',
      );
      for (const [i, row] of inquiries.entries()) {
        const other = plainRows[i]!;
        for (const [field, value] of Object.entries(row)) {
          if (PLACED.has(field)) continue;
          assert.deepEqual(plain(value), plain(other[field]), `inquiry ${String(row.id)}.${field}`);
        }
        assert.equal(row.assigned_to === null, other.assigned_to === null, `inquiry ${String(row.id)} assigned or not`);
      }
    });
  });
}
