<?php

// The original service's accounts, made the way its packages make them: BcryptHasher for passwords,
// Fortify's enable action for two-factor secrets and recovery codes (encrypted with the app's
// encrypter, serialized, as Fortify's `encrypt()` helper does), Sanctum's createToken for personal
// access tokens, and one row each in password_resets and sessions as Laravel's token repository and
// session handler write them. Returns what a test needs to know in plain text.

declare(strict_types=1);

use App\Models\PersonalAccessToken;
use App\Models\User;
use Carbon\Carbon;
use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Encryption\Encrypter;
use Illuminate\Hashing\BcryptHasher;
use Illuminate\Support\Collection;
use Illuminate\Support\Str;

// Eighty characters: bcrypt reads only the first 72 bytes, and PHP accepts the longer password silently.
const LONG_PASSWORD = '01234567890123456789012345678901234567890123456789012345678901234567890123456789';

/** two_factor: 'confirmed', 'unconfirmed' (enabled, never confirmed) or null. */
const ACCOUNTS = [
    ['Ada Admin', 'admin@example.com', 'correct horse battery staple', 'confirmed', true, true],
    ['José Müller-Łukasiewicz', 'jose@example.com', 'pässwörd-Ω-2021', 'confirmed', true, false],
    ['Pending Twofactor', 'pending@example.com', 'enabled-but-never-confirmed', 'unconfirmed', true, false],
    ['Plain User', 'plain@example.com', 'password', null, true, true],
    ['Unverified Ursula', 'Ursula.Upper@Example.com', 'Secret123!', null, false, false],
    ['李小龍', 'li@example.cn', '龍の秘密のパスワード', 'confirmed', false, true],
    ['Long Password', 'long@example.com', LONG_PASSWORD, null, true, false],
    ["Siobhán O'Brien", 'siobhan@example.ie', "quote'\"back\\slash 🎉", null, true, false],
];

/** [user index (from 0), name, abilities, expires (relative to now, null for never), last used (relative)] */
const TOKENS = [
    [0, 'deploy-bot', ['*'], null, '-3 hours'],
    [0, 'reporting', ['read'], null, null],
    [1, 'zapier', ['read', 'create'], '+30 days', null],
    [3, 'old-script', ['*'], '-1 day', '-2 days'],
    [5, 'crm-sync', ['create', 'read', 'update', 'delete'], '+1 year', null],
    [2, 'mobile', ['read'], null, null],
];

/** Google2FA's generateSecretKey(16), which Fortify calls: sixteen random characters of the base32 alphabet. */
function two_factor_secret(): string
{
    $alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    $secret = '';
    for ($i = 0; $i < 16; $i++) {
        $secret .= $alphabet[random_int(0, 31)];
    }
    return $secret;
}

/** Fortify's RecoveryCode::generate(). */
function recovery_code(): string
{
    return Str::random(10) . '-' . Str::random(10);
}

/** @return array{users: list<array>, tokens: list<array>} */
function make_accounts(Encrypter $encrypter): array
{
    $hasher = new BcryptHasher(['rounds' => 10]);
    $users = [];
    $models = [];
    foreach (ACCOUNTS as $i => [$name, $email, $password, $twoFactor, $verified, $remember]) {
        $names = explode(' ', $name, 2);
        $user = new User();
        $user->forceFill([
            'name' => $name,
            'frist_name' => count($names) === 2 ? $names[0] : null,
            'last_name' => $names[1] ?? null,
            'email' => $email,
            'password' => $hasher->make($password),
            'email_verified_at' => $verified ? Carbon::now()->subDays(30 + $i) : null,
            'remember_token' => $remember ? Str::random(60) : null,
            'city' => $i % 2 === 0 ? 'Berlin' : null,
            'country' => $i % 2 === 0 ? 'Germany' : null,
            'bio' => $i === 1 ? 'Führt das Team seit 2019 — "mit Freude".' : null,
            'image_name' => $i === 0 ? 'avatar-1.png' : null,
            'phone' => $i === 0 ? '+49 30 1234567' : null,
        ])->save();
        $plain = null;
        if ($twoFactor !== null) {
            $plain = [
                'secret' => two_factor_secret(),
                'recovery_codes' => Collection::times(8, fn () => recovery_code())->all(),
            ];
            $user->forceFill([
                'two_factor_secret' => $encrypter->encrypt($plain['secret']),
                'two_factor_recovery_codes' => $encrypter->encrypt(json_encode($plain['recovery_codes'])),
                'two_factor_confirmed_at' => $twoFactor === 'confirmed' ? Carbon::now() : null,
            ])->save();
        }
        $models[] = $user;
        $users[] = [
            'id' => $user->getKey(),
            'name' => $name,
            'email' => $email,
            'password' => $password,
            'two_factor' => $plain,
            'confirmed' => $twoFactor === 'confirmed',
            'email_verified' => $verified,
            'remember_token' => $user->remember_token,
        ];
    }

    $tokens = [];
    foreach (TOKENS as [$owner, $name, $abilities, $expires, $lastUsed]) {
        // Sanctum 2's HasApiTokens::createToken: forty random characters, only their SHA-256 stored.
        $secret = Str::random(40);
        $token = $models[$owner]->tokens()->create([
            'name' => $name,
            'token' => hash('sha256', $secret),
            'abilities' => $abilities,
            'expires_at' => $expires === null ? null : Carbon::now()->modify($expires),
        ]);
        if ($lastUsed !== null) {
            $token->forceFill(['last_used_at' => Carbon::now()->modify($lastUsed)])->save();
        }
        $tokens[] = [
            'id' => $token->getKey(),
            'plain' => $token->getKey() . '|' . $secret,
            'user_id' => $models[$owner]->getKey(),
            'name' => $name,
            'abilities' => $abilities,
            'expired' => $expires !== null && str_starts_with($expires, '-'),
        ];
    }

    // Laravel 8's DatabaseTokenRepository: an HMAC of random text keyed by the decoded app key, stored bcrypt-hashed.
    Capsule::table('password_resets')->insert([
        'email' => ACCOUNTS[3][1],
        'token' => $hasher->make(hash_hmac('sha256', Str::random(40), $encrypter->getKey())),
        'created_at' => Carbon::now(),
    ]);
    // DatabaseSessionHandler: the session's attributes serialized, then base64.
    Capsule::table('sessions')->insert([
        'id' => Str::random(40),
        'user_id' => $models[0]->getKey(),
        'ip_address' => '203.0.113.7',
        'user_agent' => 'Mozilla/5.0 (X11; Linux x86_64) Firefox/115.0',
        'payload' => base64_encode(serialize([
            '_token' => Str::random(40),
            '_previous' => ['url' => 'https://crm.example.com/contacts'],
            '_flash' => ['old' => [], 'new' => []],
            'login_web_' . sha1('Illuminate\Auth\SessionGuard') => $models[0]->getKey(),
        ])),
        'last_activity' => time(),
    ]);

    return ['users' => $users, 'tokens' => $tokens];
}
