// The test runner's global setup (npm test: --test-global-setup): one migrated
// database per dialect for the whole run, which migratedDatabase copies for each
// app a test starts, and which is dropped once every test file has run. A test
// file run without it migrates each of its databases itself.
import type { Dialect } from '../../src/db/dialect.ts';
import { DIALECTS, type FreshDatabase, migratedDatabase, templateOf } from './database.ts';

let templates: FreshDatabase[] = [];

export async function globalSetup(): Promise<void> {
  const made = await Promise.all(DIALECTS.map(async (d) => [d, await migratedDatabase(d)] as const));
  templates = made.map(([, fresh]) => fresh);
  const where: Partial<Record<Dialect, string>> = Object.fromEntries(made.map(([d, fresh]) => [d, templateOf(fresh)]));
  // Read by test/helpers/database.ts in each test file's process, which the runner starts after this.
  process.env.LEADBOOK_TEST_TEMPLATES = JSON.stringify(where);
}

export async function globalTeardown(): Promise<void> {
  await Promise.all(templates.map((t) => t.drop()));
}
