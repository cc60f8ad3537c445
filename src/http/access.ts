// Who may call each route, in one table: the boot refuses a route that is not
// in it, and test/route-access.test.ts calls every route as every role (and,
// where a route names a record, as its owner and as someone else) and checks
// the answer against `allows`. The operations enforce it; this table says what
// each route asks of them. `{r}` stands for any record resource's name.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Ability } from '../schema/roles.ts';

export type RouteAccess =
  /** Anyone, signed in or not (sign-in pages, health, documentation, assets). */
  | { to: 'anyone' }
  /** Any signed-in user: their own account, or what the operation narrows to them (their trash). */
  | { to: 'signed-in' }
  /** Admins only (the audit log). */
  | { to: 'admin' }
  /** The titles of a resource's records, to pick one: whoever may read it, or read a resource that references it. */
  | { to: 'pick' }
  /**
   * The ability on the route's resource (or on `resource`: a note added at a contact's address); `record`: the
   * route names a record (`:id`, or the deletion `:change_id` of one), whose owner may be allowed more.
   */
  | {
      to: 'records';
      ability: Ability;
      resource?: string;
      record?: boolean;
      /**
       * The route works on many records (a bulk action): whoever may do `ability` with records of their own may call
       * it; the records they may not touch are reported one by one, not refused with the call.
       */
      many?: boolean;
    };

const anyone: RouteAccess = { to: 'anyone' };
const signedIn: RouteAccess = { to: 'signed-in' };
const records = (
  ability: Ability,
  more: { resource?: string; record?: boolean; many?: boolean } = {},
): RouteAccess => ({
  to: 'records',
  ability,
  ...more,
});
const onRecord = (ability: Ability) => records(ability, { record: true });
const onMany = (ability: Ability) => records(ability, { many: true });

/** Every route, as `METHOD /path` (HEAD answers as GET). */
export const ROUTE_ACCESS: Readonly<Record<string, RouteAccess>> = {
  'GET /healthz': anyone,
  'GET /readyz': anyone,
  'GET /assets/:name': anyone,
  'GET /docs': anyone,
  'GET /docs/json': anyone,
  'GET /docs/yaml': anyone,
  'GET /docs/static/index.html': anyone,
  'GET /docs/static/swagger-initializer.js': anyone,
  'GET /docs/static/*': anyone,
  'GET /api/v1/openapi.json': anyone,
  // The intake forms' public doors; OPTIONS is @fastify/cors's preflight of the JSON door.
  'POST /api/v1/intake/:slug': anyone,
  'OPTIONS /api/v1/intake*': anyone,
  'GET /f/:slug': anyone,
  'POST /f/:slug': anyone,
  'GET /*': anyone,

  // Signing in and out, registering, resets, invitations, verification: the account flows.
  'POST /api/v1/auth/register': anyone,
  'POST /api/v1/auth/login': anyone,
  'POST /api/v1/auth/logout': anyone,
  'POST /api/v1/auth/two-factor-challenge': anyone,
  'POST /api/v1/auth/token': anyone,
  'POST /api/v1/auth/forgot-password': anyone,
  'POST /api/v1/auth/reset-password': anyone,
  'POST /api/v1/auth/accept-invitation': anyone,
  'GET /api/v1/auth/verify-email/:id/:hash': anyone,
  'POST /api/v1/auth/email/verification-notification': signedIn,
  'GET /register': anyone,
  'POST /register': anyone,
  'GET /setup': anyone,
  'POST /setup': anyone,
  'GET /login': anyone,
  'POST /login': anyone,
  'POST /logout': anyone,
  'GET /two-factor-challenge': anyone,
  'POST /two-factor-challenge': anyone,
  'GET /forgot-password': anyone,
  'POST /forgot-password': anyone,
  'GET /reset-password': anyone,
  'POST /reset-password': anyone,
  'GET /invitation': anyone,
  'POST /invitation': anyone,
  'GET /verify-email': signedIn,
  'POST /verify-email': signedIn,
  'GET /verify-email/:id/:hash': anyone,

  // One's own account.
  'GET /api/v1/me': signedIn,
  'PATCH /api/v1/me': signedIn,
  'DELETE /api/v1/me': signedIn,
  'POST /api/v1/me/confirm-password': signedIn,
  'PUT /api/v1/me/password': signedIn,
  'POST /api/v1/me/avatar': signedIn,
  'DELETE /api/v1/me/avatar': signedIn,
  'POST /api/v1/me/two-factor': signedIn,
  'DELETE /api/v1/me/two-factor': signedIn,
  'POST /api/v1/me/two-factor/confirm': signedIn,
  'POST /api/v1/me/two-factor/recovery-codes': signedIn,
  'GET /api/v1/me/tokens': signedIn,
  'POST /api/v1/me/tokens': signedIn,
  'DELETE /api/v1/me/tokens/:id': signedIn,
  'GET /api/v1/me/sessions': signedIn,
  'GET /api/v1/me/notifications': signedIn,
  'POST /api/v1/me/notifications/read': signedIn,
  'GET /notifications': signedIn,
  'GET /notifications/bell': signedIn,
  'POST /notifications/read': signedIn,
  // The assignment rules' dry run (the only {r} here: assignment-rules).
  'POST /api/v1/{r}/dry-run': { to: 'admin' },
  'DELETE /api/v1/me/sessions': signedIn,
  'GET /api/v1/avatars/:userId': signedIn,
  'GET /': signedIn,
  'GET /profile': signedIn,
  'POST /profile': signedIn,
  'POST /profile/avatar': signedIn,
  'POST /profile/avatar/delete': signedIn,
  'POST /profile/password': signedIn,
  'POST /profile/two-factor': signedIn,
  'POST /profile/two-factor/confirm': signedIn,
  'POST /profile/two-factor/recovery-codes': signedIn,
  'POST /profile/two-factor/disable': signedIn,
  'POST /profile/tokens': signedIn,
  'POST /profile/tokens/:id/delete': signedIn,
  'POST /profile/sessions/delete': signedIn,
  'POST /profile/delete': signedIn,
  'GET /api/v1/schema': signedIn,

  // The search box over contacts and inquiries: each resource searched only for whoever may read it.
  'GET /api/v1/search': signedIn,
  'GET /search': signedIn,
  'GET /search/suggestions': signedIn,

  // The change log, the trash.
  'GET /api/v1/activity': { to: 'admin' },
  'GET /api/v1/settings/labels': signedIn,
  'PUT /api/v1/settings/labels': { to: 'admin' },
  'GET /settings': { to: 'admin' },
  'POST /settings': { to: 'admin' },
  'GET /api/v1/activity/export': { to: 'admin' },
  'GET /activity': { to: 'admin' },
  'GET /api/v1/trash': signedIn,
  'GET /trash': signedIn,
  // Whoever may delete the record may bring it back.
  'POST /api/v1/trash/:change_id/restore': records('delete', { record: true }),
  'POST /trash/:change_id/restore': records('delete', { record: true }),

  // Duplicates of contacts: whoever reads contacts sees them; merging deletes, and so does its undo.
  'GET /api/v1/{r}/duplicates': records('read'),
  'POST /api/v1/{r}/merge': records('delete'),
  'POST /api/v1/{r}/merge/:merge_id/undo': records('delete'),
  'GET /{r}/duplicates': records('read'),
  'POST /{r}/merge': records('delete'),
  'POST /{r}/merge/:merge_id/undo': records('delete'),

  // Imports of any resource (whoever may import contacts sees the list, narrowed to the resources they may import);
  // rolling one back deletes what it created.
  'GET /api/v1/imports': records('import', { resource: 'contacts' }),
  'GET /api/v1/imports/:id': records('import', { resource: 'contacts' }),
  'GET /api/v1/imports/:id/failed': records('import', { resource: 'contacts' }),
  'POST /api/v1/imports/:id/rollback': records('delete', { resource: 'contacts' }),
  'GET /imports': records('import', { resource: 'contacts' }),
  'GET /imports/:id': records('import', { resource: 'contacts' }),
  'GET /imports/:id/progress': records('import', { resource: 'contacts' }),
  'GET /imports/:id/failed.csv': records('import', { resource: 'contacts' }),
  'POST /imports/:id/rollback': records('delete', { resource: 'contacts' }),
  // The import wizard's steps after the upload: map the columns, preview, run.
  'GET /{r}/import/:id': records('import'),
  'POST /{r}/import/:id/preview': records('import'),
  'POST /{r}/import/:id/run': records('import'),

  // Any record resource, through the API.
  'GET /api/v1/{r}': records('read'),
  'POST /api/v1/{r}': records('create'),
  'GET /api/v1/{r}/export': records('export'),
  'POST /api/v1/{r}/import': records('import'),
  'GET /api/v1/{r}/:id': onRecord('read'),
  'PATCH /api/v1/{r}/:id': onRecord('update'),
  'DELETE /api/v1/{r}/:id': onRecord('delete'),
  'GET /api/v1/{r}/:id/activity': onRecord('read'),
  'POST /api/v1/{r}/:id/restore': onRecord('update'),
  'POST /api/v1/{r}/:id/notes': records('create', { resource: 'notes' }),
  // Bulk actions (contacts, inquiries): update or delete, the owners' rule applied record by record.
  'POST /api/v1/{r}/bulk': onMany('update'),

  // And through the pages.
  'GET /{r}': records('read'),
  'POST /{r}': records('create'),
  'GET /{r}/new': records('create'),
  'GET /{r}/choices': { to: 'pick' },
  'GET /{r}/export.csv': records('export'),
  'GET /{r}/import': records('import'),
  'POST /{r}/import': records('import'),
  'GET /{r}/:id': onRecord('read'),
  'POST /{r}/:id': onRecord('update'),
  'GET /{r}/:id/edit': onRecord('update'),
  'GET /{r}/:id/delete': onRecord('delete'),
  'POST /{r}/:id/delete': onRecord('delete'),
  'POST /{r}/:id/cycle/:field': onRecord('update'),
  // The pipeline board (inquiries), and moving one inquiry to another stage from it.
  'GET /{r}/board': records('read'),
  'POST /{r}/:id/stage': onRecord('update'),
  'POST /{r}/:id/restore': onRecord('update'),
  'POST /{r}/:id/copy': onRecord('update'),
  'POST /{r}/:id/notes': records('create', { resource: 'notes' }),
  // A task added on a contact's or an inquiry's page; a task done in one click.
  'POST /{r}/:id/tasks': records('create', { resource: 'tasks' }),
  'POST /{r}/:id/done': onRecord('update'),
  // A list's columns (the viewer's own choice) and its saved views (contacts, inquiries).
  'POST /{r}/columns': records('read'),
  'POST /{r}/views': records('create', { resource: 'views' }),
  'POST /{r}/bulk': onMany('update'),
  'GET /{r}/bulk/ids': onMany('update'),
};

export interface DeclaredRoute {
  method: string;
  url: string;
  /** The record resource the route serves, if any. */
  resource?: string;
  access: RouteAccess;
}

/** The table's key for a route, and the record resource it serves: the first path segment that names one. */
function keyOf(method: string, url: string, resourceNames: readonly string[]) {
  const segments = url.split('/');
  const at = segments.findIndex((s) => resourceNames.includes(s));
  const resource = at > 0 ? segments[at] : undefined;
  if (at > 0) segments[at] = '{r}';
  return { key: `${method === 'HEAD' ? 'GET' : method} ${segments.join('/') || '/'}`, resource };
}

/**
 * Checks every route against the table as it is added (a route without a rule stops the boot) and keeps the list
 * for the route × role test.
 */
export function declareRouteAccess(app: FastifyInstance, resourceNames: readonly string[]): void {
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const { key, resource } = keyOf(method, route.url, resourceNames);
      const access = ROUTE_ACCESS[key];
      if (!access) throw new Error(`route ${key} has no rule in src/http/access.ts: say who may call it`);
      routes.push({ method, url: route.url, resource, access });
    }
  });
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route of an app with its rule, as the boot checked them. */
export const declaredRoutes = (app: FastifyInstance): readonly DeclaredRoute[] => declared.get(app) ?? [];
