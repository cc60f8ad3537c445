// Preloaded (`node --import`) into a `leadbook serve` child process by the
// reliability suites: it loads the app's modules (LEADBOOK_WARM_MODULES, from
// dist/), says "warm" on stdout, and holds the
// process back until a line arrives on stdin. Only then does `serve` run
// (config, open the database, migrate, listen). Loading the modules takes
// seconds; this lets a suite load the next server while the current one is
// still under test, so that a restart after a SIGKILL costs what restarting a
// loaded process costs. The database is not touched before the gate opens.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

for (const module of (process.env.LEADBOOK_WARM_MODULES ?? '').split(path.delimiter).filter(Boolean)) {
  await import(pathToFileURL(module).href);
}
process.stdout.write('warm\n');
const go = await new Promise((resolve) => {
  process.stdin.once('data', () => resolve(true));
  // The test went away without opening the gate: leave quietly.
  process.stdin.once('end', () => resolve(false));
  process.stdin.once('error', () => resolve(false));
});
if (!go) process.exit(0);
// The test that started this process may die without stopping it (a timeout,
// a crash): its end of stdin then closes, and this process shuts down too.
// (unref: an open stdin must not keep a finished command alive.)
process.stdin.on('data', () => {});
process.stdin.once('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.unref?.();
