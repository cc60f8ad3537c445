// What every command that works on the data does around its work: open the
// configured database, bring it to the latest migration, close it afterwards.
// A refused operation (AppError) is told as its detail and field messages.
import { keepPasswordsFor } from '../accounts/passwords.ts';
import { loadConfig } from '../config.ts';
import { type Database, openDatabase } from '../db/connection.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { AppError } from '../errors.ts';

export async function withDatabase(work: (database: Database) => Promise<void>, refused?: string): Promise<void> {
  const config = loadConfig();
  keepPasswordsFor(config);
  const database = openDatabase(config);
  try {
    await migrateToLatest(database.db);
    await work(database);
  } catch (error) {
    if (error instanceof AppError) {
      const fields = Object.entries(error.errors ?? {}).map(
        ([field, messages]) => `\n  ${field}: ${messages.join('; ')}`,
      );
      throw new Error(`${refused ?? error.detail}${fields.join('')}`);
    }
    throw error;
  } finally {
    await database.close();
  }
}
