#!/usr/bin/env node
// Compiles src/ to dist/ (tsconfig.build.json) when dist/ is missing or older
// than a source file, so that `npm start` and `npx leadbook` on a fresh clone
// or after a `git pull` run the code that is checked out. Cheap when dist/ is
// current: one stat per source file. bin/leadbook.js calls it before loading
// dist/cli/main.js; `node scripts/ensure-build.js [--force]` runs it alone.
//
// Several processes may ask at once (the test suites start many): the build
// runs under a lock directory, and whoever waited checks again before building.
// Output of dist/ whose source is gone (a deleted or renamed migration) is
// removed, so that migration discovery never finds a file src/ no longer has.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
/** Touched after each successful build, with the time the build started. */
const STAMP = path.join(DIST, '.built');
const CONFIG = path.join(ROOT, 'tsconfig.build.json');
const LOCK = path.join(ROOT, 'node_modules', '.cache', 'leadbook-build.lock');
const SOURCE = /\.tsx?$/;
const TEST = /\.test\.tsx?$/;

/** The newest mtime (ms) among the sources, their folders and the build settings. */
function newestSource() {
  let newest = 0;
  for (const file of [CONFIG, path.join(ROOT, 'tsconfig.json')]) {
    newest = Math.max(newest, fs.statSync(file).mtimeMs);
  }
  const walk = (dir) => {
    newest = Math.max(newest, fs.statSync(dir).mtimeMs); // a file added or removed
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (SOURCE.test(entry.name) && !TEST.test(entry.name)) newest = Math.max(newest, fs.statSync(at).mtimeMs);
    }
  };
  walk(SRC);
  return newest;
}

function stale() {
  if (!fs.existsSync(path.join(DIST, 'cli', 'main.js'))) return true;
  let built;
  try {
    built = fs.statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  return newestSource() > built;
}

/** Removes dist/ output whose source file no longer exists. */
function removeOrphans(dir = DIST) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      removeOrphans(at);
      if (fs.readdirSync(at).length === 0) fs.rmdirSync(at);
      continue;
    }
    const match = /^(.*)\.(js|js\.map|d\.ts)$/.exec(entry.name);
    if (!match) continue;
    const base = path.join(SRC, path.relative(DIST, path.dirname(at)), match[1]);
    if (!fs.existsSync(`${base}.ts`) && !fs.existsSync(`${base}.tsx`)) fs.rmSync(at);
  }
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function withLock(fn) {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A build killed half-way leaves its lock behind: older than 5 minutes is abandoned.
      try {
        if (Date.now() - fs.statSync(LOCK).mtimeMs > 300_000) fs.rmSync(LOCK, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`waited 5 minutes for another build of dist/ (${LOCK})`);
      sleep(100);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Builds dist/ when it is missing or stale (or always, with `force`). Returns
 * whether it built. Throws when the compiler reports errors; its report goes to
 * standard error, so that a command writing to standard output stays clean.
 */
export function ensureBuild({ force = false } = {}) {
  if (!force && !stale()) return false;
  if (!fs.existsSync(SRC)) return false; // an installed copy without sources: dist/ is what there is
  return withLock(() => {
    if (!force && !stale()) return false; // built by whoever held the lock
    const started = Date.now();
    let tsc;
    try {
      tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    } catch {
      throw new Error(
        'dist/ is missing or older than src/, and TypeScript is not installed to build it: run `npm install` (with dev dependencies)',
      );
    }
    // tsc's incremental record says what it emitted, not what is still there: with
    // part of dist/ gone (or when asked to), build from scratch.
    if (force || !fs.existsSync(path.join(DIST, 'cli', 'main.js')))
      fs.rmSync(path.join(DIST, '.tsbuildinfo'), { force: true });
    process.stderr.write('leadbook: compiling src/ to dist/ (tsc -p tsconfig.build.json)…\n');
    const result = spawnSync(process.execPath, [tsc, '-p', CONFIG], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (result.status !== 0)
      throw new Error(`the build failed (tsc exited with ${result.status ?? result.signal}); see the errors above`);
    removeOrphans();
    fs.writeFileSync(STAMP, '');
    fs.utimesSync(STAMP, new Date(started), new Date(started));
    return true;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensureBuild({ force: process.argv.includes('--force') });
  } catch (error) {
    process.stderr.write(`leadbook: ${error.message}\n`);
    process.exit(1);
  }
}
