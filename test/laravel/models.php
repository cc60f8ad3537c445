<?php

// The original service's Eloquent models, as its code declares them: Jetstream's App\Models\User (with
// Sanctum's HasApiTokens relation), Sanctum's token model, and the models InfyOm's generator writes for
// contacts and inquiries (fillable fields and casts from the field types). The namespace matters:
// Sanctum stores the user's class name in personal_access_tokens.tokenable_type.

declare(strict_types=1);

namespace App\Models;

use Illuminate\Database\Eloquent\Model;
use Illuminate\Database\Eloquent\Relations\MorphMany;
use Illuminate\Database\Eloquent\Relations\MorphTo;

class User extends Model
{
    protected $table = 'users';
    protected $guarded = [];
    protected $hidden = ['password', 'remember_token', 'two_factor_recovery_codes', 'two_factor_secret'];
    protected $casts = ['email_verified_at' => 'datetime'];

    public function tokens(): MorphMany
    {
        return $this->morphMany(PersonalAccessToken::class, 'tokenable');
    }
}

/** Laravel\Sanctum\PersonalAccessToken's table, casts and fillable fields. */
class PersonalAccessToken extends Model
{
    protected $table = 'personal_access_tokens';
    protected $fillable = ['name', 'token', 'abilities', 'expires_at'];
    protected $hidden = ['token'];
    protected $casts = ['abilities' => 'json', 'last_used_at' => 'datetime', 'expires_at' => 'datetime'];

    public function tokenable(): MorphTo
    {
        return $this->morphTo('tokenable');
    }
}

class Contact extends Model
{
    public const FIELDS = [
        'name' => 'string',
        'email' => 'string',
        'phone' => 'string',
        'occupation' => 'string',
        'address' => 'string',
        'country' => 'string',
        'city' => 'string',
        'service_id' => 'integer',
        'source_id' => 'integer',
        'detail' => 'string',
        'budget' => 'string',
        'created_by' => 'integer',
    ];

    protected $table = 'contacts';

    public function __construct(array $attributes = [])
    {
        $this->fillable = array_keys(static::FIELDS);
        $this->casts = ['id' => 'integer'] + static::FIELDS;
        parent::__construct($attributes);
    }
}

class Inquiry extends Contact
{
    public const FIELDS = Contact::FIELDS + [
        'inquiry_country' => 'string',
        'inquiry_status' => 'boolean',
        'status' => 'boolean',
        'inquiry_type' => 'boolean',
        'assigned_to' => 'integer',
        'assigned_date' => 'datetime',
        'ticket_id' => 'integer',
        'ticket_date' => 'datetime',
    ];

    protected $table = 'inquiries';
}
