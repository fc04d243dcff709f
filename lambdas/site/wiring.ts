import {
  DynamoCatalogStore,
  DynamoTrustStore,
  loadCatalogStoreConfig,
  searchIndexForReads,
  CachedAllowList,
  S3AllowListStore,
  type AllowList,
  type CatalogStore,
  type CatalogStoreConfig,
  type SearchIndex,
} from '../catalog-core';
import { s3Config } from '../shared/aws/clients';
import { traced } from '../shared/observability/tracing';
import { documentClient, dynamoClient } from '../shared/aws/clients';
import { sharedLimiter } from '../shared/rate-limit/leasing-config';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import type { OriginSecretGetter } from '../shared/http/origin-guard';
import { originSecretGetter } from '../shared/secrets';
import type { SiteConfig } from './config';
import type { SiteDeps } from './deps';

/**
 * The site's dependencies: the catalog's store and index (the same adapters `/api` reads through),
 * the shared limiter, the origin secret. The local stack passes the objects its catalog function
 * already holds; the Lambda builds them from the catalog's configuration (OpenSearch in AWS).
 */
export async function createSiteDeps(
  config: SiteConfig,
  parts: {
    store: Pick<CatalogStore, 'get'>;
    index: SearchIndex;
    trust?: SiteDeps['trust'];
    limiter?: RateLimiter;
    originSecret?: OriginSecretGetter;
    now?: () => number;
    allowList?: { current(): Promise<AllowList | undefined> };
  },
): Promise<SiteDeps> {
  const originSecret =
    parts.originSecret ??
    (await originSecretGetter({ value: config.originVerifySecret, arn: config.originVerifySecretArn, region: process.env.AWS_REGION ?? 'us-east-1' }));
  return {
    config,
    store: parts.store,
    index: parts.index,
    ...(parts.trust && { trust: parts.trust }),
    ...(parts.limiter && { limiter: parts.limiter }),
    ...(parts.allowList && { allowList: parts.allowList }),
    originSecret,
    now: parts.now ?? Date.now,
  };
}

/**
 * In AWS: DynamoDB for a server's page, the catalog's search engine for lists and search (OpenSearch,
 * or in the small-catalog mode the S3 snapshot, as the catalog function reads it), the shared
 * rate-limit table.
 */
export async function createAwsSiteDeps(config: SiteConfig, catalog: CatalogStoreConfig = loadCatalogStoreConfig()): Promise<SiteDeps> {
  const ddb = dynamoClient({ region: catalog.region, dynamoEndpoint: catalog.dynamoEndpoint });
  const index = await searchIndexForReads(catalog);
  return createSiteDeps(config, {
    store: new DynamoCatalogStore(documentClient(ddb), catalog.catalogTable),
    index,
    trust: new DynamoTrustStore(documentClient(ddb), catalog.trustTable, catalog.checkRetentionDays),
    limiter: sharedLimiter(ddb, config.rateLimitTable, config.rateLimiter),
    // Read only (the org function writes it); the same per-instance cache as the org registry's.
    allowList: new CachedAllowList(
      new S3AllowListStore((mod) => traced(new mod.S3Client(s3Config({ region: catalog.region, s3Endpoint: catalog.s3Endpoint }))), catalog.allowList),
      catalog.allowListRefreshSeconds * 1000,
    ),
  });
}
