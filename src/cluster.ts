// `leadbook serve --workers N`: N app processes sharing one port through
// node's cluster module. The primary migrates the database and makes the app
// key once, before any worker starts, so that workers never race to do either;
// every worker then serves on its own database connection. State shared by
// requests (sessions, throttles, tokens, ETags) lives in the database, so any
// worker can answer any request. A worker that dies is replaced, unless it
// dies at start, which would only repeat.
import cluster from 'node:cluster';
import { loadAppKey } from './accounts/secrets.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/connection.ts';
import { migrateToLatest } from './db/migrate.ts';
import { serve } from './server.ts';

/** A worker that exits sooner than this after its start is not restarted. */
const STARTUP_MS = 10_000;

export async function serveWorkers(config: Config, workers: number): Promise<void> {
  if (!cluster.isPrimary) return serve(config);
  const database = openDatabase(config);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  loadAppKey(config.appKey, config.dataDir);

  let stopping = false;
  const started = new Map<number, number>();
  const fork = () => started.set(cluster.fork().id, Date.now());
  cluster.on('exit', (worker, code, signal) => {
    const age = Date.now() - (started.get(worker.id) ?? 0);
    started.delete(worker.id);
    if (stopping) {
      if (started.size === 0) process.exit(0);
      return;
    }
    if (age < STARTUP_MS) {
      console.error(`leadbook: a worker exited ${signal ?? `with ${code}`} while starting; stopping the others`);
      stopping = true;
      process.exitCode = 1;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      if (started.size === 0) process.exit(1);
      return;
    }
    console.error(`leadbook: a worker exited ${signal ?? `with ${code}`}; starting another`);
    fork();
  });
  // Each worker finishes its requests in flight and closes its database
  // connection. (A terminal's Ctrl-C reaches the workers too; a worker shuts down once.)
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  for (let i = 0; i < workers; i++) fork();
}
