import { FAVORITES_ROUTES } from './favorites/routes';
import type { ApiTable } from '../shared/http/route-table';

/**
 * The catalog API (spec document 1), served under `/api`. One hop from here to each handler: see
 * `api.ts` → `endpoints/index.ts` (fn `catalog`) and `favorites/api.ts` → `favorites/endpoints.ts` (fn `favorites`). The
 * catalog function answers the `$default` catch-all for the whole table, so 404s, 405s (with the
 * `Allow` of the path) and CORS preflights of the favorites paths come from it too.
 */
export const CATALOG_API: ApiTable = {
  catchAllFn: 'catalog',
  prefix: '/api',
  routes: [
    { method: 'GET', path: '/api/mcps', fn: 'catalog', operationId: 'listServers' },
    { method: 'GET', path: '/api/mcps/{slug}', fn: 'catalog', operationId: 'getServer' },
    { method: 'GET', path: '/api/mcps/{slug}/health', fn: 'catalog', operationId: 'getServerHealth' },
    { method: 'GET', path: '/api/mcps/{slug}/changes', fn: 'catalog', operationId: 'listServerChanges' },
    { method: 'GET', path: '/api/search', fn: 'catalog', operationId: 'searchServers' },
    { method: 'GET', path: '/api/autocomplete', fn: 'catalog', operationId: 'autocomplete' },
    { method: 'GET', path: '/api/categories', fn: 'catalog', operationId: 'listCategories' },
    { method: 'GET', path: '/api/languages', fn: 'catalog', operationId: 'listLanguages' },
    { method: 'GET', path: '/api/licenses', fn: 'catalog', operationId: 'listLicenses' },
    { method: 'GET', path: '/api/facets', fn: 'catalog', operationId: 'getFacets' },
    { method: 'GET', path: '/api/slugs', fn: 'catalog', operationId: 'listSlugs' },
    { method: 'GET', path: '/api/icons/{slug}', fn: 'catalog', operationId: 'getIcon' },
    { method: 'GET', path: '/api/v0.1/servers', fn: 'catalog', operationId: 'listRegistryServers' },
    // The name is one path segment, URL-encoded (`io.github.acme%2Fweather`), as the registry's OpenAPI has it.
    { method: 'GET', path: '/api/v0.1/servers/{serverName}/versions', fn: 'catalog', operationId: 'listRegistryServerVersions' },
    { method: 'GET', path: '/api/v0.1/servers/{serverName}/versions/{version}', fn: 'catalog', operationId: 'getRegistryServerVersion' },
    { method: 'GET', path: '/api/openapi.json', fn: 'catalog', operationId: 'getOpenApi' },
    ...FAVORITES_ROUTES,
  ],
};
