<?php

// The original service's migrations, in the order `php artisan migrate` ran them: Laravel 8's own,
// Fortify's two-factor columns, Sanctum's tokens (with the expires_at column of its later migration),
// the sessions table Jetstream's installer publishes, then the app's InfyOm tables and profile columns.
// The seed's tables are the truth for columns and lengths: the users table keeps the seed's
// `frist_name` spelling and has none of Jetstream's team or profile-photo columns.
// Each entry is [migration name as recorded in `migrations`, batch, up(schema, options)].

declare(strict_types=1);

use Illuminate\Database\Schema\Blueprint;
use Illuminate\Database\Schema\Builder;

/** @return list<array{0: string, 1: int, 2: Closure(Builder, array): void}> */
function laravel_migrations(): array
{
    return [
        ['2014_10_12_000000_create_users_table', 1, function (Builder $schema): void {
            $schema->create('users', function (Blueprint $table): void {
                $table->id();
                $table->string('name');
                $table->string('frist_name')->nullable();
                $table->string('last_name')->nullable();
                $table->string('email')->unique();
                $table->timestamp('email_verified_at')->nullable();
                $table->string('password');
                $table->rememberToken();
                $table->timestamps();
            });
        }],
        ['2014_10_12_100000_create_password_resets_table', 1, function (Builder $schema): void {
            $schema->create('password_resets', function (Blueprint $table): void {
                $table->string('email')->index();
                $table->string('token');
                $table->timestamp('created_at')->nullable();
            });
        }],
        // `after` places the columns behind password on MariaDB; SQLite ignores it and appends them,
        // so the two databases differ in column order exactly as two real installations would.
        ['2014_10_12_200000_add_two_factor_columns_to_users_table', 1, function (Builder $schema): void {
            $schema->table('users', function (Blueprint $table): void {
                $table->text('two_factor_secret')->after('password')->nullable();
                $table->text('two_factor_recovery_codes')->after('two_factor_secret')->nullable();
                $table->timestamp('two_factor_confirmed_at')->after('two_factor_recovery_codes')->nullable();
            });
        }],
        ['2019_08_19_000000_create_failed_jobs_table', 1, function (Builder $schema): void {
            $schema->create('failed_jobs', function (Blueprint $table): void {
                $table->id();
                $table->string('uuid')->unique();
                $table->text('connection');
                $table->text('queue');
                $table->longText('payload');
                $table->longText('exception');
                $table->timestamp('failed_at')->useCurrent();
            });
        }],
        ['2019_12_14_000001_create_personal_access_tokens_table', 1, function (Builder $schema): void {
            $schema->create('personal_access_tokens', function (Blueprint $table): void {
                $table->id();
                $table->morphs('tokenable');
                $table->string('name');
                $table->string('token', 64)->unique();
                $table->text('abilities')->nullable();
                $table->timestamp('last_used_at')->nullable();
                $table->timestamp('expires_at')->nullable();
                $table->timestamps();
            });
        }],
        ['2021_03_15_093012_create_sessions_table', 1, function (Builder $schema): void {
            $schema->create('sessions', function (Blueprint $table): void {
                $table->string('id')->primary();
                $table->foreignId('user_id')->nullable()->index();
                $table->string('ip_address', 45)->nullable();
                $table->text('user_agent')->nullable();
                $table->text('payload');
                $table->integer('last_activity')->index();
            });
        }],
        ['2021_04_02_101544_create_contacts_table', 2, function (Builder $schema, array $options): void {
            $schema->create('contacts', function (Blueprint $table) use ($options): void {
                contact_columns($table, $options['foreign']);
                $table->timestamps();
            });
        }],
        // The seed lists the inquiry's own fields after updated_at, so they follow the timestamps here.
        ['2021_04_02_101610_create_inquiries_table', 2, function (Builder $schema): void {
            $schema->create('inquiries', function (Blueprint $table): void {
                contact_columns($table, false);
                $table->timestamps();
                $table->string('inquiry_country')->nullable();
                $table->boolean('inquiry_status')->nullable();
                $table->boolean('status')->nullable();
                $table->boolean('inquiry_type')->nullable();
                $table->integer('assigned_to')->nullable();
                $table->dateTime('assigned_date')->nullable();
                $table->bigInteger('ticket_id')->nullable();
                $table->dateTime('ticket_date')->nullable();
            });
        }],
        ['2021_06_21_140233_add_profile_columns_to_users_table', 3, function (Builder $schema): void {
            $schema->table('users', function (Blueprint $table): void {
                $table->string('address')->nullable();
                $table->string('city', 100)->nullable();
                $table->string('country', 100)->nullable();
                $table->string('bio')->nullable();
                $table->string('image_name', 100)->nullable();
                $table->string('phone', 50)->nullable();
            });
        }],
    ];
}

/** The columns InfyOm's generator wrote for the contact fields, shared by contacts and inquiries. */
function contact_columns(Blueprint $table, bool $foreignBudget): void
{
    $table->id();
    $table->string('name')->nullable();
    $table->string('email')->nullable();
    $table->string('phone', 100)->nullable();
    $table->string('occupation', 100)->nullable();
    $table->string('address')->nullable();
    $table->string('country', 100)->nullable();
    $table->string('city', 100)->nullable();
    $table->integer('service_id')->nullable();
    $table->integer('source_id')->nullable();
    $table->string('detail', 500)->nullable();
    // --foreign: a column type Leadbook does not expect, for the takeover check to report.
    if ($foreignBudget) {
        $table->decimal('budget', 12, 2)->nullable();
    } else {
        $table->string('budget')->nullable();
    }
    $table->integer('created_by')->nullable();
}
