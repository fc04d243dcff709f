import type { CatalogStore } from '../../catalog-core';
import type { OriginSecretGetter } from '../../shared/http/origin-guard';
import type { CatalogConfig } from '../config';
import type { RateLimiter } from '../../shared/rate-limit/rate-limiter';
import type { TokenVerifier } from '../../identity/verifier';
import type { FavoritesStore } from './store';

export interface FavoritesConfig {
  favoritesTable: string;
  /** Pins per user (DECISIONS: at most 1,000). */
  maxFavorites: number;
}

export function loadFavoritesConfig(env: Record<string, string | undefined> = process.env): FavoritesConfig {
  const raw = env.FAVORITES_MAX;
  const max = raw === undefined || raw === '' ? 1000 : Number(raw);
  if (!Number.isInteger(max) || max < 1) throw new Error(`FAVORITES_MAX must be a positive integer, got "${raw}"`);
  return { favoritesTable: env.FAVORITES_TABLE || 'favorites', maxFavorites: max };
}

/** Everything a favorites handler may use, injected so tests and the local stack swap adapters only. */
export interface FavoritesDeps {
  /** The catalog's configuration: rate tiers (the same buckets as catalog reads), origin secret. */
  catalogConfig: CatalogConfig;
  favoritesConfig: FavoritesConfig;
  verifier: TokenVerifier;
  favorites: FavoritesStore;
  /** Whether a slug is (still) in the catalog, and the records GET /favorites shows. */
  catalog: Pick<CatalogStore, 'getRecord'>;
  limiter: RateLimiter;
  originSecret: OriginSecretGetter;
}
