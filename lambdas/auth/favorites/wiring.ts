import { DynamoCatalogStore } from '../../catalog/adapters/dynamo-catalog-store';
import { documentClient, dynamoClient } from '../../shared/aws/clients';
import type { CatalogConfig } from '../../shared/config';
import { DynamoTokenBuckets } from '../../shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../../shared/rate-limit/rate-limiter';
import { CachedSecret, secretsClient } from '../../shared/secrets';
import type { TokenVerifier } from '../verifier';
import type { FavoritesConfig, FavoritesDeps } from './deps';
import { DynamoFavoritesStore } from './store';

/**
 * Builds the favorites dependencies. The verifier is passed in (`createAuthDeps` in AWS, the
 * local stack's own locally) so one instance, with its JWKS and token caches, serves the function.
 */
export async function createFavoritesDeps(
  catalogConfig: CatalogConfig,
  favoritesConfig: FavoritesConfig,
  verifier: TokenVerifier,
): Promise<FavoritesDeps> {
  const ddb = dynamoClient({ region: catalogConfig.region, dynamoEndpoint: catalogConfig.dynamoEndpoint });
  const doc = documentClient(ddb);

  let originSecret: () => string | undefined = () => catalogConfig.originVerifySecret;
  if (!catalogConfig.originVerifySecret && catalogConfig.originVerifySecretArn) {
    const cached = new CachedSecret(await secretsClient(catalogConfig.region), catalogConfig.originVerifySecretArn);
    await cached.get();
    // Refreshed in the background: a request never waits for Secrets Manager after init.
    originSecret = () => {
      void cached.get().catch(() => undefined);
      return cached.peek();
    };
  }

  return {
    catalogConfig,
    favoritesConfig,
    verifier,
    favorites: new DynamoFavoritesStore(doc, favoritesConfig.favoritesTable),
    catalog: new DynamoCatalogStore(doc, catalogConfig.catalogTable),
    limiter: new LeasingRateLimiter(new DynamoTokenBuckets(ddb, catalogConfig.rateLimitTable), { leaseFraction: catalogConfig.rateLeaseFraction }),
    originSecret,
  };
}
