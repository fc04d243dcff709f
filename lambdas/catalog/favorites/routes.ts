import type { RouteDef } from '../../shared/http/route-table';

/**
 * The favorites routes (spec 1), to merge into the catalog's route table: same `/api` prefix and
 * catch-all, served by the `favorites` function. The catalog's catch-all then answers their CORS
 * preflights (204) and wrong verbs (405 `Allow: GET, POST` / `Allow: DELETE`) from the merged table.
 */
export const FAVORITES_ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/api/favorites', fn: 'favorites', operationId: 'listFavorites' },
  { method: 'POST', path: '/api/favorites', fn: 'favorites', operationId: 'addFavorite' },
  { method: 'DELETE', path: '/api/favorites/{slug}', fn: 'favorites', operationId: 'removeFavorite' },
];
