// Who may call each route, in one table: the boot refuses a route that is not
// in it, and test/route-access.test.ts calls every route as every role (and,
// where a route names a record, as its owner and as someone else) and checks
// the answer against `allows`. The operations enforce it; this table says what
// each route asks of them. `{r}` stands for any record resource's name.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TokenAbility } from '../accounts/tokens.ts';
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
  // No account: the route itself asks for METRICS_TOKEN as a bearer token when one is set (src/http/metrics.ts).
  'GET /metrics': anyone,
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

  // A webhook's delivery log, test event, resends and new secret (the only {r} here: webhooks): its managers, admins.
  'GET /api/v1/{r}/:id/deliveries': records('read', { resource: 'webhooks', record: true }),
  'POST /api/v1/{r}/:id/deliveries/:delivery_id/resend': records('update', { resource: 'webhooks', record: true }),
  'POST /api/v1/{r}/:id/test': records('update', { resource: 'webhooks', record: true }),
  'POST /api/v1/{r}/:id/secret': records('update', { resource: 'webhooks', record: true }),
  'POST /{r}/:id/deliveries/:delivery_id/resend': records('update', { resource: 'webhooks', record: true }),
  'POST /{r}/:id/test': records('update', { resource: 'webhooks', record: true }),
  'POST /{r}/:id/secret': records('update', { resource: 'webhooks', record: true }),

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

/**
 * What a bearer token must be allowed (`abilities`, chosen when it is made) to call a signed-in route: one ability, or
 * one the body chooses (`byBody`: a bulk action updates or deletes), checked once the body is read. A session may do
 * all four.
 */
export type AbilityRule = TokenAbility | { byBody: (body: unknown) => TokenAbility };

const bulkAction = (body: unknown) => (body as { action?: unknown } | null)?.action;

/**
 * The token ability of each signed-in route whose method does not say it. By method: GET and HEAD read, PATCH and PUT
 * update, DELETE deletes, and `POST /api/v1/{r}` and `POST /{r}` create; every other signed-in POST is listed here
 * (the boot refuses one that is not), by what it does. A line here also overrides the method's.
 */
export const TOKEN_ABILITY: Readonly<Record<string, AbilityRule>> = {
  'POST /api/v1/auth/email/verification-notification': 'update',
  'POST /verify-email': 'update',
  // One's own account: the same ability as the API's PATCH/DELETE for the page's POSTs that do the same.
  'POST /api/v1/me/confirm-password': 'update',
  'POST /api/v1/me/avatar': 'update',
  'POST /api/v1/me/two-factor': 'update',
  'POST /api/v1/me/two-factor/confirm': 'update',
  'POST /api/v1/me/two-factor/recovery-codes': 'update',
  'POST /api/v1/me/tokens': 'create',
  'POST /api/v1/me/notifications/read': 'update',
  'POST /notifications/read': 'update',
  'POST /profile': 'update',
  'POST /profile/avatar': 'update',
  'POST /profile/avatar/delete': 'delete',
  'POST /profile/password': 'update',
  'POST /profile/two-factor': 'update',
  'POST /profile/two-factor/confirm': 'update',
  'POST /profile/two-factor/recovery-codes': 'update',
  'POST /profile/two-factor/disable': 'delete',
  'POST /profile/tokens': 'create',
  'POST /profile/tokens/:id/delete': 'delete',
  'POST /profile/sessions/delete': 'delete',
  'POST /profile/delete': 'delete',
  // Tries the assignment rules on the fields sent; writes nothing, takes no turn.
  'POST /api/v1/{r}/dry-run': 'read',
  'POST /settings': 'update',
  // Bringing back from the trash, merging and its undo change records that stay.
  'POST /api/v1/trash/:change_id/restore': 'update',
  'POST /trash/:change_id/restore': 'update',
  'POST /api/v1/{r}/merge': 'update',
  'POST /api/v1/{r}/merge/:merge_id/undo': 'update',
  'POST /{r}/merge': 'update',
  'POST /{r}/merge/:merge_id/undo': 'update',
  // An import creates (the wizard's preview is its dry run); rolling one back deletes what it created.
  'POST /api/v1/{r}/import': 'create',
  'POST /{r}/import': 'create',
  'POST /{r}/import/:id/preview': 'create',
  'POST /{r}/import/:id/run': 'create',
  'POST /api/v1/imports/:id/rollback': 'delete',
  'POST /imports/:id/rollback': 'delete',
  // A webhook's test event, resends and new secret (the only {r} here: webhooks).
  'POST /api/v1/{r}/:id/deliveries/:delivery_id/resend': 'update',
  'POST /api/v1/{r}/:id/test': 'update',
  'POST /api/v1/{r}/:id/secret': 'update',
  'POST /{r}/:id/deliveries/:delivery_id/resend': 'update',
  'POST /{r}/:id/test': 'update',
  'POST /{r}/:id/secret': 'update',
  'POST /api/v1/{r}/:id/restore': 'update',
  'POST /{r}/:id/restore': 'update',
  'POST /api/v1/{r}/:id/notes': 'create',
  'POST /{r}/:id/notes': 'create',
  'POST /{r}/:id/tasks': 'create',
  // The pages' edit form, its delete, and the one-click changes from a record's page or the board.
  'POST /{r}/:id': 'update',
  'POST /{r}/:id/delete': 'delete',
  'POST /{r}/:id/cycle/:field': 'update',
  'POST /{r}/:id/stage': 'update',
  'POST /{r}/:id/copy': 'update',
  'POST /{r}/:id/done': 'update',
  // A list's columns are the viewer's saved setting; a saved view is a new record.
  'POST /{r}/columns': 'update',
  'POST /{r}/views': 'create',
  'POST /api/v1/{r}/bulk': { byBody: (body) => (bulkAction(body) === 'delete' ? 'delete' : 'update') },
  // The page's bulk bar may also export the ticked rows (a redirect to the CSV).
  'POST /{r}/bulk': {
    byBody: (body) => {
      const action = bulkAction(body);
      return action === 'delete' ? 'delete' : action === 'export' ? 'read' : 'update';
    },
  },
};

const BY_METHOD: Readonly<Record<string, TokenAbility>> = {
  GET: 'read',
  HEAD: 'read',
  OPTIONS: 'read',
  PATCH: 'update',
  PUT: 'update',
  DELETE: 'delete',
};

/** The token ability a route needs (`key` as the tables write it), or undefined when nothing says. */
export function tokenAbilityOf(key: string): AbilityRule | undefined {
  const declared = TOKEN_ABILITY[key];
  if (declared) return declared;
  const [method = '', path = ''] = key.split(' ');
  if (method === 'POST' && (path === '/api/v1/{r}' || path === '/{r}')) return 'create';
  return BY_METHOD[method];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The token ability each method of a signed-in route needs (set from the tables as the route is added). */
    tokenAbility?: Readonly<Record<string, AbilityRule>>;
  }
}

export interface DeclaredRoute {
  method: string;
  url: string;
  /** The record resource the route serves, if any. */
  resource?: string;
  access: RouteAccess;
  /** What a token must be allowed to call it; undefined: anyone may call it. */
  ability?: AbilityRule;
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
 * Checks every route against the tables as it is added (a route without a rule, or a signed-in one without a token
 * ability, stops the boot), hands the route its token ability (auth.ts checks it) and keeps the list for the route ×
 * role test.
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
      const ability = access.to === 'anyone' ? undefined : tokenAbilityOf(key);
      if (access.to !== 'anyone' && !ability)
        throw new Error(`route ${key} has no token ability in src/http/access.ts (TOKEN_ABILITY): say what it does`);
      if (ability)
        route.config = { ...route.config, tokenAbility: { ...route.config?.tokenAbility, [method]: ability } };
      routes.push({ method, url: route.url, resource, access, ability });
    }
  });
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route of an app with its rule, as the boot checked them. */
export const declaredRoutes = (app: FastifyInstance): readonly DeclaredRoute[] => declared.get(app) ?? [];
