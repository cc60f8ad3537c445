// Every setting, read from the environment once and checked, with defaults
// that make `npm start` work on a laptop with nothing configured.
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** `postgres://…` for PostgreSQL; unset means the SQLite file in `dataDir`. */
  databaseUrl?: string;
  logLevel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${env.PORT}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with postgres:// (leave it unset for the SQLite file)');
  }
  return {
    host: env.HOST || '127.0.0.1',
    port,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    databaseUrl,
    logLevel: env.LOG_LEVEL || 'info',
  };
}
