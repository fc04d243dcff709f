import { loadCatalogConfig } from '../config';
import { loadAuthConfig } from '../../identity/config';
import { createIdentity } from '../../identity/wiring';
import { createFavoritesHandler } from './api';
import { loadFavoritesConfig, type FavoritesDeps } from './deps';
import { createFavoritesDeps } from './wiring';
import { retryingOnce } from '../../shared/concurrency';

/** The favorites Lambda (AWS): `GET|POST /api/favorites`, `DELETE /api/favorites/{slug}`. */
function init(): Promise<FavoritesDeps> {
  const auth = createIdentity(loadAuthConfig());
  return createFavoritesDeps(loadCatalogConfig(), loadFavoritesConfig(), auth.verifier);
}

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createFavoritesHandler(retryingOnce(init));
