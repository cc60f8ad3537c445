#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=50
// The command-line entry: runs the compiled app (dist/, built by tsc from src/).
// In a checkout, dist/ is (re)built first when it is missing or older than a
// source file, so that a fresh clone needs no build step of its own:
// `npm install && npm start` is the whole set-up.
// The flags (here and in package.json's start), each at no cost in requests per
// second that the bench could tell from its noise (bench/README.md):
// --max-semi-space-size=4: on a machine with much memory V8 lets its young
// generation grow to 64 MB, and keeps it. 4 MB semi-spaces took 50 MB off an
// idle server.
// --heap-growing-percent=50: a full collection runs once the old space has
// grown by half of what the last one left live, not by up to three times that.
// Under load on MariaDB and PostgreSQL the app's RSS rose to 260-300 MB, and
// stays at 160-170 MB with it.
// Started another way, give node the same flags (NODE_OPTIONS takes the first
// but not the second).
import { ensureBuild } from '../scripts/ensure-build.js';

// better-sqlite3 13 crashes the process on Node 20 (a segfault, no message): say so instead.
if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(
    `leadbook: needs Node.js 22 or 24, and this is ${process.version}. Run it through npm (npm start, npx leadbook), which uses the Node pinned in package.json (node_modules/.bin/node), or run that one: npx node bin/leadbook.js`,
  );
  process.exit(1);
}

try {
  ensureBuild();
} catch (error) {
  console.error(`leadbook: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
await import('../dist/cli/main.js');
