// Opens the database, migrates it, listens, and shuts down cleanly on a signal.
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/connection.ts';
import { migrateToLatest } from './db/migrate.ts';

/** How long requests in flight may take to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 30_000;
/** How often connections that finished their last response are closed while shutting down. */
const IDLE_SWEEP_MS = 100;

export async function serve(config: Config): Promise<void> {
  const database = openDatabase(config);
  await migrateToLatest(database.db);
  const app = await buildApp({ database, config });
  let closing = false;
  // SIGTERM (or Ctrl-C): stop accepting connections, let every request in
  // flight finish, then close the database (SQLite checkpoints its WAL) and exit 0.
  // A second signal, after the first, ends the process at once (the default action).
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections; finishing the requests in flight');
    // A keep-alive connection stays open after its last response until the
    // client drops it, which may take a minute: close each one as soon as it is
    // idle. (Requests arriving on one meanwhile are answered 503 by Fastify.)
    const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    let forced = false;
    const grace = setTimeout(() => {
      forced = true;
      app.log.warn(
        { graceMs: SHUTDOWN_GRACE_MS },
        'requests still in flight after the grace period: closing their connections',
      );
      app.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    let failed = false;
    try {
      await app.close();
    } catch (error) {
      failed = true;
      app.log.error({ err: error }, 'closing the server failed');
    } finally {
      clearInterval(sweep);
      clearTimeout(grace);
    }
    try {
      await database.close();
    } catch (error) {
      failed = true;
      app.log.error({ err: error }, 'closing the database failed');
    }
    app.log.info('shut down');
    process.exit(failed || forced ? 1 : 0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}
