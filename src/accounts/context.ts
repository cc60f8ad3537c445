import type { Config } from '../config.ts';
import type { Database } from '../db/connection.ts';
import type { Log } from './log.ts';
import type { Mailer } from './mail.ts';
import type { AppKey } from './secrets.ts';

/** What every account action needs: the database, the settings, the key, the mailer. */
export interface Accounts {
  database: Database;
  config: Config;
  key: AppKey;
  mailer: Mailer;
  log: Log;
}
