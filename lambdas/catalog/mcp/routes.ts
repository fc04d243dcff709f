import type { ApiTable } from '../../shared/http/route-table';

/** Where the catalog answers over MCP. */
export const CATALOG_MCP_PATH = '/api/mcp';

/**
 * `/api/mcp`, served by the catalog function (`fn: 'catalog'`): the HTTP API routes `POST /api/mcp`
 * to it, and every other verb reaches it through the catalog's `$default` catch-all, where the
 * function hands the path to this endpoint's pipeline (405 with `Allow: POST`, CORS preflights).
 * Locally the catalog's mount under `/api` does the same.
 */
export const CATALOG_MCP_API: ApiTable = {
  catchAllFn: 'catalog',
  prefix: CATALOG_MCP_PATH,
  routes: [{ method: 'POST', path: CATALOG_MCP_PATH, fn: 'catalog', operationId: 'catalogMcp' }],
};
