// The app's sources compiled to JavaScript once, for suites that start many
// `leadbook` processes (a crash suite restarts the server every round).
//
// Why: bin/leadbook.js runs the TypeScript through tsx's loader, and on Node 20
// every module import then makes a round trip to the loader's worker thread;
// loading the app that way costs ~2.5–4 s of CPU per process, against ~1.3 s
// for the same code as plain JavaScript. The compilation is what tsx does on
// the fly (TypeScript's own single-file transpiler, with the project's JSX
// settings and `.ts` import specifiers rewritten to `.js`); the output keeps
// the source tree's layout, next to a link to `public/`, so paths relative to
// a module resolve as in the repository. It is cached under
// node_modules/.cache, keyed by a hash of every source file.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../../helpers/process.ts';

const CACHE = path.join(ROOT, 'node_modules/.cache/leadbook-reliability');
const SOURCE = /\.tsx?$/;

function sources(): string[] {
  return (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
    .filter((f) => SOURCE.test(f) && !/\.test\.tsx?$/.test(f))
    .sort();
}

let built: string | undefined;

/** The path of the compiled src/cli/main.js (`node MAIN serve` is `leadbook serve`). */
export function compiledMain(): string {
  if (built) return built;
  const files = sources();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update('\0').update(fs.readFileSync(path.join(ROOT, 'src', f))).update('\0');
  hash.update(ts.version);
  const dir = path.join(CACHE, hash.digest('hex').slice(0, 16));
  const main = path.join(dir, 'src/cli/main.js');
  if (!fs.existsSync(main)) {
    // Built aside and renamed into place, so that test files running at the same time never see half a tree.
    const tmp = `${dir}.tmp-${randomBytes(4).toString('hex')}`;
    for (const f of files) {
      const out = ts.transpileModule(fs.readFileSync(path.join(ROOT, 'src', f), 'utf8'), {
        fileName: f,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          jsx: ts.JsxEmit.ReactJSX,
          jsxImportSource: 'preact',
          verbatimModuleSyntax: true,
          rewriteRelativeImportExtensions: true,
        },
      });
      const dest = path.join(tmp, 'src', f.replace(SOURCE, '.js'));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, out.outputText);
    }
    fs.writeFileSync(path.join(tmp, 'package.json'), '{"type": "module"}\n');
    fs.symlinkSync(path.join(ROOT, 'public'), path.join(tmp, 'public'));
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another test file built it first
    }
    // Builds of sources that changed since, left for an hour in case a test file still runs one.
    for (const old of fs.readdirSync(CACHE)) {
      const at = path.join(CACHE, old);
      if (old !== path.basename(dir) && Date.now() - fs.statSync(at).mtimeMs > 3_600_000) fs.rmSync(at, { recursive: true, force: true });
    }
  }
  built = main;
  return main;
}

/** Runs the compiled `leadbook ARGS` (see runCli for the real bin). */
export function runCompiled(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [compiledMain(), ...args], { env: { ...process.env, ...env }, cwd: ROOT, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end();
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
