<?php

// Shared start of fixture.php and inspect.php: Debian's Laravel 8.83
// components, the command-line flags, a Capsule connection configured as
// Laravel's default config/database.php does, and the app's encrypter.
// Nothing here imitates a Laravel format; the formats come from the
// components themselves.

declare(strict_types=1);

require_once '/usr/share/php/Illuminate/Support/autoload.php';
require_once '/usr/share/php/Illuminate/Collections/autoload.php';
require_once '/usr/share/php/Illuminate/Container/autoload.php';
require_once '/usr/share/php/Illuminate/Contracts/autoload.php';
require_once '/usr/share/php/Illuminate/Macroable/autoload.php';
require_once '/usr/share/php/Illuminate/Database/autoload.php';
require_once '/usr/share/php/Illuminate/Encryption/autoload.php';
require_once '/usr/share/php/Illuminate/Hashing/autoload.php';
require_once '/usr/share/php/Carbon/autoload.php';
require_once __DIR__ . '/models.php';

use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Encryption\Encrypter;

// Laravel's own default, and the cipher every Laravel 8 app key is made for.
const CIPHER = 'AES-256-CBC';

// Warnings and notices stop the script: a fixture half made by a notice is worse than none.
set_error_handler(function (int $level, string $message, string $file, int $line): bool {
    throw new ErrorException($message, 0, $level, $file, $line);
});

/**
 * `--name=value` and bare `--flag` (true) into a map; the first word that is not a flag is the subcommand.
 *
 * @return array{0: ?string, 1: array<string, string|bool>}
 */
function parse_flags(array $argv): array
{
    $command = null;
    $flags = [];
    foreach (array_slice($argv, 1) as $arg) {
        if (str_starts_with($arg, '--')) {
            $pair = explode('=', substr($arg, 2), 2);
            $flags[$pair[0]] = $pair[1] ?? true;
        } elseif ($command === null) {
            $command = $arg;
        } else {
            fail("unexpected argument: $arg");
        }
    }
    return [$command, $flags];
}

function flag(array $flags, string $name, ?string $default = null): ?string
{
    $value = $flags[$name] ?? $default;
    return $value === true ? '' : $value;
}

function required_flag(array $flags, string $name): string
{
    $value = flag($flags, $name);
    if ($value === null || $value === '') {
        fail("--$name is required");
    }
    return $value;
}

function fail(string $message): never
{
    fwrite(STDERR, $message . "\n");
    exit(2);
}

/** One JSON document on stdout; Unicode and slashes as they are, so a reader compares the real strings. */
function print_json(mixed $value): void
{
    echo json_encode(
        $value,
        JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR,
    ), "\n";
}

/**
 * The connection config Laravel 8's config/database.php gives, for `--driver=mysql|sqlite --database=...`.
 * The MariaDB server comes from --db-host, --db-port, --db-user and --db-password (root on 127.0.0.1:3306).
 */
function connection_config(array $flags): array
{
    $driver = flag($flags, 'driver', 'sqlite');
    $database = required_flag($flags, 'database');
    if ($driver === 'sqlite') {
        return ['driver' => 'sqlite', 'database' => $database, 'prefix' => '', 'foreign_key_constraints' => true];
    }
    if ($driver !== 'mysql') {
        fail("--driver must be mysql or sqlite, not $driver");
    }
    return [
        'driver' => 'mysql',
        'host' => flag($flags, 'db-host', '127.0.0.1'),
        'port' => flag($flags, 'db-port', '3306'),
        'database' => $database,
        'username' => flag($flags, 'db-user', 'root'),
        'password' => flag($flags, 'db-password', ''),
        'unix_socket' => '',
        'charset' => 'utf8mb4',
        'collation' => 'utf8mb4_unicode_ci',
        'prefix' => '',
        'prefix_indexes' => true,
        'strict' => true,
        'engine' => null,
    ];
}

/**
 * Connects Capsule (and Eloquent) to the database. With $create, a missing SQLite file or MariaDB
 * database is made first: Laravel's SQLite connector refuses a missing file, and the MariaDB
 * database is created by Laravel's schema builder so it gets the connection's charset and collation.
 */
function connect(array $flags, bool $create = false): Capsule
{
    $config = connection_config($flags);
    $capsule = new Capsule();
    if ($create && $config['driver'] === 'sqlite' && !file_exists($config['database'])) {
        touch($config['database']);
    }
    if ($create && $config['driver'] === 'mysql') {
        $capsule->addConnection(['database' => null] + $config, 'server');
        $server = $capsule->getConnection('server');
        $exists = $server->selectOne(
            'select schema_name from information_schema.schemata where schema_name = ?',
            [$config['database']],
        );
        if ($exists === null) {
            $server->getSchemaBuilder()->createDatabase($config['database']);
        }
        $server->disconnect();
    }
    $capsule->addConnection($config);
    $capsule->setAsGlobal();
    $capsule->bootEloquent();
    return $capsule;
}

/** Laravel's LoadConfiguration sets PHP's default zone from config('app.timezone'); Carbon::now() follows it. */
function use_timezone(array $flags): string
{
    $timezone = flag($flags, 'timezone', 'UTC');
    date_default_timezone_set($timezone);
    return $timezone;
}

/** The encrypter Laravel builds from APP_KEY (`base64:` followed by the 32 key bytes in base64). */
function encrypter_for(string $appKey): Encrypter
{
    if (!str_starts_with($appKey, 'base64:')) {
        fail('--app-key must look like base64:...');
    }
    return new Encrypter(base64_decode(substr($appKey, 7), true) ?: '', CIPHER);
}
