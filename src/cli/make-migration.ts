// leadbook make:migration NAME: the steps from the last snapshot to the
// declarations, written as a new frozen migration, with the new snapshot.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compactJson, diffSnapshots, migrationSource, type Snapshot, snapshotOf } from '../db/schema-snapshot.ts';
import { resources } from '../resources/index.ts';

/** The source folder of the migrations, also when this runs compiled (from dist/). */
function sourceDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the project folder (package.json)');
    dir = up;
  }
  return path.join(dir, 'src', 'db', 'migrations');
}

export const SNAPSHOT_FILE = 'snapshot.json';

export function readSnapshot(dir = sourceDir()): Snapshot {
  return JSON.parse(fs.readFileSync(path.join(dir, SNAPSHOT_FILE), 'utf8')) as Snapshot;
}

/** `2026-11-23T0002`: today's date and the next free number of the day. */
function nextPrefix(dir: string, now: Date): string {
  const day = now.toISOString().slice(0, 10);
  const taken = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(`${day}T`))
    .map((f) => Number(f.slice(11, 15)));
  return `${day}T${String(Math.max(0, ...taken) + 1).padStart(4, '0')}`;
}

export async function makeMigrationCommand(
  name: string,
  opts: { rename: string[]; allowDrop?: boolean },
): Promise<void> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name))
    throw new Error('the name is lower-case words joined by hyphens, e.g. add-website');
  const renames = Object.fromEntries(
    opts.rename.map((r) => {
      const [key, to] = r.split('=');
      if (!key || !to) throw new Error(`--rename ${r}: write it as table.old=new`);
      return [key, to];
    }),
  );
  const dir = sourceDir();
  const next = snapshotOf(resources);
  const steps = diffSnapshots(readSnapshot(dir), next, { renames, allowDrop: opts.allowDrop });
  if (steps.length === 0) {
    console.log('Nothing to migrate: the declarations match the last snapshot.');
    return;
  }
  const file = path.join(dir, `${nextPrefix(dir, new Date())}-${name}.ts`);
  const args = [name, ...opts.rename.map((r) => `--rename ${r}`), ...(opts.allowDrop ? ['--allow-drop'] : [])];
  fs.writeFileSync(file, migrationSource(`leadbook make:migration ${args.join(' ')}`, steps));
  fs.writeFileSync(path.join(dir, SNAPSHOT_FILE), `${compactJson(next)}\n`);
  console.log(
    `Wrote ${path.relative(process.cwd(), file)} (${steps.length} steps: ` +
      `${[...new Set(steps.map((s) => s.op))].join(', ')}) and the new snapshot.`,
  );
}
