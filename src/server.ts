// Opens the database, migrates it, listens, and shuts down cleanly on a signal.
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase } from './db/connection.ts';
import { migrateToLatest } from './db/migrate.ts';

export async function serve(config: Config): Promise<void> {
  const database = openDatabase(config);
  await migrateToLatest(database.db);
  const app = await buildApp({ database, config });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}
