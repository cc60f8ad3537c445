// leadbook import | export: the CSV import and export of the API, for files
// on this machine, streamed, with progress on standard error. The work is done
// as an admin (the first one, or --as EMAIL), who becomes the creator of
// imported records.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import qs from 'qs';
import type { Database } from '../db/connection.ts';
import { exportCsv, importCsv } from '../records/csv.ts';
import { type Context, listRecords } from '../records/operations.ts';
import { recordResources } from '../resources/index.ts';
import type { Resource } from '../schema/resource.ts';
import { withDatabase } from './database.ts';
import { progress } from './progress.ts';

function resourceNamed(name: string): Resource {
  const resource = recordResources.find((r) => r.name === name);
  if (!resource)
    throw new Error(`${name} is not a resource; use one of ${recordResources.map((r) => r.name).join(', ')}`);
  return resource;
}

async function adminContext(database: Database, email?: string): Promise<Context> {
  let query = database.db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('role', '=', 'admin')
    .orderBy('id')
    .limit(1);
  if (email) query = query.where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()));
  const admin = await query.executeTakeFirst();
  if (!admin)
    throw new Error(
      email
        ? `no admin has the email ${email}`
        : 'there is no admin yet: create one with leadbook user:create --admin --email …',
    );
  return { database, actor: { id: BigInt(admin.id as string | number | bigint), role: 'admin' }, via: 'cli' };
}

export interface ImportCommandOptions {
  as?: string;
  report?: string;
}

export async function importCommand(resourceName: string, file: string, opts: ImportCommandOptions): Promise<void> {
  const resource = resourceNamed(resourceName);
  const size = fs.statSync(file).size;
  await withDatabase(async (database) => {
    const ctx = await adminContext(database, opts.as);
    const MIB = 1024 * 1024;
    const bar = progress(`importing ${resource.name}`, Math.ceil(size / MIB), 'MiB');
    const started = performance.now();
    const report = await importCsv(ctx, resource, fs.createReadStream(file), {
      maxBytes: Number.POSITIVE_INFINITY,
      onProgress: ({ bytes }) => bar.tick(Math.round(bytes / MIB)),
    });
    bar.stop();
    const seconds = (performance.now() - started) / 1000;
    const failures = report.failed.length + (report.failed_truncated ?? 0);
    console.log(
      `Imported ${report.created} ${resource.name} in ${seconds.toFixed(1)} s ` +
        `(${Math.round(report.created / seconds)} rows/s); ${failures} rows failed.`,
    );
    for (const failure of report.failed.slice(0, 20)) {
      const errors = Object.entries(failure.errors)
        .map(([field, messages]) => `${field} ${messages.join('; ')}`)
        .join(', ');
      console.log(`  row ${failure.row} (line ${failure.line}): ${errors}`);
    }
    if (failures > 20)
      console.log(`  … ${failures - 20} more${opts.report ? '' : ' (write them all with --report FILE)'}`);
    if (opts.report) fs.writeFileSync(opts.report, JSON.stringify(report, null, 2));
    if (failures) process.exitCode = 2;
  });
}

export interface ExportCommandOptions {
  as?: string;
  query?: string;
  bom?: boolean;
}

export async function exportCommand(
  resourceName: string,
  file: string | undefined,
  opts: ExportCommandOptions,
): Promise<void> {
  const resource = resourceNamed(resourceName);
  await withDatabase(async (database) => {
    const ctx = await adminContext(database, opts.as);
    const query = qs.parse(opts.query ?? '', { depth: 2 });
    const { meta } = await listRecords(ctx, resource, { ...query, per_page: '1' });
    const bar = file ? progress(`exporting ${resource.name}`, meta.total ?? 0, 'rows') : undefined;
    const started = performance.now();
    let rows = 0;
    const csv = await exportCsv(ctx, resource, query, {
      bom: opts.bom,
      onProgress: (n) => {
        rows = n;
        bar?.tick(n);
      },
    });
    await pipeline(csv, file ? fs.createWriteStream(file) : process.stdout);
    bar?.stop();
    if (file)
      console.log(
        `Exported ${rows} ${resource.name} to ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
      );
  });
}
