/**
 * The module boundaries of lambdas/ (DESIGN "Layout"): each feature imports `shared`, `identity`
 * and the core it is built on, never a sibling, and nothing imports back up. `npm test` runs it
 * (`npm run boundaries`). A rule here is a design decision: change it only with the README's map.
 */
const feature = (name, allowed) => ({
  name: `${name}-imports`,
  comment: `lambdas/${name} may import only ${allowed.length ? allowed.join(', ') : 'itself'} (and packages)`,
  severity: 'error',
  from: { path: `^lambdas/${name}/` },
  to: { path: '^(lambdas|bin|lib|test|layers)/', pathNot: [`^lambdas/${name}/`, ...allowed.map((a) => `^${a}`)] },
});

/** The catalog core's public face (lambdas/catalog-core/index.ts): all a feature may import of the core. */
const CATALOG_CORE = 'lambdas/catalog-core/index\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'modules form no cycle', from: {}, to: { circular: true } },
    feature('shared', []),
    feature('identity', ['lambdas/shared/']),
    feature('oauth', ['lambdas/identity/', 'lambdas/shared/']),
    // The catalog core (domain, ports, adapters, search): shared helpers only.
    feature('catalog-core', ['lambdas/shared/']),
    // The catalog's HTTP API, the site and the crawler are built on the core through its one face, never on its internals.
    feature('catalog', [CATALOG_CORE, 'lambdas/identity/', 'lambdas/shared/']),
    // The catalog's MCP endpoint (served by the catalog function) is built on the core's face and shared only, not on the JSON API around it.
    feature('catalog/mcp', [CATALOG_CORE, 'lambdas/shared/']),
    feature('crawler', [CATALOG_CORE, 'lambdas/shared/']),
    feature('memory', ['lambdas/shared/']),
    feature('memory-api', ['lambdas/memory/', 'lambdas/identity/', 'lambdas/shared/']),
    feature('mcp', ['lambdas/memory/', 'lambdas/identity/', 'lambdas/shared/']),
    feature('site', [CATALOG_CORE, 'lambdas/identity/', 'lambdas/shared/']),
    feature('edge', []),
    // Operations functions (the Lambda@Edge log retention sweep): shared helpers only.
    feature('ops', ['lambdas/shared/']),
    {
      name: 'tooling-through-catalog-core-face',
      comment: 'the local stack and the CLIs use the catalog core through its face too',
      severity: 'error',
      from: { path: '^bin/', pathNot: '^bin/bench/' },
      to: { path: '^lambdas/catalog-core/', pathNot: `^${CATALOG_CORE}` },
    },
    {
      name: 'benches-through-catalog-core-face',
      comment: 'benches use the face; those that measure a search engine itself (relevance, the S3 snapshot) may reach its search modules',
      severity: 'error',
      from: { path: '^bin/bench/' },
      to: { path: '^lambdas/catalog-core/', pathNot: [`^${CATALOG_CORE}`, '^lambdas/catalog-core/search/'] },
    },
    {
      name: 'check-function-stays-narrow',
      comment:
        "the check function's entry reaches neither the crawl's unit and wiring nor the classifier or the registry schemas: they are built at module init and a check uses none of them (BENCHMARKS.md, module init)",
      severity: 'error',
      from: { path: '^lambdas/crawler/check-handler\\.ts$' },
      to: { path: '^lambdas/crawler/(unit|wiring|crawler|domain/classify|domain/server-schema)\\.ts$', reachable: true },
    },
    {
      name: 'no-feature-into-tooling',
      comment: 'code that runs in a Lambda never imports the local stack, the CDK app or tests',
      severity: 'error',
      from: { path: '^lambdas/' },
      to: { path: '^(bin|lib|test)/' },
    },
    {
      name: 'cdk-reads-data-only',
      comment: 'the CDK app reads route tables, table definitions, configuration and the scope names from lambdas/ (types too), never runtime code',
      severity: 'error',
      from: { path: '^lib/' },
      to: {
        path: '^lambdas/',
        pathNot: ['/routes\\.ts$', '/tables\\.ts$', '/route-table\\.ts$', '/config\\.ts$', '/env\\.ts$', '^lambdas/identity/principal\\.ts$', '/domain/types\\.ts$', '^lambdas/shared/'],
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)(node_modules|cdk\\.out|\\.data)/' },
  },
};
