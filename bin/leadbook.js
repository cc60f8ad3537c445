#!/usr/bin/env node
// The command-line entry: runs the compiled app (dist/, built by tsc from src/).
// In a checkout, dist/ is (re)built first when it is missing or older than a
// source file, so that a fresh clone needs no build step of its own:
// `npm install && npm start` is the whole set-up.
import { ensureBuild } from '../scripts/ensure-build.js';

try {
  ensureBuild();
} catch (error) {
  console.error(`leadbook: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
await import('../dist/cli/main.js');
