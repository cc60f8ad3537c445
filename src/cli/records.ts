// leadbook import | export: the CSV import and export of the API, for files
// on this machine, streamed, with progress on standard error. The work is done
// as an admin (the first one, or --as EMAIL), who becomes the creator of
// imported records.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import qs from 'qs';
import { type Database, forBulkLoad } from '../db/connection.ts';
import { exportCsv } from '../records/csv.ts';
import { importCsv } from '../records/import.ts';
import { rollbackImport } from '../records/imports.ts';
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
  map?: Record<string, string | null>;
  upsertBy?: string;
  dryRun?: boolean;
}

export async function importCommand(resourceName: string, file: string, opts: ImportCommandOptions): Promise<void> {
  const resource = resourceNamed(resourceName);
  const size = fs.statSync(file).size;
  await withDatabase(async (database) => {
    const ctx = await adminContext(database, opts.as);
    await forBulkLoad(database);
    const MIB = 1024 * 1024;
    const verb = opts.dryRun ? 'checking' : 'importing';
    const bar = progress(`${verb} ${resource.name}`, Math.ceil(size / MIB), 'MiB');
    const started = performance.now();
    const report = await importCsv(ctx, resource, fs.createReadStream(file), {
      maxBytes: Number.POSITIVE_INFINITY,
      size,
      mapping: opts.map,
      upsertBy: opts.upsertBy,
      dryRun: opts.dryRun,
      filename: file.split(/[\\/]/).at(-1),
      onProgress: ({ bytes }) => bar.tick(Math.round(bytes / MIB)),
    });
    bar.stop();
    const seconds = (performance.now() - started) / 1000;
    const failures = report.failed.length + (report.failed_truncated ?? 0);
    const rows = report.created + report.updated + report.unchanged;
    const separator = report.delimiter === '\t' ? 'tab' : report.delimiter;
    console.log(`Read as ${report.encoding}, separated by ${separator}.`);
    const left = report.columns.filter((c) => !c.field).map((c) => c.header);
    if (left.length) console.log(`Columns left out (they fill no field; map them with --map): ${left.join(', ')}`);
    console.log(
      `${opts.dryRun ? 'Would create' : 'Created'} ${report.created}, ${opts.dryRun ? 'would update' : 'updated'} ` +
        `${report.updated}, ${report.unchanged} unchanged ${resource.name} in ${seconds.toFixed(1)} s ` +
        `(${Math.round(rows / seconds)} rows/s); ${failures} rows ${opts.dryRun ? 'would fail' : 'failed'}.`,
    );
    if (report.import_id !== undefined)
      console.log(`Import ${report.import_id}: undo it with leadbook import:rollback ${report.import_id}`);
    for (const failure of report.failed.slice(0, 20)) {
      const errors = Object.entries(failure.errors)
        .map(([field, messages]) => `${field} ${messages.join('; ')}`)
        .join(', ');
      console.log(`  row ${failure.row} (line ${failure.line}): ${errors}`);
    }
    if (failures > 20)
      console.log(`  … ${failures - 20} more${opts.report ? '' : ' (write them all with --report FILE)'}`);
    if (opts.report)
      fs.writeFileSync(
        opts.report,
        JSON.stringify(report, (_k, v) => (typeof v === 'bigint' ? String(v) : v), 2),
      );
    if (failures) process.exitCode = 2;
  });
}

export async function rollbackCommand(id: string, opts: { as?: string }): Promise<void> {
  await withDatabase(async (database) => {
    const ctx = await adminContext(database, opts.as);
    const report = await rollbackImport(ctx, id);
    console.log(`Rolled back import ${id}: ${report.removed} removed, ${report.restored} put back as they were.`);
    if (report.skipped.length) {
      console.log(`${report.skipped.length} left as they are:`);
      for (const s of report.skipped.slice(0, 50)) console.log(`  ${s.resource} ${s.id}: ${s.reason}`);
      if (report.skipped.length > 50) console.log(`  … ${report.skipped.length - 50} more`);
    }
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
