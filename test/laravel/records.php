<?php

// Contact and inquiry values as years of use leave them: Unicode in every script, quotes and markup,
// empty strings beside NULL, values at the seed's maximum lengths, e-mail fields that hold no address
// (the service only checked `string|max`), references to users that no longer exist, ticket numbers
// beyond 2^53, and timestamps in the app's zone, some in the hour a DST change repeats.
// Every value comes from one seeded Mt19937, so `--seed=N` gives the same rows each run.

declare(strict_types=1);

use Carbon\Carbon;
use Random\Engine\Mt19937;
use Random\Randomizer;

final class RecordValues
{
    private const NAMES = [
        'Anna Schmidt', 'Zoë Saldaña', 'José Müller-Łukasiewicz', '李小龍', '山田 太郎', 'محمد الأحمد', 'Ægir Þórsson',
        "Siobhán O'Brien", 'Robert "Bob" Tables', "Robert'); DROP TABLE contacts;--", 'Party 🎉 Planner', 'Back\\slash',
        'Ngọc Trâm Nguyễn', 'Дмитрий Иванов', 'Σωκράτης Παπαδόπουλος', '  spaced  out  ', 'İlkay Gündoğan', 'ß Straße',
    ];
    private const EMAILS = [
        'anna@example.com', 'ZOE@EXAMPLE.DE', "o'reilly+crm@example.co.uk", 'not an e-mail', 'δοκιμή@παράδειγμα.δοκιμή',
        'first.last@sub.example.org', 'dup@example.com', 'dup@example.com', 'trailing-space@example.com ',
    ];
    private const PHONES = ['+49 30 1234567', '(555) 010-1234', '0044-20-7946-0958 ext. 12', '+81 3-1234-5678', '12'];
    private const OCCUPATIONS = [
        'Engineer', 'Geschäftsführerin', 'CTO & co-founder', 'Student', '<b>Owner</b>', 'Arzt',
    ];
    private const ADDRESSES = ["Hauptstraße 5\n10115 Berlin", '1 Infinite Loop', 'Rue de l\'Église 3', '東京都港区 1-2-3'];
    private const COUNTRIES = ['Germany', 'Deutschland', 'Türkiye', 'United Kingdom', 'Việt Nam', '日本', 'USA', 'FR'];
    private const CITIES = ['Berlin', 'München', 'İstanbul', 'London', 'Hà Nội', '東京', 'São Paulo', 'Zürich'];
    private const DETAILS = [
        'Wants a quote for 50 seats.', "Call back after 3pm; \"urgent\" they said.", '<script>alert(1)</script> & co',
        "Line one\nLine two\r\nLine three", 'Tab\tseparated', 'Emoji only: 👍🏽👨‍👩‍👧', 'NULL', '0', 'false',
    ];
    private const BUDGETS = ['5000', '$5,000', '5k–10k €', '  1200 ', 'unknown', '0', '-1', '1e3', '99999999999.99'];
    private const SPECIALS = 25;

    private Randomizer $random;

    public function __construct(int $seed, private int $userCount, private bool $foreignBudget)
    {
        $this->random = new Randomizer(new Mt19937($seed));
    }

    /**
     * The attributes of the i-th contact (from 0); a few kinds of row recur every SPECIALS rows so that
     * even a small fixture holds each of them.
     */
    public function contact(int $i): array
    {
        $special = $i % self::SPECIALS;
        $row = [
            'name' => $this->text(self::NAMES, 255),
            'email' => $this->text(self::EMAILS, 255, fn () => 'lead' . $this->int(1, 99999) . '@example.com'),
            'phone' => $this->text(self::PHONES, 100),
            'occupation' => $this->text(self::OCCUPATIONS, 100),
            'address' => $this->text(self::ADDRESSES, 255),
            'country' => $this->text(self::COUNTRIES, 100),
            'city' => $this->text(self::CITIES, 100),
            'service_id' => $this->chance(10) ? null : $this->int(1, 9),
            'source_id' => $this->chance(10) ? null : $this->int(1, 9),
            'detail' => $this->text(self::DETAILS, 500),
            'budget' => $this->foreignBudget ? $this->decimal() : $this->text(self::BUDGETS, 255),
            'created_by' => $this->userReference(),
        ];
        if ($special === 0) {
            foreach (['name' => 255, 'email' => 255, 'phone' => 100, 'occupation' => 100, 'address' => 255,
                'country' => 100, 'city' => 100, 'detail' => 500] as $field => $max) {
                $row[$field] = self::longest($max);
            }
        } elseif ($special === 1) {
            $row = array_map(fn () => null, $row);
        } elseif ($special === 2) {
            foreach ($row as $field => $value) {
                $text = is_string($value) && !($field === 'budget' && $this->foreignBudget);
                $row[$field] = $text ? '' : $value;
            }
        } elseif ($special === 3) {
            $row['created_by'] = [0, 999, 2147483647][$this->int(0, 2)];
        }
        return $row;
    }

    /** The i-th inquiry: a contact's fields plus the inquiry's own. */
    public function inquiry(int $i, string $timezone): array
    {
        $special = $i % self::SPECIALS;
        $row = $this->contact($i) + [
            'inquiry_country' => $this->text(self::COUNTRIES, 255),
            'inquiry_status' => $this->flag(),
            'status' => $this->flag(),
            'inquiry_type' => $this->flag(),
            'assigned_to' => $this->userReference(),
            'assigned_date' => $this->chance(30) ? null : $this->moment($timezone),
            'ticket_id' => $this->chance(40) ? null : $this->int(100000, 999999),
            'ticket_date' => $this->chance(40) ? null : $this->moment($timezone),
        ];
        if ($special === 3) {
            $row['assigned_to'] = [0, 999, 2147483647][$this->int(0, 2)];
        } elseif ($special === 4) {
            // Ticket numbers from a system with 64-bit ids: exact only as integers, never as doubles.
            $big = [9007199254740993, PHP_INT_MAX, 18014398509481985, 9007199254740992 + $this->int(3, 999)];
            $row['ticket_id'] = $big[$this->int(0, 3)];
        } elseif ($special === 5) {
            $row['inquiry_status'] = $row['status'] = $row['inquiry_type'] = null;
        }
        return $row;
    }

    /**
     * created_at and updated_at as Eloquent would have written them, or null for a row that came in
     * without Eloquent. Special rows fall in the hour a DST change repeats in Europe/Berlin.
     *
     * @return array{0: ?Carbon, 1: ?Carbon}
     */
    public function timestamps(int $i, string $timezone): array
    {
        $special = $i % self::SPECIALS;
        if ($special === 6) {
            return [null, null];
        }
        $created = $special === 7 ? $this->repeatedHour($timezone) : $this->moment($timezone);
        $updated = $this->chance(40) ? $created->copy() : $created->copy()->addSeconds($this->int(1, 90 * 86400));
        return [$created, $updated];
    }

    /** An instant between April 2021 and the end of 2023, in the app's zone. */
    public function moment(string $timezone): Carbon
    {
        return Carbon::createFromTimestamp($this->int(1617235200, 1703980800), $timezone);
    }

    /** 2021-10-31 00:00 to 02:00 UTC: 02:00–02:59 twice on Berlin's clocks, once in summer and once in winter time. */
    private function repeatedHour(string $timezone): Carbon
    {
        return Carbon::createFromTimestamp(1635638400 + $this->int(0, 7199), $timezone);
    }

    private function text(array $pool, int $max, ?Closure $make = null): ?string
    {
        $roll = $this->int(1, 100);
        if ($roll <= 8) {
            return null;
        }
        if ($roll <= 12) {
            return '';
        }
        if ($roll <= 14) {
            return self::longest($max);
        }
        if ($make !== null && $roll <= 60) {
            return $make();
        }
        return $pool[$this->int(0, count($pool) - 1)];
    }

    /** Exactly $max characters, with two-, three- and four-byte ones, as a `max:$max` rule would let through. */
    private static function longest(int $max): string
    {
        return mb_substr(str_repeat('Zoë 東京 😀 ', intdiv($max, 6) + 1), 0, $max);
    }

    private function decimal(): ?string
    {
        return $this->chance(10) ? null : sprintf('%d.%02d', $this->int(0, 9999999999), $this->int(0, 99));
    }

    private function flag(): ?bool
    {
        return [null, true, false][$this->int(0, 2)];
    }

    private function userReference(): ?int
    {
        return $this->chance(15) ? null : $this->int(1, $this->userCount);
    }

    private function chance(int $percent): bool
    {
        return $this->int(1, 100) <= $percent;
    }

    private function int(int $min, int $max): int
    {
        return $this->random->getInt($min, $max);
    }
}
