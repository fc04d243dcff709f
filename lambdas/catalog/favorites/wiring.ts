import { DynamoCatalogStore } from '../../catalog-core';
import { sharedLimiter } from '../../shared/rate-limit/leasing-config';
import { documentClient, dynamoClient } from '../../shared/aws/clients';
import type { CatalogConfig } from '../config';
import { originSecretGetter } from '../../shared/secrets';
import type { TokenVerifier } from '../../identity/verifier';
import type { FavoritesConfig, FavoritesDeps } from './deps';
import { DynamoFavoritesStore } from './store';

/**
 * Builds the favorites dependencies. The verifier is passed in (`createIdentity` in AWS, the
 * local stack's own locally) so one instance, with its JWKS and token caches, serves the function.
 */
export async function createFavoritesDeps(catalogConfig: CatalogConfig, favoritesConfig: FavoritesConfig, verifier: TokenVerifier): Promise<FavoritesDeps> {
  const ddb = dynamoClient({ region: catalogConfig.region, dynamoEndpoint: catalogConfig.dynamoEndpoint });
  const doc = documentClient(ddb);

  const originSecret = await originSecretGetter({
    value: catalogConfig.originVerifySecret,
    arn: catalogConfig.originVerifySecretArn,
    region: catalogConfig.region,
  });

  return {
    catalogConfig,
    favoritesConfig,
    verifier,
    favorites: new DynamoFavoritesStore(doc, favoritesConfig.favoritesTable),
    catalog: new DynamoCatalogStore(doc, catalogConfig.catalogTable),
    limiter: sharedLimiter(ddb, catalogConfig.rateLimitTable, catalogConfig.rateLimiter),
    originSecret,
  };
}
