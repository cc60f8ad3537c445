// The curl examples in README.md run as written against a fresh app; only the
// address is changed to the test server's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { freshDatabase } from './helpers/database.ts';
import { ROOT, serveCli } from './helpers/process.ts';
import type { Json } from './helpers/json.ts';

/** curl prints bodies back to back with no newline: split them into top-level JSON values. */
function jsonValues(text: string): Json[] {
  const values: Json[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

function tryItBlock(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('### Try it')[1];
  assert.ok(section, 'README has a "Try it" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'the section has a sh block');
  return block;
}

test('README curl examples work as written', async () => {
  const script = tryItBlock();
  assert.ok((script.match(/^curl /gm) ?? []).length >= 8, 'several examples');
  const fresh = await freshDatabase('sqlite');
  const served = await serveCli({ DATA_DIR: fresh.options.dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' });
  try {
    const run = script.replaceAll('http://127.0.0.1:3000', served.url);
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', run]);
    const outputs = jsonValues(stdout);
    const [registered, created, found, inquiry, unset, patched, page, mistake] = outputs;
    assert.equal(outputs.length, 8, stdout);
    assert.equal(registered.data.role, 'admin', 'the first account is the admin');
    assert.equal(created.data.name, 'Grace Hopper');
    assert.equal(created.data.created_by, registered.data.id, 'created_by is the token owner');
    assert.deepEqual(
      found.data.map((r: { id: number }) => r.id),
      [created.data.id],
    );
    assert.match(stdout, /"ticket_id":9007199254740993\b/, 'the 64-bit id comes back exactly');
    assert.notEqual(inquiry.data.assigned_date, null);
    assert.deepEqual(unset.data, [], 'the only inquiry has status true');
    assert.equal(patched.data.phone, '+1 555 0100', 'the If-Match update went through');
    assert.equal(page.meta.next_cursor, null);
    assert.equal(mistake.code, 'validation_failed');
    assert.deepEqual(Object.keys(mistake.errors).sort(), ['emial', 'name']);
  } finally {
    await served.stop();
    await fresh.drop();
  }
});
