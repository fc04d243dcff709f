import type { ApiTable } from '../../shared/http/route-table';

/**
 * The organisation registry (README "Organisation registry"): the official registry's read routes
 * under `/org/v0.1`, serving only the servers the organisation's allow-list allows, and the admin
 * API that reads and replaces the allow-list. One function (`org`) answers the table and its
 * catch-all (`/org` and `/org/{proxy+}` in AWS), so 404s, 405s and CORS preflights under `/org`
 * come in the registry's shape with the headers IDEs need.
 */
export const ORG_FN = 'org';

export const ORG_API: ApiTable = {
  catchAllFn: ORG_FN,
  prefix: '/org',
  routes: [
    { method: 'GET', path: '/org/v0.1/servers', fn: ORG_FN, operationId: 'listOrgServers' },
    // The name is one path segment, URL-encoded (`io.github.acme%2Fweather`), as the registry's OpenAPI has it.
    { method: 'GET', path: '/org/v0.1/servers/{serverName}/versions', fn: ORG_FN, operationId: 'listOrgServerVersions' },
    { method: 'GET', path: '/org/v0.1/servers/{serverName}/versions/{version}', fn: ORG_FN, operationId: 'getOrgServerVersion' },
    { method: 'GET', path: '/org/admin/allow-list', fn: ORG_FN, operationId: 'getAllowList' },
    { method: 'PUT', path: '/org/admin/allow-list', fn: ORG_FN, operationId: 'putAllowList' },
  ],
};

/** The admin API's operations: a verified member of the admin group only. */
export const ORG_ADMIN_OPERATIONS: ReadonlySet<string> = new Set(['getAllowList', 'putAllowList']);
