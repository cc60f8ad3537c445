// A typed client from the OpenAPI document: `npm run client` turns the running app's /api/v1/openapi.json into
// TypeScript types (openapi-typescript); a program written with openapi-fetch against them (test/client/crud.ts)
// must pass `tsc --strict` and then work, as typed, against that same app; and a file of mistakes
// (test/client/mistakes.ts) must fail tsc on each of its marked lines and no other, so the check above is a real one.
// Every answer the program got must also be one the document declares: its status, media type and headers.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Middleware } from 'openapi-fetch';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { ROOT } from './helpers/process.ts';

// Under the repository, so that the program and tsc find openapi-fetch in its node_modules (git-ignored).
const TMP = path.join(ROOT, 'test/.tmp');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** Runs node with `args` from the repository's root; never throws, the exit code tells. */
function node(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/** `tsc --noEmit --strict` on one file of `dir`: the options a strict client project would have. */
function tsc(dir: string, file: string) {
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    // The generated declarations are checked too, not taken on trust.
    skipLibCheck: false,
    // What a browser has, no Node types: the program needs nothing else.
    types: [],
  };
  const config = path.join(dir, `tsconfig.${path.basename(file, '.ts')}.json`);
  fs.writeFileSync(config, JSON.stringify({ compilerOptions, files: [file] }, null, 2));
  return node([TSC, '-p', config, '--noEmit', '--strict', '--pretty', 'false']);
}

/** `npm run client` with these arguments. */
const generate = (...args: string[]) => node(['--import', 'tsx', 'scripts/client.ts', ...args]);

for (const dialect of DIALECTS) {
  describe(`a typed client from the OpenAPI document (${dialect})`, () => {
    let app: TestApp;
    let dir: string;
    let document: Json;
    before(async () => {
      app = await startApp(dialect);
      fs.mkdirSync(TMP, { recursive: true });
      dir = fs.mkdtempSync(path.join(TMP, `typed-client-${dialect}-`));
      for (const file of ['crud.ts', 'mistakes.ts'])
        fs.copyFileSync(path.join(ROOT, 'test/client', file), path.join(dir, file));
      document = JSON.parse((await app.get('/api/v1/openapi.json')).text);
    });
    after(async () => {
      // Also when the start failed: an open app would keep the run from ending.
      await app?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('npm run client writes the types of the running app’s document', async () => {
      const out = path.join(dir, 'leadbook-api.d.ts');
      const run = await generate('--url', app.url, '--out', out);
      assert.equal(run.code, 0, run.output);
      assert.match(run.output, new RegExp(`: ${Object.keys(document.paths).length} paths`));
      const types = fs.readFileSync(out, 'utf8');
      assert.match(types, /^export interface paths \{/m);
      assert.match(types, /"\/api\/v1\/contacts\/\{id\}": \{/);
      assert.match(types, /patchInquiriesById: \{/, 'operations by their operationId');
    });

    if (dialect === DIALECTS[0])
      test('--in-process writes the same types with no server running', async () => {
        const out = path.join(dir, 'in-process.d.ts');
        const run = await generate('--in-process', '--out', out);
        assert.equal(run.code, 0, run.output);
        assert.equal(fs.readFileSync(out, 'utf8'), fs.readFileSync(path.join(dir, 'leadbook-api.d.ts'), 'utf8'));
      });

    test('every success in the document says what it answers, so that the types can', () => {
      // A route with no response schema is documented as "200 Default Response" with no body; a client then types
      // the answer as nothing, whatever the route sends (204 for several, an image for one).
      const vague = Object.entries(document.paths).flatMap(([where, item]) =>
        Object.entries(item as Json).flatMap(([method, operation]: [string, Json]) =>
          Object.entries(operation.responses as Json)
            .filter(([status, response]: [string, Json]) => /^2/.test(status) && status !== '204' && !response.content)
            .map(([status]) => `${method} ${where} ${status}`),
        ),
      );
      assert.deepEqual(vague, []);
    });

    test('the typed program passes tsc --strict, with no diagnostic', async () => {
      const run = await tsc(dir, 'crud.ts');
      assert.equal(run.output, '');
      assert.equal(run.code, 0);
    });

    test('tsc refuses every mistake in mistakes.ts, each on its own line', async () => {
      const run = await tsc(dir, 'mistakes.ts');
      assert.equal(run.code, 2, 'errors, no output written');
      const lines = fs.readFileSync(path.join(dir, 'mistakes.ts'), 'utf8').split('\n');
      const marked = lines.flatMap((line, i) => (/;\s*\/\/ wrong: /.test(line) ? [i + 1] : []));
      assert.ok(marked.length >= 15, 'mistakes of every kind');
      const refused = [...run.output.matchAll(/^\S*\/mistakes\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) =>
        Number(m[1]),
      );
      assert.deepEqual([...new Set(refused)], marked, run.output);
    });

    test('the program creates, lists, reads, patches with If-Match and deletes a contact and its inquiry', async () => {
      const answers: { method: string; path: string; status: number; type: string; headers: string[] }[] = [];
      const watch: Middleware = {
        onResponse({ request, response, schemaPath }) {
          answers.push({
            method: request.method.toLowerCase(),
            path: schemaPath,
            status: response.status,
            type: (response.headers.get('content-type') ?? '').split(';')[0]!,
            headers: [...response.headers.keys()],
          });
        },
      };
      const program: Json = await import(pathToFileURL(path.join(dir, 'crud.ts')).href);
      const result = await program.crud({ baseUrl: app.url, token: app.admin.token, middleware: [watch] });
      assert.deepEqual(result.transcript, [
        ['create contact', 201],
        ['list contacts by email', 200],
        ['get contact', 200],
        ['get contact unchanged', 304],
        ['patch contact', 200],
        ['patch contact, stale If-Match', 412],
        ['create inquiry', 201],
        ['list inquiries by contact', 200],
        ['get contact', 200],
        ['get inquiry', 200],
        ['patch inquiry', 200],
        ['patch inquiry, stale If-Match', 412],
        ['delete inquiry', 204],
        ['get deleted inquiry', 404],
        ['delete contact', 204],
        ['get deleted contact', 404],
      ]);
      assert.equal(result.inquiry.contact_id, result.contact.id, 'the inquiry named its contact');
      assert.equal((await app.get(`/api/v1/contacts/${result.contact.id}`)).status, 404, 'deleted for everyone');

      // What the types promised, the document declares: each answer's status, media type and headers.
      assert.equal(answers.length, result.transcript.length);
      for (const answer of answers) {
        const where = `${answer.method} ${answer.path} ${answer.status}`;
        const declared = document.paths[answer.path]?.[answer.method]?.responses?.[String(answer.status)];
        assert.ok(declared, `${where} is declared`);
        if (answer.type) assert.ok(declared.content?.[answer.type], `${where} declares ${answer.type}`);
        else assert.equal(declared.content, undefined, `${where} has no body`);
        const headers = Object.keys(declared.headers ?? {}).map((h) => h.toLowerCase());
        for (const header of ['etag', 'location'])
          if (answer.headers.includes(header)) assert.ok(headers.includes(header), `${where} declares ${header}`);
      }
    });
  });
}

// The temporary directory itself goes when no other run is using it.
after(() => {
  try {
    fs.rmdirSync(TMP);
  } catch {
    // not empty (another run is using it) or gone already
  }
});
