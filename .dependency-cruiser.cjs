// Which folder of src/ may import which. Each folder's README.md says the same
// in words; `npm run lint` runs this (`depcruise src`).
const DOMAIN = '^src/(accounts|records|schema|derive|resources|db|webhooks)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules that import each other (directly or around a loop) load in an order that depends on who came first.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file (a typo, a moved module, a package missing from package.json).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'The app must run with production dependencies only: a devDependency is for tests, bench and scripts.',
      from: { path: '^src/', pathNot: '\\.test\\.tsx?$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'schema-stands-alone',
      severity: 'error',
      comment:
        'src/schema/ (field kinds, formats, defineResource) is the vocabulary everything else is written in: ' +
        'it imports npm packages and itself, nothing else of the app.',
      from: { path: '^src/schema/' },
      to: { path: '^src/', pathNot: '^src/schema/' },
    },
    {
      name: 'domain-not-fastify',
      severity: 'error',
      comment:
        'Domain code is called by the JSON API, the pages and the CLI alike: it knows nothing of Fastify ' +
        '(type imports included). HTTP glue lives in src/http/.',
      from: { path: DOMAIN },
      to: { path: '(^|/)node_modules/(fastify|@fastify/[^/]+|fastify-plugin)/' },
    },
    {
      name: 'domain-not-to-doors',
      severity: 'error',
      comment: 'Domain code does not import the doors that call it (src/http, src/cli) nor the app and server wiring.',
      from: { path: DOMAIN },
      to: { path: '^src/(http|cli)/|^src/(app|server|cluster)\\.tsx?$' },
    },
    {
      name: 'web-not-to-api',
      severity: 'error',
      comment:
        'The pages (src/http/web/) and the JSON API (src/http/api/) are two doors over the same operations: ' +
        'what both need lives in src/http/ beside them.',
      from: { path: '^src/http/web/' },
      to: { path: '^src/http/api/' },
    },
    {
      name: 'api-not-to-web',
      severity: 'error',
      comment: 'The JSON API does not render pages.',
      from: { path: '^src/http/api/' },
      to: { path: '^src/http/web/' },
    },
    {
      name: 'http-not-to-cli',
      severity: 'error',
      comment: 'The CLI starts the server, not the other way round.',
      from: { path: '^src/(http|accounts|records|schema|derive|resources|db)/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'derive-from-schema-only',
      severity: 'error',
      comment:
        'src/derive/ turns a declaration into API schemas, list queries and form values: pure functions of ' +
        'src/schema/ (and the shared AppError), without a database or a door.',
      from: { path: '^src/derive/' },
      to: { path: '^src/', pathNot: '^src/(derive|schema)/|^src/errors\\.ts$' },
    },
    {
      name: 'db-below-the-domain',
      severity: 'error',
      comment:
        'src/db/ (connection, dialect helpers, migrations) sits under the operations: it does not import ' +
        'records, accounts or derive.',
      from: { path: '^src/db/' },
      to: { path: '^src/(records|accounts|derive)/' },
    },
    {
      name: 'records-generic',
      severity: 'error',
      comment:
        'The generic record operations know no particular resource and no account action: a resource hands ' +
        'them its rules (src/resources/index.ts), there is no registry to import.',
      from: { path: '^src/records/' },
      to: { path: '^src/accounts/' },
    },
    {
      name: 'migrations-frozen',
      severity: 'error',
      comment:
        'A migration is frozen in time: it imports its versioned helpers (src/db/migrations/lib/) and npm ' +
        "packages, never the app's current code, so a later change to a declaration cannot rewrite history.",
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: '^src/db/migrations/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // `import type` counts: a type import of fastify still ties domain code to it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
    exclude: { path: '^src/db/migrations/snapshot\\.json$' },
  },
};
