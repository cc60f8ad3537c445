// leadbook serve | migrate
// Each command loads its modules when it runs (a dynamic import in its action),
// so that `--help` and `--version` load commander only, and `serve` only the app.
import { Command, InvalidArgumentError } from 'commander';
import { VERSION } from '../version.ts';

// The resources the CSV commands take, named from the declarations. Loading them brings the app's account rules along
// (half a second), so only a command line that names one of those commands pays for it.
const CSV_COMMANDS = ['import', 'export'];
const resourceNames = process.argv.slice(2).some((arg) => CSV_COMMANDS.includes(arg))
  ? (await import('../resources/index.ts')).recordResources.map((r) => r.name)
  : undefined;
const RESOURCE = resourceNames
  ? `one of ${resourceNames.join(', ')}`
  : 'a resource, named as in the API path (`leadbook import --help` lists them)';

function parseWorkers(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError('give a whole number from 1 to 64.');
  return n;
}

const program = new Command('leadbook')
  .description('Leadbook: contacts, inquiries and team accounts, as a JSON API on SQLite, PostgreSQL or MariaDB.')
  .version(VERSION)
  .addHelpText(
    'after',
    `
Settings come from the environment:
  PORT, HOST      where to listen (default 127.0.0.1:3000)
  DATA_DIR        where the SQLite file lives (default ./data)
  DATABASE_URL    postgres://… (PostgreSQL) or mysql://… (MariaDB) instead of SQLite
  APP_KEY         base64 of 32 bytes (default: generated once into DATA_DIR/app.key)
  APP_URL         the address in mailed links (default http://HOST:PORT)
  SMTP_URL        smtp://… to send mail (default: .eml files in DATA_DIR/mail)
  REGISTRATION    open or closed (default: only the first account registers)
  LOG_LEVEL       trace, debug, info (default), warn, error
See README.md for the rest.`,
  );

program
  .command('serve')
  .description('migrate the database to the latest version, then serve the API and web app')
  .option('-p, --port <port>', 'port to listen on (overrides PORT)')
  .option('-H, --host <host>', 'address to listen on (overrides HOST)')
  .option('-w, --workers <n>', 'app processes sharing the port (default 1; e.g. the number of cores)', parseWorkers)
  .action(async (opts: { port?: string; host?: string; workers?: number }) => {
    const { loadConfig } = await import('../config.ts');
    const config = loadConfig({
      ...process.env,
      ...(opts.port ? { PORT: opts.port } : {}),
      ...(opts.host ? { HOST: opts.host } : {}),
    });
    if (opts.workers && opts.workers > 1) {
      const { serveWorkers } = await import('../cluster.ts');
      await serveWorkers(config, opts.workers);
    } else {
      const { serve } = await import('../server.ts');
      await serve(config);
    }
  });

program
  .command('migrate')
  .description('apply every pending database migration, then exit')
  .action(async () => {
    const [{ loadConfig }, { openDatabase }, { migrateToLatest }] = await Promise.all([
      import('../config.ts'),
      import('../db/connection.ts'),
      import('../db/migrate.ts'),
    ]);
    const config = loadConfig();
    const database = openDatabase(config);
    try {
      const result = await migrateToLatest(database.db);
      const applied = result.results ?? [];
      console.log(
        applied.length
          ? applied.map((r) => `${r.status}: ${r.migrationName}`).join('\n')
          : 'The database is up to date.',
      );
    } finally {
      await database.close();
    }
  });

program
  .command('make:migration')
  .description(
    'write a new migration that takes the database from the ' +
      'last snapshot to the resource declarations (for developers)',
  )
  .argument('<name>', 'what it does, in lower-case words joined by hyphens, e.g. add-website')
  .option(
    '--rename <table.old=new>',
    'a column renamed (never guessed from a drop and an add); repeatable',
    (v: string, p: string[]) => [...p, v],
    [],
  )
  .option('--allow-drop', 'allow dropping tables or columns, and the data in them')
  .action(async (name: string, opts: { rename: string[]; allowDrop?: boolean }) => {
    const { makeMigrationCommand } = await import('./make-migration.ts');
    await makeMigrationCommand(name, opts);
  });

program
  .command('user:create')
  .description(
    'create an account; the password is read from a prompt, or from standard input when piped (never an argument)',
  )
  .requiredOption('--email <email>', 'the sign-in address')
  .option('--name <name>', 'the name shown in the app (default: the part of the email before @)')
  .option('--admin', 'make the account an admin (default: agent)')
  .action(async (opts: { email: string; name?: string; admin?: boolean }) => {
    const { createUserCommand } = await import('./user-create.ts');
    await createUserCommand(opts);
  });

program
  .command('takeover')
  .description(
    'move into the original Laravel service’s MariaDB/MySQL database (DATABASE_URL) in place: add Leadbook’s tables ' +
      'and columns beside its own, never dropping, renaming or rewriting anything',
  )
  .option('--check', 'report what is there, what would be added and what cannot be taken; change nothing')
  .option('--admin <email>', 'who becomes admin when no user is (default: the oldest account)')
  .option('--json', 'print the report as JSON')
  .action(async (opts: { check?: boolean; admin?: string; json?: boolean }) => {
    const { takeoverCommand } = await import('./takeover.ts');
    await takeoverCommand(opts);
  });

program
  .command('backup')
  .description(
    'write a consistent snapshot of the database to FILE while the app keeps ' +
      'serving (SQLite: online backup; PostgreSQL: pg_dump --format=custom; ' +
      'MariaDB: mariadb-dump --single-transaction)',
  )
  .argument('<file>', 'the backup file to write (replaced whole, never half-written)')
  .action(async (file: string) => {
    const { backupCommand } = await import('./backup.ts');
    await backupCommand(file);
  });

program
  .command('restore')
  .description(
    'replace the database with a backup made by `leadbook backup` (SQLite: ' +
      'stop the app first; PostgreSQL: pg_restore --clean, in one transaction; MariaDB: the mariadb client, ' +
      'not one transaction)',
  )
  .argument('<file>', 'the backup file to read')
  .action(async (file: string) => {
    const { restoreCommand } = await import('./backup.ts');
    await restoreCommand(file);
  });

program
  .command('seed')
  .description(
    'add deterministic fake contacts and inquiries (and 20 team agents) for trying the app or benchmarking it',
  )
  .option('--contacts <n>', 'how many contacts to add', '0')
  .option('--inquiries <n>', 'how many inquiries to add', '0')
  .option('--seed <s>', 'the same seed gives the same rows', '1')
  .option(
    '--pipeline',
    'link each inquiry to one of the contacts, spread the inquiries over the active stages, and assign them to 8 ' +
      'of the agents (about a tenth each)',
  )
  .action(async (opts: Record<'contacts' | 'inquiries' | 'seed', string> & { pipeline?: boolean }) => {
    // Checked here rather than by commander, so that seed.ts loads only when seeding.
    const { seedCommand, seedOptionParsers: parse } = await import('./seed.ts');
    await seedCommand({
      contacts: parse.contacts(opts.contacts),
      inquiries: parse.inquiries(opts.inquiries),
      seed: parse.seed(opts.seed),
      pipeline: opts.pipeline === true,
    });
  });

/** `--map 'E-mail=email' --map 'City='`: header → field, an empty field leaving the column out. */
function addMapping(pair: string, mapping: Record<string, string | null>) {
  const at = pair.lastIndexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`write HEADER=FIELD (or HEADER= to leave the column out), not ${pair}`);
  return { ...mapping, [pair.slice(0, at)]: pair.slice(at + 1) || null };
}

program
  .command('import')
  .description(
    'import a CSV file (a header row, then one record per row; comma, semicolon or tab separated; UTF-8, UTF-16 or ' +
      "Windows-1252) into a resource's records; invalid rows are listed and skipped, valid ones kept",
  )
  .argument('<resource>', RESOURCE)
  .argument('<file>', 'the CSV file')
  .option('--as <email>', 'the admin the records are created by (default: the first admin)')
  .option(
    '--map <header=field>',
    'fill FIELD from the column HEADER (HEADER= leaves it out); repeatable',
    addMapping,
    {},
  )
  .option('--upsert-by <field>', 'update the record a row matches by this field (id, email) instead of creating one')
  .option('--dry-run', 'read and check the whole file, write nothing, and say what the import would do')
  .option('--report <file>', 'write the full report (every failed row and its errors) as JSON')
  .action(async (...args: Parameters<typeof import('./records.ts').importCommand>) => {
    const { importCommand } = await import('./records.ts');
    await importCommand(...args);
  });

program
  .command('import:rollback')
  .description('undo an import: remove the records it created, put back those it updated (not those changed since)')
  .argument('<id>', 'the import id the import printed (also on the Imports page)')
  .option('--as <email>', 'the admin who rolls back (default: the first admin)')
  .action(async (...args: Parameters<typeof import('./records.ts').rollbackCommand>) => {
    const { rollbackCommand } = await import('./records.ts');
    await rollbackCommand(...args);
  });

program
  .command('export')
  .description("export a resource's records as CSV, streamed, to a file or standard output")
  .argument('<resource>', RESOURCE)
  .argument('[file]', 'the file to write (default: standard output)')
  .option(
    '--query <params>',
    "the list's search, filter and sort, as in the API, e.g. 'search=solar&filter[city]=Paris&sort=name'",
  )
  .option('--as <email>', 'the admin who exports (default: the first admin)')
  .option('--bom', 'start with a UTF-8 byte order mark, for Excel')
  .action(async (...args: Parameters<typeof import('./records.ts').exportCommand>) => {
    const { exportCommand } = await import('./records.ts');
    await exportCommand(...args);
  });

program.parseAsync().catch((error: unknown) => {
  console.error(`leadbook: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
