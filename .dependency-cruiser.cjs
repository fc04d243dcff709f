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

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'modules form no cycle', from: {}, to: { circular: true } },
    feature('shared', []),
    feature('identity', ['lambdas/shared/']),
    feature('oauth', ['lambdas/identity/', 'lambdas/shared/']),
    // Transitional (the move of the catalog core): the core still reads the catalog's configuration.
    feature('catalog-core', ['lambdas/catalog/config', 'lambdas/shared/']),
    feature('catalog', ['lambdas/catalog-core/', 'lambdas/identity/', 'lambdas/shared/']),
    // The crawler is built on the catalog's domain, its ports' adapters and its search adapters, never on its API.
    feature('crawler', ['lambdas/catalog-core/', 'lambdas/catalog/config', 'lambdas/shared/']),
    feature('memory', ['lambdas/shared/']),
    feature('memory-api', ['lambdas/memory/', 'lambdas/identity/', 'lambdas/shared/']),
    feature('mcp', ['lambdas/memory/', 'lambdas/identity/', 'lambdas/shared/']),
    feature('site', ['lambdas/catalog-core/', 'lambdas/catalog/', 'lambdas/identity/', 'lambdas/shared/']),
    feature('edge', []),
    // Operations functions (the Lambda@Edge log retention sweep): shared helpers only.
    feature('ops', ['lambdas/shared/']),
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
