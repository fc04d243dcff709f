import { loadCatalogConfig } from '../../shared/config';
import { loadAuthConfig } from '../../identity/config';
import { createIdentity } from '../../identity/wiring';
import { createFavoritesHandler } from './api';
import { loadFavoritesConfig, type FavoritesDeps } from './deps';
import { createFavoritesDeps } from './wiring';

/** The favorites Lambda (AWS): `GET|POST /api/favorites`, `DELETE /api/favorites/{slug}`. */
let deps: Promise<FavoritesDeps> | undefined;

function init(): Promise<FavoritesDeps> {
  const auth = createIdentity(loadAuthConfig());
  return createFavoritesDeps(loadCatalogConfig(), loadFavoritesConfig(), auth.verifier);
}

export const handler = createFavoritesHandler(() => {
  deps ??= init().catch((err: unknown) => {
    deps = undefined; // a failed init (e.g. Secrets Manager throttled) is retried by the next request
    throw err;
  });
  return deps;
});
