// Every route × every role × owner or not, generated from the app's route list
// (each route's rule in src/http/access.ts, which the boot requires) and the
// role rules (src/schema/roles.ts): a stranger, a viewer, an agent, a manager
// and an admin call each route through its own door (a bearer token for the
// API, a signed-in page session with its CSRF token for the pages), on a record
// of their own and on someone else's where the route names one. A refusal is a
// 403 saying what the role may not do; a stranger is sent to sign in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DeclaredRoute, ROUTE_ACCESS } from '../src/http/access.ts';
import { resources } from '../src/resources/index.ts';
import type { Resource } from '../src/schema/resource.ts';
import { allows, atLeast, ROLES, type Role } from '../src/schema/roles.ts';
import { type Client, type Reply, startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';
import { teammate } from './helpers/team.ts';
import { csrfOf, form, pageSignIn } from './reliability/helpers/security.ts';

type Outcome = 'allowed' | 'forbidden' | 'sign in';
type Owner = 'own' | 'other' | null;

interface Caller {
  role: Role | null;
  id: bigint | number;
  token: string | null;
  client: Client;
  csrf: string;
}

const byName = (name: string) => resources.find((r) => r.name === name)!;
/** The resource a route serves; the trash's routes are tried on contacts. */
const resourceOf = (route: DeclaredRoute) => byName(route.resource ?? 'contacts');

/** What a reply says about access: refused for the role, sent to sign in, or let through (whatever came next). */
function outcomeOf(reply: Reply): Outcome {
  if (reply.status === 401) return 'sign in';
  if (reply.status === 303 && (reply.headers.get('location') ?? '').startsWith('/login')) return 'sign in';
  if (reply.status === 403 && /may not|Only admins/.test(reply.text)) return 'forbidden';
  return 'allowed';
}

/** What the rules say a caller gets from a route, on a record of their own or not. */
function expected(route: DeclaredRoute, role: Role | null, owner: Owner): Outcome {
  const { access } = route;
  if (access.to === 'anyone') return 'allowed';
  if (role === null) return 'sign in';
  if (access.to === 'signed-in') return 'allowed';
  if (access.to === 'admin') return role === 'admin' ? 'allowed' : 'forbidden';
  const resource = resourceOf(route);
  if (access.to === 'pick') {
    const readers = [resource, ...resource.referencedBy.map((r) => r.resource)];
    return readers.some((r) => allows(role, r.access, 'read')) ? 'allowed' : 'forbidden';
  }
  const target = access.resource ? byName(access.resource) : resource;
  // Someone else's personal record (a saved view, not shared) is not there for a role below the scope's: a 404.
  if (access.record && owner === 'other' && target.readScope && !atLeast(role, target.readScope.all)) return 'allowed';
  // A route over many records (a bulk action) lets in whoever may act on their own; the rest is reported per record.
  return allows(role, target.access, access.ability, owner === 'own' || access.many === true) ? 'allowed' : 'forbidden';
}

/** A record resource that gives owners more than others: the owner dimension matters. */
const hasOwners = (resource: Resource) => resource.owners.length > 0;

// Routes that end the caller's sessions run last for each caller, so that the rest keep theirs.
const ENDS_SESSIONS = /^(POST \/logout|POST \/api\/v1\/auth\/logout|DELETE \/api\/v1\/me\/sessions)$/;

for (const dialect of DIALECTS) {
  describe(`route × role × owner (${dialect})`, () => {
    let app: TestApp;
    const callers: Caller[] = [];
    before(async () => {
      app = await startApp(dialect);
      const stranger = app.client();
      callers.push({
        role: null,
        id: 0,
        token: null,
        client: stranger,
        csrf: csrfOf((await stranger.get('/login')).text),
      });
      for (const role of ROLES) {
        const who = role === 'admin' ? { ...app.admin, name: 'Admin' } : await teammate(app, role);
        const client = await pageSignIn(app, who);
        callers.push({ role, id: who.id, token: who.token, client, csrf: csrfOf((await client.get('/profile')).text) });
      }
    });
    after(() => app.close());

    test('every route has a rule and every rule names a route', () => {
      const used = new Set(app.routes.map((r) => `${r.method === 'HEAD' ? 'GET' : r.method} ${keyPath(r)}`));
      const unused = Object.keys(ROUTE_ACCESS).filter((key) => !used.has(key));
      assert.deepEqual(unused, [], 'rules for routes that do not exist');
      assert.ok(app.routes.length > 100, `${app.routes.length} routes`);
    });

    test('created_by is set by the server: only an admin names someone else', async () => {
      const agent = callers.find((c) => c.role === 'agent')!;
      const manager = callers.find((c) => c.role === 'manager')!;
      const as = (c: Caller, method: string, path: string, json: unknown) =>
        app.request(method, path, { token: c.token, json });
      const forged = await as(agent, 'POST', '/api/v1/contacts', { name: 'Forged', created_by: app.admin.id });
      assert.equal(forged.status, 403, forged.text);
      assert.ok(forged.body.errors.created_by, 'the field is named');
      const own = await as(agent, 'POST', '/api/v1/contacts', { name: 'Own', created_by: agent.id });
      assert.equal(own.status, 201, own.text);
      const plain = await as(agent, 'POST', '/api/v1/contacts', { name: 'Plain' });
      assert.equal(String(plain.body.data.created_by), String(agent.id), 'the server sets it');
      for (const who of [agent, manager]) {
        const moved = await as(who, 'PATCH', `/api/v1/contacts/${own.body.data.id}`, { created_by: manager.id });
        assert.equal(moved.status, 403, moved.text);
      }
      const byAdmin = await app.patch(`/api/v1/contacts/${own.body.data.id}`, { created_by: manager.id });
      assert.equal(String(byAdmin.body.data.created_by), String(manager.id));
    });

    /** A fresh record of `resource` owned by `owner` (its creator), made by the admin; answers its id. */
    async function freshRecord(resource: Resource, owner: Caller | null): Promise<string> {
      const creator = owner?.role ? owner.id : app.admin.id;
      let body: Record<string, unknown> = { name: `Access check ${Math.random()}` };
      if (resource.name === 'users')
        body = { name: 'Someone', email: `someone.${Date.now()}.${Math.random()}@example.org`, role: 'viewer' };
      if (resource.name === 'notes')
        body = { body: 'a note', contact_id: Number(await freshRecord(byName('contacts'), null)) };
      if (resource.name === 'views') body.resource = 'contacts';
      if (resource.name === 'tasks') body = { title: 'a task' };
      if (resource.name === 'stages') body.position = 99;
      if (resource.name === 'assignment-rules') Object.assign(body, { position: 1, users: [Number(app.admin.id)] });
      if (resource.name === 'intake-forms')
        Object.assign(body, { slug: `access-${Math.random().toString(36).slice(2)}`, fields: ['email'] });
      if (resource.name === 'webhooks') body = { url: 'https://hooks.example.org/in', events: ['contact.created'] };
      if (hasOwners(resource)) body.created_by = creator;
      const made = await app.post(`/api/v1/${resource.name}`, body);
      assert.equal(made.status, 201, made.text);
      return String(made.body.data.id);
    }

    /** The concrete path of a route for a caller: its record (theirs or not), a deletion in the trash, a field. */
    async function pathOf(route: DeclaredRoute, caller: Caller, owner: Owner): Promise<string | null> {
      const resource = resourceOf(route);
      const ownerCaller = owner === 'own' ? caller : null;
      let path = route.url;
      if (path.includes(':field')) {
        const field = resource.fields.find((f) => f.kind.options && f.fillable);
        if (!field) return null; // the route serves no field of this resource
        path = path.replace(':field', field.name);
      }
      if (path.includes(':change_id')) {
        const id = await freshRecord(resource, ownerCaller);
        assert.equal((await app.delete(`/api/v1/${resource.name}/${id}`)).status, 204);
        const trash = await app.get('/api/v1/trash');
        const item = trash.body.data.find((t: { id: unknown }) => String(t.id) === id);
        path = path.replace(':change_id', String(item.change_id));
      }
      if (path.includes(':id'))
        path = path.replace(':id', route.resource ? await freshRecord(resource, ownerCaller) : '999999');
      return path
        .replace(':userId', String(app.admin.id))
        .replace(':hash', 'x')
        .replace(':name', 'app.css')
        .replace(':delivery_id', '999999')
        .replace('*', 'nowhere');
    }

    async function call(route: DeclaredRoute, caller: Caller, path: string): Promise<Reply> {
      const page = !route.url.startsWith('/api/');
      const withBody = route.method !== 'GET' && route.method !== 'HEAD' && route.method !== 'DELETE';
      if (page) {
        const body = withBody ? form({ _csrf: caller.csrf }) : undefined;
        return caller.client.request(route.method, path, body ? { body: body.body, headers: body.headers } : {});
      }
      const json = /\/restore$/.test(path) && !path.includes('/trash/') ? { change_id: 1 } : {};
      return app.request(route.method, path, { token: caller.token, ...(withBody ? { json } : {}) });
    }

    test('each route answers each role, on their own record and on another’s, as the rules say', async () => {
      const routes = app.routes.filter((r) => r.method !== 'HEAD');
      const last = routes.filter((r) => ENDS_SESSIONS.test(`${r.method} ${r.url}`));
      const first = routes.filter((r) => !last.includes(r));
      const failures: string[] = [];
      let checked = 0;
      for (const caller of callers) {
        // The API first: ending sessions through it would end this caller's page session.
        const ordered = [
          ...first.filter((r) => r.url.startsWith('/api/')),
          ...first.filter((r) => !r.url.startsWith('/api/')),
          ...last,
        ];
        for (const route of ordered) {
          const owned = route.access.to === 'records' && route.access.record && hasOwners(resourceOf(route));
          for (const owner of owned ? (['own', 'other'] as const) : [null]) {
            if (owner === 'own' && caller.role === null) continue;
            const path = await pathOf(route, caller, owner);
            if (path === null) continue;
            const reply = await call(route, caller, path);
            const want = expected(route, caller.role, owner);
            const got = outcomeOf(reply);
            checked++;
            // A route anyone may call may still refuse a stranger what needs a sign-in further in; never a 403 for a role.
            const ok = route.access.to === 'anyone' ? got !== 'forbidden' : got === want;
            if (!ok)
              failures.push(
                `${route.method} ${path} as ${caller.role ?? 'stranger'}${owner ? ` (${owner})` : ''}: ` +
                  `want ${want}, got ${reply.status} ${reply.text.slice(0, 160)}`,
              );
          }
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${checked} checks`);
      assert.ok(checked > 500, `${checked} checks`);
    });
  });
}

/** A declared route's path as the table writes it: its record resource as `{r}`. */
function keyPath(route: DeclaredRoute): string {
  return route.resource ? route.url.replace(`/${route.resource}`, '/{r}') : route.url;
}
