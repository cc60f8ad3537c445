<?php

// PHP's own reading of an original-service database, for tests to compare Leadbook's reading with.
// Each subcommand prints one JSON document; the connection flags are fixture.php's.
//
//   rows --table=T [--eloquent]        every row in id order, as the query builder returns it (values as
//                                      PDO gives them to PHP); --eloquent: through the model's casts, as
//                                      the service's API serialized them (contacts, inquiries, users)
//   hash-check --email= --password=    {"valid": Hash::check with BcryptHasher}
//   decrypt-secret --email=            {"secret": the decrypted two_factor_secret}
//   recovery-codes --email=            {"codes": the decrypted recovery codes}
//   recovery-check --email= --code=    {"valid": Fortify's TwoFactorLoginRequest::validRecoveryCode}
//   token-check --token=ID|SECRET      Sanctum's PersonalAccessToken::findToken, then the guard's expiry rule
//
// The secrets need --app-key=base64:... (the service's APP_KEY); times are read in --timezone.

declare(strict_types=1);

require __DIR__ . '/bootstrap.php';

use App\Models\Contact;
use App\Models\Inquiry;
use App\Models\PersonalAccessToken;
use App\Models\User;
use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Hashing\BcryptHasher;

[$command, $flags] = parse_flags($argv);
use_timezone($flags);
connect($flags);

/** The user with this e-mail address; as Fortify looks users up, by the exact value in `email`. */
function user_by_email(array $flags): User
{
    $email = required_flag($flags, 'email');
    return User::query()->where('email', $email)->first() ?? fail("no user with e-mail $email");
}

switch ($command) {
    case 'rows':
        $table = required_flag($flags, 'table');
        if (($flags['eloquent'] ?? false) !== false) {
            $models = ['contacts' => Contact::class, 'inquiries' => Inquiry::class, 'users' => User::class];
            $class = $models[$table] ?? fail("no model for $table");
            print_json($class::query()->orderBy('id')->get()->toArray());
        } else {
            print_json(Capsule::table($table)->orderBy('id')->get()->all());
        }
        break;

    case 'hash-check':
        $user = user_by_email($flags);
        print_json(['valid' => (new BcryptHasher())->check(required_flag($flags, 'password'), $user->password)]);
        break;

    case 'decrypt-secret':
        $user = user_by_email($flags);
        $encrypter = encrypter_for(required_flag($flags, 'app-key'));
        $stored = $user->two_factor_secret;
        print_json(['secret' => $stored === null ? null : $encrypter->decrypt($stored)]);
        break;

    case 'recovery-codes':
        $user = user_by_email($flags);
        $encrypter = encrypter_for(required_flag($flags, 'app-key'));
        print_json(['codes' => json_decode($encrypter->decrypt($user->two_factor_recovery_codes), true)]);
        break;

    case 'recovery-check':
        // The first stored code equal to the given one, compared with hash_equals, as Fortify does.
        $user = user_by_email($flags);
        $encrypter = encrypter_for(required_flag($flags, 'app-key'));
        $given = required_flag($flags, 'code');
        $codes = collect(json_decode($encrypter->decrypt($user->two_factor_recovery_codes), true));
        print_json(['valid' => $codes->first(fn (string $code) => hash_equals($code, $given)) !== null]);
        break;

    case 'token-check':
        print_json(token_check(required_flag($flags, 'token')));
        break;

    default:
        fail('usage: inspect.php rows|hash-check|decrypt-secret|recovery-codes|recovery-check|token-check [flags]');
}

/** findToken: with an id, that row's hash compared in constant time; without, a lookup by the hash. */
function token_check(string $plain): array
{
    if (!str_contains($plain, '|')) {
        $token = PersonalAccessToken::query()->where('token', hash('sha256', $plain))->first();
    } else {
        [$id, $secret] = explode('|', $plain, 2);
        $token = PersonalAccessToken::query()->find($id);
        if ($token !== null && !hash_equals($token->token, hash('sha256', $secret))) {
            $token = null;
        }
    }
    if ($token === null) {
        return ['found' => false];
    }
    // Sanctum's guard refuses a token whose expires_at has passed (its config `expiration` is null here).
    $expired = $token->expires_at !== null && $token->expires_at->isPast();
    return [
        'found' => true,
        'id' => $token->getKey(),
        'tokenable_type' => $token->tokenable_type,
        'tokenable_id' => $token->tokenable_id,
        'abilities' => $token->abilities,
        'expired' => $expired,
        'valid' => !$expired && $token->tokenable !== null,
    ];
}
