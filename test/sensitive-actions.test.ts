// Every sensitive account action, through both doors (the JSON API and the
// profile pages), on each database. The actions are found in the app's own
// OpenAPI document (each carries the SENSITIVE note), so a new one fails this
// suite until it has a case below. For each action and door, on a fresh
// cookie sign-in (CONTRACT.md: signing in is no confirmation):
//   - without the password: refused (422 naming `password`), nothing changed;
//   - with the password: allowed;
//   - after POST /me/confirm-password, without the password: allowed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SENSITIVE } from '../src/accounts/confirm-password.ts';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { oathtool, submit } from './reliability/helpers/security.ts';

interface Person {
  id: number;
  email: string;
  password: string;
  /** Unused recovery codes, when two-factor is on: each signs in once. */
  recovery: string[];
}

interface Case {
  /** Two-factor must be on first. */
  twoFactor?: boolean;
  /** The API call; `password` is added to the body when the mode sends it. */
  api: { body: Record<string, unknown>; ok: number };
  /** The profile form: its action, its other fields, the status that means done, and the form's id prefix. */
  page: { action: string; form: string; fields: Record<string, string>; ok: number };
  /** Whether the action took effect, read back from outside the session that did it. */
  done(app: TestApp, who: Person, other: Client): Promise<boolean>;
}

const hex = () => randomBytes(4).toString('hex');
const adminGet = (app: TestApp, path: string) => app.get(path);

const CASES: Record<string, Case> = {
  'PATCH /api/v1/me': {
    api: { body: { email: 'NEW' }, ok: 200 },
    page: { action: '/profile', form: 'information', fields: { name: 'Renamed', email: 'NEW' }, ok: 303 },
    done: async (app, who) => (await adminGet(app, `/api/v1/users/${who.id}`)).body.data.email !== who.email,
  },
  'DELETE /api/v1/me': {
    api: { body: {}, ok: 204 },
    page: { action: '/profile/delete', form: 'delete', fields: {}, ok: 303 },
    done: async (app, who) => (await adminGet(app, `/api/v1/users/${who.id}`)).status === 404,
  },
  'POST /api/v1/me/two-factor': {
    api: { body: {}, ok: 200 },
    page: { action: '/profile/two-factor', form: 'enable', fields: {}, ok: 200 },
    // A started set-up stores a secret: the hidden column is read directly, as nothing else shows it.
    done: async (app, who) =>
      Boolean(
        (
          await app.database.db
            .selectFrom('users')
            .select('two_factor_secret')
            .where('id', '=', who.id)
            .executeTakeFirst()
        )?.two_factor_secret,
      ),
  },
  'POST /api/v1/me/two-factor/recovery-codes': {
    twoFactor: true,
    api: { body: {}, ok: 200 },
    page: { action: '/profile/two-factor/recovery-codes', form: 'regenerate', fields: {}, ok: 200 },
    // The old set stops working: its next code no longer signs in.
    done: async (app, who) => (await signIn(app, who)) === null,
  },
  'DELETE /api/v1/me/two-factor': {
    twoFactor: true,
    api: { body: {}, ok: 204 },
    page: { action: '/profile/two-factor/disable', form: 'disable', fields: {}, ok: 303 },
    done: async (app, who) => (await adminGet(app, `/api/v1/users/${who.id}`)).body.data.two_factor_enabled === false,
  },
  'DELETE /api/v1/me/sessions': {
    api: { body: {}, ok: 204 },
    page: { action: '/profile/sessions/delete', form: 'sessions', fields: {}, ok: 303 },
    done: async (_app, _who, other) => (await other.get('/api/v1/me')).status === 401,
  },
  'POST /api/v1/me/tokens': {
    api: { body: { name: 'made here' }, ok: 201 },
    page: { action: '/profile/tokens', form: 'token', fields: { name: 'made here' }, ok: 200 },
    done: async (_app, _who, other) => ((await other.get('/api/v1/me/tokens')).body.data as unknown[]).length > 0,
  },
};

/** A cookie sign-in (the second factor with the next recovery code); null when it does not get through. */
async function signIn(app: TestApp, who: Person): Promise<Client | null> {
  const client = app.client();
  const reply = await client.post('/api/v1/auth/login', { email: who.email, password: who.password });
  if (reply.status !== 200) return null;
  if (reply.body.two_factor) {
    const code = who.recovery[0];
    const passed = await client.post('/api/v1/auth/two-factor-challenge', { recovery_code: code });
    if (passed.status !== 200) return null;
    who.recovery.shift();
  }
  return client;
}

/** A new agent, with two-factor on when asked (set up with a token and a code from oathtool). */
async function person(app: TestApp, twoFactor = false): Promise<Person> {
  const who: Person = { id: 0, email: `s-${hex()}@example.com`, password: `sensitive pass ${hex()}`, recovery: [] };
  const created = await app.post('/api/v1/users', { name: 'Sensitive', email: who.email, password: who.password });
  assert.equal(created.status, 201, created.text);
  who.id = Number(created.body.data.id);
  if (!twoFactor) return who;
  const issued = await app.request('POST', '/api/v1/auth/token', {
    json: { email: who.email, password: who.password, device_name: 'setup' },
    token: null,
  });
  const token = issued.body.token as string;
  const setup = await app.request('POST', '/api/v1/me/two-factor', { json: { password: who.password }, token });
  assert.equal(setup.status, 200, setup.text);
  const confirmed = await app.request('POST', '/api/v1/me/two-factor/confirm', {
    json: { code: oathtool(setup.body.secret, Date.now()) },
    token,
  });
  assert.equal(confirmed.status, 200, confirmed.text);
  who.recovery = confirmed.body.recovery_codes;
  return who;
}

type Mode = 'none' | 'password' | 'confirmed';

/** Performs the action through one door; answers the reply. */
async function perform(
  client: Client,
  door: 'api' | 'page',
  key: string,
  c: Case,
  who: Person,
  mode: Mode,
): Promise<Reply> {
  const password: Record<string, string> = mode === 'password' ? { password: who.password } : {};
  const fill = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === 'NEW' ? `moved-${hex()}@example.com` : v]));
  if (door === 'api') {
    const [method, path] = key.split(' ') as [string, string];
    return client.request(method, path, { json: { ...fill(c.api.body), ...password } });
  }
  return submit(client, '/profile', c.page.action, { ...(fill(c.page.fields) as Record<string, string>), ...password });
}

for (const dialect of DIALECTS) {
  describe(`sensitive account actions (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app?.close());

    test('the API reference marks exactly the sensitive routes this suite covers, the four of CONTRACT.md among them', async () => {
      const doc = (await app.get('/api/v1/openapi.json')).body;
      const marked: string[] = [];
      for (const [path, item] of Object.entries(
        doc.paths as Record<string, Record<string, { description?: string }>>,
      )) {
        for (const [method, op] of Object.entries(item))
          if (op.description?.includes(SENSITIVE)) marked.push(`${method.toUpperCase()} ${path}`);
      }
      assert.deepEqual(
        marked.sort(),
        Object.keys(CASES).sort(),
        'every sensitive route has a case here, and every case is marked',
      );
      for (const named of [
        'DELETE /api/v1/me',
        'DELETE /api/v1/me/two-factor',
        'POST /api/v1/me/two-factor/recovery-codes',
        'DELETE /api/v1/me/sessions',
      ]) {
        assert.ok(marked.includes(named), `${named} is sensitive`);
      }
    });

    for (const [key, c] of Object.entries(CASES)) {
      for (const door of ['api', 'page'] as const) {
        for (const mode of ['password', 'confirmed'] as const) {
          test(`${key} through the ${door === 'api' ? 'API' : 'pages'}: refused on a fresh sign-in, allowed ${mode === 'password' ? 'with the password' : 'after confirm-password'}`, async () => {
            const who = await person(app, c.twoFactor);
            const client = (await signIn(app, who))!;
            const other = (await signIn(app, who))!;
            assert.ok(client && other, 'signed in twice');

            const refused = await perform(client, door, key, c, who, 'none');
            assert.equal(refused.status, 422, `without a password: ${refused.text.slice(0, 300)}`);
            if (door === 'api') {
              assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
              assert.ok(refused.body.errors?.password, 'the problem names password');
            } else {
              assert.match(
                refused.text,
                new RegExp(`id="${c.page.form}-password-error">is required to confirm it is you<`),
                'the form says the password is needed',
              );
            }
            assert.equal(await c.done(app, who, other), false, 'nothing changed');

            if (mode === 'confirmed') {
              const confirmed = await client.post('/api/v1/me/confirm-password', { password: who.password });
              assert.equal(confirmed.status, 204, confirmed.text);
            }
            const allowed = await perform(client, door, key, c, who, mode === 'password' ? 'password' : 'none');
            assert.equal(allowed.status, door === 'api' ? c.api.ok : c.page.ok, allowed.text.slice(0, 300));
            assert.equal(await c.done(app, who, other), true, 'the action took effect');
          });
        }
      }
    }
  });
}
