// Laravel's formats, checked against Laravel's own Encrypter run by PHP (test/laravel/crypt.php, Debian's
// php-illuminate-encryption), both ways: what PHP encrypts Node decrypts, and what Node encrypts PHP decrypts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  findRecoveryCode,
  generateRecoveryCode,
  LaravelDecryptError,
  laravelDecrypt,
  laravelEncrypt,
  parseAppKey,
  parseSanctumToken,
  replaceRecoveryCode,
  sanctumHash,
} from './laravel.ts';

const CRYPT = fileURLToPath(new URL('../../test/laravel/crypt.php', import.meta.url));

/** Why the PHP comparisons cannot run here, or false when they can. */
function phpMissing(): string | false {
  const probe = spawnSync(
    'php',
    [
      '-r',
      'require "Illuminate/Encryption/autoload.php"; echo class_exists(Illuminate\\Encryption\\Encrypter::class);',
    ],
    { encoding: 'utf8' },
  );
  if (probe.error) return 'php is not installed (apt-get install php-cli php-illuminate-encryption)';
  if (probe.stdout.trim() !== '1')
    return 'PHP has no Laravel Encrypter (apt-get install php-illuminate-encryption php-illuminate-collections)';
  return false;
}
const skip = phpMissing();

/** Runs crypt.php; its JSON answer, or a thrown Error carrying PHP's own message. */
function php(command: string, options: Record<string, string>): Record<string, unknown> {
  const args = Object.entries(options).map(([name, value]) => `--${name}=${value}`);
  const run = spawnSync('php', [CRYPT, command, ...args], { encoding: 'utf8' });
  const answer = JSON.parse(run.stdout || '{}') as Record<string, unknown>;
  if (run.status !== 0) throw new Error(`crypt.php ${command}: ${String(answer.message ?? run.stderr)}`);
  return answer;
}

const phpEncrypt = (key: Buffer, plain: string, serialize: boolean, cipher: string) =>
  php('encrypt', { key: `base64:${key.toString('base64')}`, plain, serialize: serialize ? '1' : '0', cipher })
    .payload as string;

const phpDecrypt = (key: Buffer, payload: string, unserialize: boolean, cipher: string) =>
  php('decrypt', { key: `base64:${key.toString('base64')}`, payload, unserialize: unserialize ? '1' : '0', cipher });

const fieldsOf = (payload: string) =>
  JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Record<string, string>;
const payloadOf = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields)).toString('base64');

/** One base64 character changed for another, so the text stays base64 and only the content differs. */
const flipFirst = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);

const CIPHERS = [
  { cipher: 'AES-256-CBC', keyBytes: 32 },
  { cipher: 'AES-128-CBC', keyBytes: 16 },
  { cipher: 'AES-256-GCM', keyBytes: 32 },
  { cipher: 'AES-128-GCM', keyBytes: 16 },
] as const;

const TEXTS = ['JBSWY3DPEHPK3PXP', 'héllo wörld — 😀 日本語 «ß»', '', 'a "quoted"; s:3:"abc"; text\nwith a line break'];

test('parseAppKey reads base64: and raw keys and refuses lengths no cipher has', () => {
  const key = randomBytes(32);
  assert.deepEqual(parseAppKey(`base64:${key.toString('base64')}`), key);
  assert.deepEqual(parseAppKey(`base64:${key.toString('base64')}\n`), key, 'a trailing newline from a .env file');
  const short = randomBytes(16);
  assert.deepEqual(parseAppKey(`base64:${short.toString('base64')}`), short);
  assert.deepEqual(parseAppKey('0123456789abcdef0123456789abcdef'), Buffer.from('0123456789abcdef0123456789abcdef'));
  assert.deepEqual(parseAppKey(`base64:${key.toString('base64')}`, { cipher: 'aes-256-gcm' }), key);
  assert.throws(() => parseAppKey(`base64:${randomBytes(24).toString('base64')}`), /LARAVEL_APP_KEY is 24 bytes/);
  assert.throws(() => parseAppKey('too short'), /LARAVEL_APP_KEY is 9 bytes/);
  assert.throws(() => parseAppKey(''), /LARAVEL_APP_KEY is empty/);
  assert.throws(() => parseAppKey('base64:'), /LARAVEL_APP_KEY is empty/);
  assert.throws(() => parseAppKey('base64:not*base64'), /LARAVEL_APP_KEY: the text after base64: is not base64/);
  assert.throws(
    () => parseAppKey(`base64:${short.toString('base64')}`, { cipher: 'AES-256-CBC' }),
    /LARAVEL_APP_KEY is 16 bytes, but AES-256-CBC needs a 32-byte key/,
  );
  assert.throws(() => parseAppKey(`base64:${key.toString('base64')}`, { cipher: 'AES-256-CTR' }), /Unsupported/);
});

for (const { cipher, keyBytes } of CIPHERS) {
  for (const serialize of [true, false]) {
    test(`${cipher}, ${serialize ? 'serialized' : 'not serialized'}: PHP → Node and Node → PHP`, { skip }, () => {
      const key = randomBytes(keyBytes);
      for (const plain of TEXTS) {
        const fromPhp = phpEncrypt(key, plain, serialize, cipher);
        assert.equal(laravelDecrypt(fromPhp, key, cipher), plain, `PHP's payload of ${JSON.stringify(plain)}`);

        const fromNode = laravelEncrypt(plain, key, { serialize, cipher });
        assert.deepEqual(Object.keys(fieldsOf(fromNode)), Object.keys(fieldsOf(fromPhp)), 'the same keys in order');
        assert.deepEqual(phpDecrypt(key, fromNode, serialize, cipher), { type: 'string', value: plain });
        if (serialize) {
          // The wrapper Node wrote, as PHP sees it: N counts UTF-8 bytes.
          const wrapped = `s:${Buffer.byteLength(plain)}:"${plain}";`;
          assert.deepEqual(phpDecrypt(key, fromNode, false, cipher), { type: 'string', value: wrapped });
        }
      }
    });
  }
}

test('Node writes the payload Laravel 8 writes: MAC for CBC, tag for GCM, slashes unescaped', () => {
  const key = randomBytes(32);
  const cbc = Buffer.from(laravelEncrypt('x'.repeat(200), key, { serialize: true }), 'base64').toString('utf8');
  assert.match(cbc, /^\{"iv":"[A-Za-z0-9+/]{22}==","value":"[A-Za-z0-9+/=]+","mac":"[0-9a-f]{64}","tag":""\}$/);
  const gcm = fieldsOf(laravelEncrypt('x', key, { serialize: false, cipher: 'AES-256-GCM' }));
  assert.equal(gcm.mac, '');
  assert.equal(Buffer.from(gcm.iv!, 'base64').length, 12);
  assert.equal(Buffer.from(gcm.tag!, 'base64').length, 16);
  assert.throws(() => laravelEncrypt('\ud800', key, { serialize: false }), /lone surrogate/);
  assert.throws(() => laravelEncrypt('x', randomBytes(16), { serialize: false, cipher: 'AES-256-CBC' }), /16 bytes/);
});

test('a CBC payload with its mac, value or iv altered, or a tag added, is refused', { skip }, () => {
  const key = randomBytes(32);
  const payload = phpEncrypt(key, 'JBSWY3DPEHPK3PXP', true, 'AES-256-CBC');
  const fields = fieldsOf(payload);
  assert.equal(laravelDecrypt(payloadOf(fields), key), 'JBSWY3DPEHPK3PXP', 'the payload as PHP made it');
  for (const name of ['mac', 'value', 'iv']) {
    const altered = payloadOf({ ...fields, [name]: flipFirst(fields[name]!) });
    assert.throws(() => laravelDecrypt(altered, key), { name: 'LaravelDecryptError', message: 'The MAC is invalid.' });
    assert.throws(() => phpDecrypt(key, altered, true, 'AES-256-CBC'), /The MAC is invalid/, `PHP agrees on ${name}`);
  }
  const tagged = payloadOf({ ...fields, tag: randomBytes(16).toString('base64') });
  assert.throws(() => laravelDecrypt(tagged, key), /does not support AEAD/);
  assert.throws(() => laravelDecrypt(payloadOf({ ...fields, iv: randomBytes(12).toString('base64') }), key), {
    message: 'The payload is invalid.',
  });
  const { mac: _, ...withoutMac } = fields;
  assert.throws(() => laravelDecrypt(payloadOf(withoutMac), key), { message: 'The payload is invalid.' });
  assert.throws(() => laravelDecrypt('not a payload', key), { message: 'The payload is invalid.' });
});

test('a GCM payload with its value, tag or iv altered, or its tag shortened, is refused', { skip }, () => {
  const key = randomBytes(32);
  const fields = fieldsOf(phpEncrypt(key, 'JBSWY3DPEHPK3PXP', true, 'AES-256-GCM'));
  assert.equal(laravelDecrypt(payloadOf(fields), key, 'AES-256-GCM'), 'JBSWY3DPEHPK3PXP', 'as PHP made it');
  for (const name of ['value', 'tag', 'iv']) {
    const altered = payloadOf({ ...fields, [name]: flipFirst(fields[name]!) });
    assert.throws(() => laravelDecrypt(altered, key, 'AES-256-GCM'), { message: 'Could not decrypt the data.' });
  }
  const shortTag = Buffer.from(fields.tag!, 'base64').subarray(0, 12).toString('base64');
  assert.throws(() => laravelDecrypt(payloadOf({ ...fields, tag: shortTag }), key, 'AES-256-GCM'), {
    message: 'Could not decrypt the data.',
  });
});

test('a payload made with another key is refused, in CBC and in GCM', { skip }, () => {
  for (const cipher of ['AES-256-CBC', 'AES-256-GCM']) {
    const payload = phpEncrypt(randomBytes(32), 'JBSWY3DPEHPK3PXP', true, cipher);
    assert.throws(() => laravelDecrypt(payload, randomBytes(32), cipher), LaravelDecryptError, cipher);
  }
});

test('PHP serialized values other than strings are refused, never unserialized', () => {
  const key = randomBytes(32);
  const cases: [string, RegExp][] = [
    ['a:1:{i:0;s:1:"x";}', /serialized array/],
    ['O:8:"stdClass":1:{s:1:"a";i:1;}', /serialized object/],
    ['C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}', /serialized object/],
    ['i:42;', /serialized integer/],
    ['d:0.5;', /serialized float/],
    ['b:1;', /serialized boolean/],
    ['N;', /serialized null/],
    ['s:4:"abc";', /length is wrong/],
    ['s:2:"abc";', /length is wrong/],
    ['s:3:"abc";trailing', /length is wrong/],
  ];
  for (const [plain, refusal] of cases) {
    const payload = laravelEncrypt(plain, key, { serialize: false });
    assert.throws(() => laravelDecrypt(payload, key), { name: 'LaravelDecryptError', message: refusal }, plain);
  }
  // Text that only starts like a serialized value is plain text.
  for (const plain of ['a: b', 'i:42', 'N; and more', 'b:2;']) {
    assert.equal(laravelDecrypt(laravelEncrypt(plain, key, { serialize: false }), key), plain);
  }
});

test('text that is not UTF-8 is refused rather than changed', { skip }, () => {
  const key = randomBytes(32);
  const code =
    'require "Illuminate/Encryption/autoload.php";' +
    'echo (new Illuminate\\Encryption\\Encrypter(base64_decode($argv[1]), "AES-256-CBC"))->encrypt("\\xff\\xfe");';
  const payload = spawnSync('php', ['-r', code, key.toString('base64')], { encoding: 'utf8' }).stdout;
  assert.equal(fieldsOf(payload).mac?.length, 64, 'PHP made a payload');
  assert.throws(() => laravelDecrypt(payload, key), { message: 'The decrypted text is not UTF-8' });
});

test("Fortify's secret and recovery codes made by PHP decrypt, and a code is found", { skip }, () => {
  const key = randomBytes(32);
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  assert.equal(laravelDecrypt(phpEncrypt(key, secret, true, 'AES-256-CBC'), key), secret);

  const made = php('recovery-codes', { key: `base64:${key.toString('base64')}` });
  const plain = laravelDecrypt(made.payload as string, key);
  assert.equal(plain, made.plain);
  const codes = JSON.parse(plain) as string[];
  assert.equal(codes.length, 8);
  for (const code of codes) assert.match(code, /^[A-Za-z0-9]{10}-[A-Za-z0-9]{10}$/);

  assert.equal(findRecoveryCode(plain, codes[3]!), codes[3]);
  assert.equal(findRecoveryCode(plain, codes[7]!), codes[7]);
  assert.equal(findRecoveryCode(plain, `${codes[3]}x`), null);
  assert.equal(findRecoveryCode(plain, generateRecoveryCode()), null);
  assert.equal(findRecoveryCode(plain, ''), null);
  assert.equal(findRecoveryCode('not json', codes[3]!), null);
  assert.equal(findRecoveryCode('{"a":"b"}', 'b'), null, 'an object is not a list of codes');
});

test('replaceRecoveryCode, encrypted by Node, reads in PHP with exactly the used code changed', { skip }, () => {
  const key = randomBytes(32);
  const made = php('recovery-codes', { key: `base64:${key.toString('base64')}` });
  const plain = laravelDecrypt(made.payload as string, key);
  const codes = JSON.parse(plain) as string[];

  const replaced = replaceRecoveryCode(plain, codes[2]!);
  const read = phpDecrypt(key, laravelEncrypt(replaced, key, { serialize: true }), true, 'AES-256-CBC');
  assert.equal(read.type, 'string');
  const after = JSON.parse(read.value as string) as string[];
  assert.equal(after.length, codes.length);
  after.forEach((code, i) => {
    if (i === 2) {
      assert.notEqual(code, codes[2]);
      assert.match(code, /^[A-Za-z0-9]{10}-[A-Za-z0-9]{10}$/);
    } else {
      assert.equal(code, codes[i], `code ${i} is kept in its place`);
    }
  });
  assert.equal(replaced.replace(after[2]!, codes[2]!), plain, 'nothing else in the text changed');
  assert.equal(findRecoveryCode(replaced, codes[2]!), null, 'the used code no longer works');
});

test('replaceRecoveryCode is str_replace: every occurrence, a literal replacement, nothing for an empty code', () => {
  const plain = '["aaaaaaaaaa-bbbbbbbbbb","cccccccccc-dddddddddd","aaaaaaaaaa-bbbbbbbbbb"]';
  assert.equal(
    replaceRecoveryCode(plain, 'aaaaaaaaaa-bbbbbbbbbb', '$&-$1'),
    '["$&-$1","cccccccccc-dddddddddd","$&-$1"]',
  );
  assert.equal(replaceRecoveryCode(plain, 'zzzzzzzzzz-zzzzzzzzzz'), plain);
  assert.equal(replaceRecoveryCode(plain, ''), plain);
});

test('generateRecoveryCode uses all of Str::random’s 62 characters and nothing else', () => {
  const codes = Array.from({ length: 500 }, generateRecoveryCode);
  for (const code of codes) assert.match(code, /^[A-Za-z0-9]{10}-[A-Za-z0-9]{10}$/);
  assert.equal(new Set(codes).size, codes.length);
  assert.equal(new Set(codes.join('').replaceAll('-', '')).size, 62);
});

test('parseSanctumToken reads id|secret and the old bare secret, and refuses the rest', () => {
  const cases: [string, { id: bigint | null; secret: string } | null][] = [
    ['7|Abc123', { id: 7n, secret: 'Abc123' }],
    ['12|a|b', { id: 12n, secret: 'a|b' }],
    ['007|s', { id: 7n, secret: 's' }],
    ['18446744073709551615|s', { id: 18446744073709551615n, secret: 's' }],
    ['OldTokenWithoutAnId40Characters000000000', { id: null, secret: 'OldTokenWithoutAnId40Characters000000000' }],
    ['18446744073709551616|s', null],
    ['', null],
    ['|abc', null],
    ['7|', null],
    ['x7|abc', null],
    ['-1|abc', null],
    [' 7|abc', null],
  ];
  for (const [bearer, expected] of cases) assert.deepEqual(parseSanctumToken(bearer), expected, bearer);
});

test('sanctumHash is SHA-256 in hex, as personal_access_tokens.token holds it', { skip }, () => {
  assert.equal(sanctumHash('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  for (const secret of ['Abc123xyz', 'tëst-😀']) {
    const fromPhp = spawnSync('php', ['-r', 'echo hash("sha256", $argv[1]);', secret], { encoding: 'utf8' }).stdout;
    assert.equal(sanctumHash(secret), fromPhp, secret);
  }
});
