import { CachedAllowList, DynamoCatalogStore, DynamoTrustStore, S3AllowListStore, S3IconStore, type SearchIndex } from '../catalog-core';
import { logger } from '../shared/logger';
import { sharedLimiter } from '../shared/rate-limit/leasing-config';
import { AnonymousCallers, BearerCallers } from './callers';
import type { TokenVerifier } from '../identity/verifier';
import { dynamoClient, documentClient, s3Config } from '../shared/aws/clients';
import { traced } from '../shared/observability/tracing';
import type { CatalogConfig } from './config';
import { cursorCodec, originSecretGetter, secretsClient } from '../shared/secrets';
import type { CatalogDeps } from './deps';

/**
 * Builds the catalog's dependencies from configuration. The search index is passed in: the Lambda
 * entry gives the OpenSearch adapter, the local stack the embedded one (so neither bundle carries
 * the other engine). With a token verifier, a valid bearer raises the caller to the per-user tier
 * (`BearerCallers`); without one every caller is anonymous, keyed by IP.
 */
export async function createCatalogDeps(config: CatalogConfig, index: SearchIndex, verifier?: TokenVerifier): Promise<CatalogDeps> {
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const ddb = dynamoClient(clientOpts);
  const secrets = config.cursorSecretArn || config.originVerifySecretArn ? await secretsClient(config.region) : undefined;
  const cursors = await cursorCodec({ file: config.cursorKeysFile, arn: config.cursorSecretArn, region: config.region }, secrets);
  const originSecret = await originSecretGetter({ value: config.originVerifySecret, arn: config.originVerifySecretArn, region: config.region }, secrets);

  return {
    config,
    store: new DynamoCatalogStore(documentClient(ddb), config.catalogTable),
    trust: new DynamoTrustStore(documentClient(ddb), config.trustTable, config.checkRetentionDays),
    index,
    icons: new S3IconStore((mod) => traced(new mod.S3Client(s3Config(clientOpts))), config.iconsBucket),
    limiter: sharedLimiter(ddb, config.rateLimitTable, config.rateLimiter, { batch: config.rateBatchTakes }),
    cursors,
    callers: verifier ? new BearerCallers(verifier, config, originSecret) : new AnonymousCallers(config, originSecret),
    originSecret,
    // Read only (the org function writes it), as the site reads it; its S3 client is made by the first read.
    allowList: new CachedAllowList(
      new S3AllowListStore((mod) => traced(new mod.S3Client(s3Config(clientOpts))), config.allowList),
      config.allowListRefreshSeconds * 1000,
      (err) => logger.warn('the allow-list file does not parse; serving the last good one', { err: err instanceof Error ? err.message : String(err) }),
    ),
  };
}
