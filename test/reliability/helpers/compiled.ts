// The app as the build compiles it (dist/, `tsc -p tsconfig.build.json`):
// what bin/leadbook.js runs, started here without the bin's check that dist/ is
// current, for suites that start many `leadbook` processes (a crash suite
// restarts the server every round). The first call per test process brings
// dist/ up to date (scripts/ensure-build.js: a no-op when it is; under a lock
// when several test files ask at once).
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../helpers/process.ts';

let built: string | undefined;

/** The path of the compiled src/cli/main.ts, dist/cli/main.js (`node MAIN serve` is `leadbook serve`). */
export function compiledMain(): string {
  if (built) return built;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/ensure-build.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  built = path.join(ROOT, 'dist/cli/main.js');
  return built;
}

/** Runs the compiled `leadbook ARGS` (see runCli for the real bin). */
export function runCompiled(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [compiledMain(), ...args], {
      env: { ...process.env, ...env },
      cwd: ROOT,
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end();
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
