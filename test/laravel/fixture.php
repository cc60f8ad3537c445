<?php

// Builds the original Laravel service's database with Laravel's own code (Debian's Illuminate 8.83):
// the tables of its migrations, recorded in `migrations` as `php artisan migrate` records them,
// accounts with bcrypt passwords, Fortify two-factor data and Sanctum tokens, then contacts and
// inquiries written through Eloquent. Prints a JSON manifest with the plain-text secrets.
//
//   php fixture.php --driver=mysql --database=NAME | --driver=sqlite --database=/path/file.sqlite
//       [--seed=1] [--contacts=2000] [--inquiries=2000] [--app-key=base64:...] [--timezone=UTC] [--foreign]
//       [--db-host=127.0.0.1] [--db-port=3306] [--db-user=root] [--db-password=]
//
// Contacts and inquiries are the same for the same seed; passwords' salts, the encrypter's IVs, the
// two-factor secrets and the tokens come from random_bytes, as in Laravel, and differ on every run.

declare(strict_types=1);

require __DIR__ . '/bootstrap.php';
require __DIR__ . '/migrations.php';
require __DIR__ . '/accounts.php';
require __DIR__ . '/records.php';

use App\Models\Contact;
use App\Models\Inquiry;
use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Database\ConnectionResolver;
use Illuminate\Database\Migrations\DatabaseMigrationRepository;
use Illuminate\Encryption\Encrypter;

[$command, $flags] = parse_flags($argv);
if ($command !== null) {
    fail("fixture.php takes no subcommand, got: $command");
}
$timezone = use_timezone($flags);
$seed = (int) flag($flags, 'seed', '1');
$counts = [
    'contacts' => (int) flag($flags, 'contacts', '2000'),
    'inquiries' => (int) flag($flags, 'inquiries', '2000'),
];
$foreign = ($flags['foreign'] ?? false) !== false;
$appKey = flag($flags, 'app-key') ?? 'base64:' . base64_encode(Encrypter::generateKey(CIPHER));
$encrypter = encrypter_for($appKey);

$capsule = connect($flags, create: true);
$connection = $capsule->getConnection();
$schema = $connection->getSchemaBuilder();
if ($schema->hasTable('migrations')) {
    fail('the database already holds a migrations table; give a fresh database');
}

// The migrator's own repository creates and fills the `migrations` table, as `php artisan migrate` does.
$resolver = new ConnectionResolver(['default' => $connection]);
$resolver->setDefaultConnection('default');
$repository = new DatabaseMigrationRepository($resolver, 'migrations');
$repository->createRepository();
foreach (laravel_migrations() as [$name, $batch, $up]) {
    $up($schema, ['foreign' => $foreign]);
    $repository->log($name, $batch);
}

$manifest = $connection->transaction(fn () => make_accounts($encrypter));

$values = new RecordValues($seed, count(ACCOUNTS), $foreign);
$connection->transaction(function () use ($values, $counts, $timezone): void {
    foreach (['contacts' => Contact::class, 'inquiries' => Inquiry::class] as $table => $class) {
        for ($i = 0; $i < $counts[$table]; $i++) {
            $model = new $class();
            $model->fill($table === 'contacts' ? $values->contact($i) : $values->inquiry($i, $timezone));
            [$created, $updated] = $values->timestamps($i, $timezone);
            if ($created === null) {
                $model->timestamps = false;
            } else {
                $model->created_at = $created;
                $model->updated_at = $updated;
            }
            $model->save();
        }
    }
});

$tables = ['users', 'password_resets', 'sessions', 'personal_access_tokens', 'failed_jobs', 'migrations', 'contacts',
    'inquiries'];
print_json([
    'app_key' => $appKey,
    'timezone' => $timezone,
    'seed' => $seed,
    'foreign' => $foreign,
    'users' => $manifest['users'],
    'tokens' => $manifest['tokens'],
    'migrations' => array_map(fn (array $migration) => $migration[0], laravel_migrations()),
    'counts' => array_combine($tables, array_map(fn (string $table) => Capsule::table($table)->count(), $tables)),
]);
