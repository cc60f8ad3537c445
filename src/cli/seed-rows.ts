// leadbook seed's rows, made in a worker thread while the main thread writes
// the batch before: a batch is made when the main thread asks for it, so the
// worker is one batch ahead and never more. The rows are what the server would
// store for them (seed.ts says what it adds), the same for the same seed: one
// generator per table makes them in order.
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { contact, inquiry } from '../resources/index.ts';
import type { KeyOptions } from '../schema/keys.ts';
import { ContactFaker, type FakeLookups, type FakePipeline, type FakeRow, InquiryFaker } from './fake-data.ts';

/** The resources seeded, by their table. */
export const SEEDED = { contacts: contact, inquiries: inquiry } as const;

export interface RowsWanted {
  table: keyof typeof SEEDED;
  seed: number;
  agentIds: number[];
  lookups: FakeLookups;
  pipeline?: FakePipeline;
  /** Values every row gets (an inquiry's first stage). */
  given?: FakeRow;
  /** What the derived fields depend on besides the row (where phone numbers without a country code are). */
  keys: KeyOptions;
}

/** The next `size` rows of a table, each with its derived fields worked out and the given values set. */
function rowMaker(wanted: RowsWanted): (size: number) => FakeRow[] {
  const { seed, agentIds, lookups } = wanted;
  const faker =
    wanted.table === 'contacts'
      ? new ContactFaker(seed, agentIds, lookups)
      : new InquiryFaker(seed, agentIds, lookups, wanted.pipeline);
  const derived = SEEDED[wanted.table].fields.filter((f) => f.derive);
  const given = Object.entries(wanted.given ?? {});
  return (size) => {
    const rows: FakeRow[] = new Array(size);
    for (let i = 0; i < size; i++) {
      const row = faker.next();
      for (const f of derived) row[f.name] = f.derive!.value(row, wanted.keys);
      for (const [name, value] of given) row[name] = value;
      rows[i] = row;
    }
    return rows;
  };
}

/** This module in a worker thread, making `wanted`'s rows: `next(size)` answers the next batch. */
export function rowsInWorker(wanted: RowsWanted): { next(size: number): Promise<FakeRow[]>; close(): Promise<void> } {
  // This file as it runs: compiled (dist/…/seed-rows.js) or from source through tsx (the worker inherits its --import).
  const self = fileURLToPath(import.meta.url);
  const worker = new Worker(self, { workerData: { seedRows: wanted } });
  let failed: Error | undefined;
  worker.on('error', (error) => {
    failed = error;
  });
  return {
    next: async (size) => {
      if (failed) throw failed;
      worker.postMessage(size);
      // Rejects if the worker fails meanwhile.
      const [rows] = (await once(worker, 'message')) as [FakeRow[]];
      return rows;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

if (parentPort && workerData?.seedRows) {
  const make = rowMaker(workerData.seedRows as RowsWanted);
  const port = parentPort;
  port.on('message', (size: number) => port.postMessage(make(size)));
}
