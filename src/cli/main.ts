// leadbook serve | migrate
import { Command } from 'commander';
import { VERSION } from '../app.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/connection.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { serve } from '../server.ts';
import { createUserCommand } from './user-create.ts';

const program = new Command('leadbook')
  .description('Leadbook: contacts, inquiries and team accounts, as a JSON API on SQLite or PostgreSQL.')
  .version(VERSION)
  .addHelpText('after', `
Settings come from the environment:
  PORT, HOST      where to listen (default 127.0.0.1:3000)
  DATA_DIR        where the SQLite file lives (default ./data)
  DATABASE_URL    postgres://… to use PostgreSQL instead of SQLite
  APP_KEY         base64 of 32 bytes (default: generated once into DATA_DIR/app.key)
  APP_URL         the address in mailed links (default http://HOST:PORT)
  SMTP_URL        smtp://… to send mail (default: .eml files in DATA_DIR/mail)
  REGISTRATION    open or closed (default: only the first account registers)
  LOG_LEVEL       trace, debug, info (default), warn, error
See README.md for the rest.`);

program
  .command('serve')
  .description('migrate the database to the latest version, then serve the API and web app')
  .option('-p, --port <port>', 'port to listen on (overrides PORT)')
  .option('-H, --host <host>', 'address to listen on (overrides HOST)')
  .action(async (opts: { port?: string; host?: string }) => {
    const config = loadConfig({ ...process.env, ...(opts.port ? { PORT: opts.port } : {}), ...(opts.host ? { HOST: opts.host } : {}) });
    await serve(config);
  });

program
  .command('migrate')
  .description('apply every pending database migration, then exit')
  .action(async () => {
    const config = loadConfig();
    const database = openDatabase(config);
    try {
      const result = await migrateToLatest(database.db);
      const applied = result.results ?? [];
      console.log(applied.length ? applied.map((r) => `${r.status}: ${r.migrationName}`).join('\n') : 'The database is up to date.');
    } finally {
      await database.close();
    }
  });

program
  .command('user:create')
  .description('create an account; the password is read from a prompt, or from standard input when piped (never an argument)')
  .requiredOption('--email <email>', 'the sign-in address')
  .option('--name <name>', 'the name shown in the app (default: the part of the email before @)')
  .option('--admin', 'make the account an admin (default: agent)')
  .action(createUserCommand);

program.parseAsync().catch((error: unknown) => {
  console.error(`leadbook: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
