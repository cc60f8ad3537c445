// Deactivating a teammate and deleting one who still has work, over HTTP on
// each database (CONTRACT.md, "Roles"): a deactivated account cannot sign in,
// its tokens and sessions stop, its name stays on its work, and the audit log
// says who did it; the last active admin stays; a user with assigned inquiries
// is deleted only with `reassign_to`, another active user, who gets the work
// in the same step, through the API and through the delete page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import type { Json } from './helpers/json.ts';
import { teammate } from './helpers/team.ts';
import {
  assertProblem,
  oathtool,
  pageSignIn,
  REMEMBER,
  SESSION,
  submit,
  waitForRoom,
} from './reliability/helpers/security.ts';

/** How many entries the change log holds. */
async function logSize(app: TestApp): Promise<number> {
  const { rows } = await sql<{ n: number | string | bigint }>`select count(*) as n from change_log`.execute(
    app.database.db,
  );
  return Number(rows[0]!.n);
}

/** The answer to a page is the sign-in page's redirect. */
function assertSentToSignIn(reply: Reply, what: string): void {
  assert.ok(reply.status === 303 || reply.status === 302, `${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
  assert.match(reply.headers.get('location') ?? '', /^\/login(\?|$)/, what);
}

/** The table row of a list page that names `title`. */
const rowOf = (html: string, title: string) =>
  [...html.matchAll(/<tr[\s>][\s\S]*?<\/tr>/g)].map((m) => m[0]).find((row) => row.includes(`>${title}<`));

/** The options of the page's `reassign_to` select, as [value, label]. */
function heirsOffered(html: string): [string, string][] {
  const select = /<select[^>]*name="reassign_to"[^>]*>([\s\S]*?)<\/select>/.exec(html);
  assert.ok(select, 'the page has a select named reassign_to');
  return [...select[1]!.matchAll(/<option value="?([^">\s]*)"?>([^<]*)<\/option>/g)].map((m) => [m[1]!, m[2]!]);
}

for (const dialect of DIALECTS) {
  describe(`deactivation and deleting a user with work (${dialect})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startApp(dialect);
    });
    after(() => app.close());

    const tokenFor = (who: { email: string; password: string }) =>
      app.request('POST', '/api/v1/auth/token', {
        json: { email: who.email, password: who.password, device_name: 'deactivation' },
        token: null,
      });
    const me = (token: string) => app.request('GET', '/api/v1/me', { token });

    test('a deactivated user: tokens and sessions stop, sign-in is refused, the name stays, the audit log says who', async () => {
      const ann = await teammate(app, 'agent', 'Ann Archer');
      const page = await pageSignIn(app, ann);
      const remembered = await pageSignIn(app, ann, true);
      // A browser holding only the remember-me cookie: it would sign straight back in.
      const cookieOnly = app.client();
      cookieOnly.cookies.set(REMEMBER, remembered.cookies.get(REMEMBER)!);
      const contact = await app.request('POST', '/api/v1/contacts', {
        json: { name: 'Made by Ann' },
        token: ann.token,
      });
      assert.equal(contact.status, 201, contact.text);
      const contactId = contact.body.data.id;
      // Everything works before.
      assert.equal((await me(ann.token)).status, 200);
      assert.equal((await page.get('/contacts')).status, 200);
      assert.equal((await cookieOnly.get('/contacts')).status, 200, 'the remember-me cookie signs in');

      const deactivated = await app.patch(`/api/v1/users/${ann.id}`, { active: false });
      assert.equal(deactivated.status, 200, deactivated.text);
      assert.equal(deactivated.body.data.active, false);

      assertProblem(await me(ann.token), 401, 'unauthenticated');
      assert.equal(
        (await app.request('POST', '/api/v1/contacts', { json: { name: 'After' }, token: ann.token })).status,
        401,
        'the token does nothing any more',
      );
      assertSentToSignIn(await page.get('/contacts'), 'the page session');
      assertSentToSignIn(await cookieOnly.get('/contacts'), 'the remember-me cookie');
      assert.equal((await page.request('GET', '/api/v1/me')).status, 401, 'the session cookie on the API');
      assertProblem(await tokenFor(ann), 401, 'deactivated');
      assertProblem(
        await app.request('POST', '/api/v1/auth/login', {
          json: { email: ann.email, password: ann.password },
          token: null,
        }),
        401,
        'deactivated',
      );
      // The sign-in page refuses too, and says why; a wrong password still says nothing about the account.
      const signIn = await submit(app.client(), '/login', '/login', { email: ann.email, password: ann.password });
      assert.notEqual(signIn.status, 303, 'no session from the sign-in page');
      assert.match(signIn.text, /deactivated/);
      assertProblem(await tokenFor({ email: ann.email, password: 'not her passphrase 1' }), 401, 'invalid_credentials');

      // Still a name on her work: the record names her, the pages show her name, the log her as its actor.
      const shown = await app.get(`/api/v1/contacts/${contactId}`);
      assert.equal(shown.status, 200, shown.text);
      assert.equal(String(shown.body.data.created_by), String(ann.id));
      const admin = await pageSignIn(app, app.admin);
      const contactPage = await admin.get(`/contacts/${contactId}`);
      assert.equal(contactPage.status, 200);
      assert.match(contactPage.text, /Created by<\/dt>\s*<dd>Ann Archer<\/dd>/);
      const list = await admin.get('/contacts?columns=name,created_by');
      assert.match(rowOf(list.text, 'Made by Ann') ?? '', />Ann Archer</, 'the list row shows her name');
      const [made] = (await app.get(`/api/v1/contacts/${contactId}/activity`)).body.data as Json[];
      assert.deepEqual([made.action, made.actor?.name], ['created', 'Ann Archer']);

      // The audit log: user_deactivated, by the admin, about her; in her own timeline too.
      const audit = await app.get('/api/v1/activity?filter[action]=user_deactivated&filter[resource]=users');
      assert.equal(audit.status, 200, audit.text);
      const entries = (audit.body.data as Json[]).filter((e) => String(e.record_id) === String(ann.id));
      assert.deepEqual(
        entries.map((e) => [String(e.actor?.id), e.actor?.name, e.via]),
        [[String(app.admin.id), 'Admin', 'api']],
      );
      const timeline = (await app.get(`/api/v1/users/${ann.id}/activity`)).body.data as Json[];
      assert.deepEqual(
        timeline.filter((e) => e.action === 'user_deactivated').map((e) => e.actor?.name),
        ['Admin'],
      );
      assert.deepEqual(
        timeline.filter((e) => e.action === 'updated').map((e) => e.changes),
        [{ active: [true, false] }],
        'and the record change itself',
      );

      // Active again: she signs in again; what was ended stays ended.
      const again = await app.patch(`/api/v1/users/${ann.id}`, { active: true });
      assert.equal(again.status, 200, again.text);
      const fresh = await tokenFor(ann);
      assert.equal(fresh.status, 201, fresh.text);
      assert.equal((await me(fresh.body.token)).status, 200);
      assert.equal((await pageSignIn(app, ann).then((c) => c.get('/contacts'))).status, 200);
      assert.equal((await me(ann.token)).status, 401, 'the old token stays revoked');
      assertSentToSignIn(await page.get('/contacts'), 'the old session stays ended');
      assertSentToSignIn(await cookieOnly.get('/contacts'), 'the old remember-me cookie stays forgotten');
      const deactivations = (await app.get('/api/v1/activity?filter[action]=user_deactivated')).body.data as Json[];
      assert.equal(
        deactivations.filter((e) => String(e.record_id) === String(ann.id)).length,
        1,
        'turning it back on is no deactivation',
      );
    });

    test('a deactivation ends a sign-in that waits for its second factor', async () => {
      const tess = await teammate(app, 'agent', 'Tess Twofactor');
      const setup = await app.request('POST', '/api/v1/me/two-factor', {
        json: { password: tess.password },
        token: tess.token,
      });
      assert.equal(setup.status, 200, setup.text);
      await waitForRoom(2);
      const confirmed = await app.request('POST', '/api/v1/me/two-factor/confirm', {
        json: { code: oathtool(setup.body.secret, Date.now()) },
        token: tess.token,
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      const half = app.client();
      const first = await half.post('/api/v1/auth/login', { email: tess.email, password: tess.password });
      assert.deepEqual(first.body, { two_factor: true }, first.text);
      assert.ok(half.cookies.get(SESSION), 'a pending session');

      assert.equal((await app.patch(`/api/v1/users/${tess.id}`, { active: false })).status, 200);
      const code = oathtool(setup.body.secret, Date.now() + 30_000);
      const second = await half.post('/api/v1/auth/two-factor-challenge', { code });
      assertProblem(second, 401, 'unauthenticated');
      assert.equal((await half.get('/api/v1/me')).status, 401);
    });

    test('the last active admin cannot be deactivated nor deleted, even with an inactive admin beside them', async () => {
      const other = await teammate(app, 'admin', 'Otto Otheradmin');
      const off = await app.patch(`/api/v1/users/${other.id}`, { active: false });
      assert.equal(off.status, 200, `one of two active admins may go: ${off.text}`);

      // The other admin is inactive: this one is the last active admin.
      const before = await logSize(app);
      const refused = await app.patch(`/api/v1/users/${app.admin.id}`, { active: false });
      assertProblem(refused, 422, 'validation_failed', 'active');
      const self = await app.get(`/api/v1/users/${app.admin.id}`);
      assert.equal(self.body.data.active, true, 'still active');
      assert.equal((await me(app.admin.token)).status, 200, 'and still signed in');
      assert.equal(await logSize(app), before, 'nothing logged');
      assertProblem(await app.delete(`/api/v1/users/${app.admin.id}`), 409, 'last_admin');

      // With the other admin active again neither is the last: the other may even deactivate themself.
      assert.equal((await app.patch(`/api/v1/users/${other.id}`, { active: true })).status, 200);
      const minted = await tokenFor(other);
      assert.equal(minted.status, 201, minted.text);
      const selfOff = await app.request('PATCH', `/api/v1/users/${other.id}`, {
        json: { active: false },
        token: minted.body.token,
      });
      assert.equal(selfOff.status, 200, selfOff.text);
      assert.equal((await me(minted.body.token)).status, 401, 'which ends their own token too');
      assert.equal((await me(app.admin.token)).status, 200);
    });

    test('work is not given to a deactivated user: assigning one is a 422 naming the field, and nothing is written', async () => {
      const gone = await teammate(app, 'agent', 'Gil Gone');
      assert.equal((await app.patch(`/api/v1/users/${gone.id}`, { active: false })).status, 200);
      const refused = await app.post('/api/v1/inquiries', { name: 'For Gil', assigned_to: gone.id });
      assert.equal(refused.status, 422, refused.text);
      assert.match(refused.body.errors.assigned_to[0], /deactivated/);
      assert.equal((await app.get('/api/v1/inquiries?filter[name]=For%20Gil')).body.data.length, 0);
      const made = await app.post('/api/v1/inquiries', { name: 'For someone', assigned_to: app.admin.id });
      const moved = await app.patch(`/api/v1/inquiries/${made.body.data.id}`, { assigned_to: gone.id });
      assert.equal(moved.status, 422, moved.text);
      assert.ok(moved.body.errors.assigned_to);
      // Created by them stays fine: only the work to do must go to someone active.
      assert.equal((await app.post('/api/v1/contacts', { name: 'By Gil', created_by: gone.id })).status, 201);
    });

    test('only an admin deactivates an account: a user cannot deactivate themself through PATCH /me', async () => {
      const al = await teammate(app, 'agent', 'Al Self');
      const reply = await app.request('PATCH', '/api/v1/me', { json: { active: false }, token: al.token });
      assert.notEqual(reply.status, 200, reply.text.slice(0, 300));
      assert.equal((await app.get(`/api/v1/users/${al.id}`)).body.data.active, true, 'still active');
      assert.equal((await me(al.token)).status, 200, 'still signed in');
    });

    test('deleting a user with an assigned inquiry: 409 has_assignments; reassign_to another active user moves it', async () => {
      const bo = await teammate(app, 'agent', 'Bo Busy');
      const cy = await teammate(app, 'agent', 'Cy Heir');
      const dee = await teammate(app, 'agent', 'Dee Inactive');
      assert.equal((await app.patch(`/api/v1/users/${dee.id}`, { active: false })).status, 200);
      const work = [];
      for (const name of ['First job', 'Second job']) {
        const made = await app.post('/api/v1/inquiries', { name, assigned_to: bo.id });
        assert.equal(made.status, 201, made.text);
        work.push(made.body.data);
      }
      const others = await app.post('/api/v1/inquiries', { name: 'Not Bo’s', assigned_to: cy.id });
      assert.equal(others.status, 201, others.text);
      const assignee = async (id: unknown) => String((await app.get(`/api/v1/inquiries/${id}`)).body.data.assigned_to);

      const before = await logSize(app);
      const conflict = await app.delete(`/api/v1/users/${bo.id}`);
      assertProblem(conflict, 409, 'has_assignments');
      assert.match(conflict.body.detail, /2 inquiries/);
      const refusals = [String(dee.id), '99999999', String(bo.id), 'someone'];
      for (const to of refusals) {
        const refused = await app.delete(`/api/v1/users/${bo.id}?reassign_to=${to}`);
        assertProblem(refused, 422, 'validation_failed', 'reassign_to');
      }
      // Nothing changed: Bo is there, the work is Bo's, the log is as it was.
      assert.equal((await app.get(`/api/v1/users/${bo.id}`)).status, 200);
      for (const inquiry of work) assert.equal(await assignee(inquiry.id), String(bo.id));
      assert.equal(await logSize(app), before, 'no entry for refused deletions');
      assert.equal((await me(bo.token)).status, 200);

      const deleted = await app.delete(`/api/v1/users/${bo.id}?reassign_to=${cy.id}`);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal((await app.get(`/api/v1/users/${bo.id}`)).status, 404);
      assert.equal((await me(bo.token)).status, 401, 'the deleted user’s token is gone');
      for (const inquiry of work) {
        assert.equal(await assignee(inquiry.id), String(cy.id), 'the work is Cy’s now');
        const [moved] = (await app.get(`/api/v1/inquiries/${inquiry.id}/activity`)).body.data as Json[];
        assert.deepEqual(
          [moved.action, moved.actor?.name, moved.via, moved.changes?.assigned_to?.map(String)],
          ['updated', 'Admin', 'api', [String(bo.id), String(cy.id)]],
        );
      }
      assert.equal(await assignee(others.body.data.id), String(cy.id), 'other work untouched');
      const gone = (
        (await app.get('/api/v1/activity?filter[resource]=users&filter[action]=deleted')).body.data as Json[]
      )
        .filter((e) => String(e.record_id) === String(bo.id))
        .map((e) => e.actor?.name);
      assert.deepEqual(gone, ['Admin'], 'the deletion is in the audit log');
    });

    test('the delete page of a user with work offers the active teammates, and the form reassigns it', async () => {
      const eve = await teammate(app, 'agent', 'Eve Leaving');
      const fay = await teammate(app, 'agent', 'Fay Taking');
      const gus = await teammate(app, 'agent', 'Gus Gone');
      assert.equal((await app.patch(`/api/v1/users/${gus.id}`, { active: false })).status, 200);
      const inquiry = (await app.post('/api/v1/inquiries', { name: 'Eve’s job', assigned_to: eve.id })).body.data;
      const admin: Client = await pageSignIn(app, app.admin);

      const page = await admin.get(`/users/${eve.id}/delete`);
      assert.equal(page.status, 200, page.text.slice(0, 300));
      const offered = heirsOffered(page.text);
      const ids = offered.map(([value]) => value).filter(Boolean);
      const names = offered.map(([, label]) => label);
      assert.ok(names.includes('Fay Taking') && names.includes('Admin'), `active teammates: ${names.join(', ')}`);
      assert.ok(!names.includes('Gus Gone'), 'not a deactivated one');
      assert.ok(!names.includes('Eve Leaving'), 'not the user being deleted');
      const active = ((await app.get('/api/v1/users?filter[active]=true&per_page=100')).body.data as Json[])
        .filter((u) => String(u.id) !== String(eve.id))
        .map((u) => String(u.id));
      assert.deepEqual([...ids].sort(), [...active].sort(), 'every active teammate, each by id');
      const withoutWork = await admin.get(`/users/${fay.id}/delete`);
      assert.doesNotMatch(withoutWork.text, /name="reassign_to"/, 'no choice when there is no work');

      // No choice made: the page again, in error, and nothing deleted.
      const none = await submit(admin, `/users/${eve.id}/delete`, `/users/${eve.id}/delete`, { reassign_to: '' });
      assert.equal(none.status, 422, none.text.slice(0, 300));
      assert.match(none.text, /name="reassign_to"[^>]*aria-invalid="true"/);
      const crafted = await submit(admin, `/users/${eve.id}/delete`, `/users/${eve.id}/delete`, {
        reassign_to: String(gus.id),
      });
      assert.equal(crafted.status, 422, 'a deactivated user, posted by hand, is refused');
      assert.equal((await app.get(`/api/v1/users/${eve.id}`)).status, 200);

      const done = await submit(admin, `/users/${eve.id}/delete`, `/users/${eve.id}/delete`, {
        reassign_to: String(fay.id),
      });
      assert.equal(done.status, 303, done.text.slice(0, 300));
      assert.equal(done.headers.get('location'), '/users');
      assert.equal((await app.get(`/api/v1/users/${eve.id}`)).status, 404);
      assert.equal(String((await app.get(`/api/v1/inquiries/${inquiry.id}`)).body.data.assigned_to), String(fay.id));
      const [moved] = (await app.get(`/api/v1/inquiries/${inquiry.id}/activity`)).body.data as Json[];
      assert.deepEqual(
        [moved.action, moved.actor?.name, moved.via, moved.changes?.assigned_to?.map(String)],
        ['updated', 'Admin', 'web', [String(eve.id), String(fay.id)]],
      );
    });
  });
}
