<?php
// Runs Laravel's own Encrypter (Debian's php-illuminate-encryption, Laravel 8.83) so the Node tests compare
// src/accounts/laravel.ts with the real thing instead of with a copy of it. Prints one JSON object on stdout;
// on failure that object is {"error": ..., "message": ...} and the exit status is 1.
//
//   php crypt.php encrypt --key=base64:… --plain=… [--serialize=0|1] [--cipher=AES-256-CBC]
//   php crypt.php decrypt --key=base64:… --payload=… [--unserialize=0|1] [--cipher=AES-256-CBC]
//   php crypt.php recovery-codes --key=base64:… [--cipher=AES-256-CBC]
//
// The key is read as Laravel reads APP_KEY: `base64:` and base64, or the raw bytes. serialize and unserialize
// default to 1, as Laravel's encrypt() and decrypt() helpers do. recovery-codes makes what Fortify's
// GenerateNewRecoveryCodes stores: eight RecoveryCode::generate() codes, JSON-encoded, encrypted with serialize.

require_once 'Illuminate/Encryption/autoload.php';
require_once 'Illuminate/Collections/autoload.php';

use Illuminate\Encryption\Encrypter;
use Illuminate\Support\Collection;
use Illuminate\Support\Str;

const JSON_FLAGS = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR;

function options(array $argv): array
{
    $options = [];
    foreach ($argv as $argument) {
        if (! preg_match('/^--([a-z-]+)=(.*)$/s', $argument, $match)) {
            throw new InvalidArgumentException("Unexpected argument: {$argument}");
        }
        $options[$match[1]] = $match[2];
    }
    return $options;
}

function required(array $options, string $name): string
{
    if (! array_key_exists($name, $options)) {
        throw new InvalidArgumentException("--{$name}= is required");
    }
    return $options[$name];
}

function encrypter(array $options): Encrypter
{
    $key = required($options, 'key');
    // The same reading of APP_KEY as Illuminate\Encryption\EncryptionServiceProvider::parseKey.
    if (Str::startsWith($key, 'base64:')) {
        $key = base64_decode(Str::after($key, 'base64:'));
    }
    return new Encrypter($key, $options['cipher'] ?? 'AES-256-CBC');
}

function flag(array $options, string $name): bool
{
    $value = $options[$name] ?? '1';
    if ($value !== '0' && $value !== '1') {
        throw new InvalidArgumentException("--{$name}= must be 0 or 1");
    }
    return $value === '1';
}

function run(array $argv): array
{
    $command = $argv[1] ?? '';
    $options = options(array_slice($argv, 2));
    switch ($command) {
        case 'encrypt':
            $plain = required($options, 'plain');
            return ['payload' => encrypter($options)->encrypt($plain, flag($options, 'serialize'))];
        case 'decrypt':
            $value = encrypter($options)->decrypt(required($options, 'payload'), flag($options, 'unserialize'));
            // The type is printed so a test can tell a string from what unserialize might have made of it.
            return ['type' => gettype($value), 'value' => $value];
        case 'recovery-codes':
            $plain = json_encode(Collection::times(8, function () {
                return Str::random(10).'-'.Str::random(10);
            })->all());
            return ['plain' => $plain, 'payload' => encrypter($options)->encrypt($plain)];
        default:
            throw new InvalidArgumentException('Usage: crypt.php encrypt|decrypt|recovery-codes --key=… [options]');
    }
}

try {
    echo json_encode(run($argv), JSON_FLAGS), "\n";
} catch (Throwable $error) {
    echo json_encode(['error' => get_class($error), 'message' => $error->getMessage()], JSON_FLAGS), "\n";
    exit(1);
}
