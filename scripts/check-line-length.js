#!/usr/bin/env node
// Fails, listing file:line, when a line of src/ is longer than 120 characters.
// The formatter wraps code at 120; this catches what it cannot wrap (long
// strings, comments, URLs). Characters are code points, as an editor counts.
// Plain Node, no dependencies: `node scripts/check-line-length.js [dir or file...]`.
//
// Migrations are frozen once written (the dated files and the versioned
// helpers they run, src/db/migrations/lib/vN.ts): their long lines are listed
// as a notice but do not fail the check, since they may not be edited.
import fs from 'node:fs';
import path from 'node:path';

const MAX = 120;
const EXTENSIONS = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs', '.md', '.css', '.sql']);
const FROZEN = /(^|\/)src\/db\/migrations\/((mysql\/)?\d{4}-[^/]+|lib\/v\d+\.ts)$/;

function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(full);
    else if (entry.isFile() && EXTENSIONS.has(path.extname(entry.name))) yield full;
  }
}

const roots = process.argv.slice(2);
const long = [];
const frozen = [];
for (const root of roots.length ? roots : ['src']) {
  for (const file of fs.statSync(root).isDirectory() ? [...files(root)].sort() : [root]) {
    const list = FROZEN.test(file.split(path.sep).join('/')) ? frozen : long;
    const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/);
    lines.forEach((line, i) => {
      const length = [...line].length;
      if (length > MAX) list.push(`${file}:${i + 1}: ${length} characters`);
    });
  }
}

if (frozen.length) {
  console.log(
    `${frozen.length} long line(s) in frozen migration files (not edited, not failing):\n${frozen.join('\n')}`,
  );
}
if (long.length) {
  console.error(`${long.length} line(s) longer than ${MAX} characters:\n${long.join('\n')}`);
  process.exitCode = 1;
}
