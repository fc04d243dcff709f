/**
 * The catalog API's configuration over the core's (where the catalog is kept and searched,
 * `lambdas/catalog-core/config.ts`), read once from the environment. Every limit is configuration with the
 * spec's value as the default (DECISIONS): environment variables locally, props in CDK.
 */
import { loadCatalogStoreConfig, type CatalogStoreConfig } from '../catalog-core';
import { envBool, envCount, envNumber, envString } from '../shared/env';
import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';

export interface RateTier {
  /** Sustained requests per second. */
  rate: number;
  /** Bucket size. */
  burst: number;
}

export interface CatalogConfig extends CatalogStoreConfig {
  rateLimitTable: string;
  anonymous: RateTier;
  authenticated: RateTier;
  /** The shared limiter's leases and provisional allowance (`RATE_LEASE_FRACTION`, `RATE_PROVISIONAL_TOKENS`). */
  rateLimiter: LeasingOptions;
  /**
   * The catalog reads' limiter sends the table calls of concurrent new callers in batches
   * (`RATE_BATCH_TAKES`, on by default; `dynamo-rate-limiter.ts`). Only the catalog read function
   * has the PartiQL permissions it needs; favorites and the site take one call per caller.
   */
  rateBatchTakes: boolean;
  /** Whole responses kept per instance for index-backed reads (0 disables; see response-cache.ts). */
  responseCacheEntries: number;
  /**
   * And the most they may hold, in MB: by default a quarter of the function's memory (Lambda's
   * `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`; 1024, the catalog function's size, where there is none), as
   * the memory APIs size their caches. 256 MB holds about 15,000 list pages of 17 KB.
   */
  responseCacheMb: number;
  /** Cursor keys: a JSON file locally, a Secrets Manager secret in AWS. */
  cursorKeysFile?: string;
  cursorSecretArn?: string;
  /** Secret header value CloudFront adds; when set, only then is CloudFront-Viewer-Address trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

export function loadCatalogConfig(): CatalogConfig {
  const env = process.env;
  return {
    ...loadCatalogStoreConfig(env),
    rateLimitTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    anonymous: { rate: envNumber(env, 'RATE_ANON_RPS', 30, { positive: true }), burst: envNumber(env, 'RATE_ANON_BURST', 60, { positive: true }) },
    authenticated: { rate: envNumber(env, 'RATE_USER_RPS', 100, { positive: true }), burst: envNumber(env, 'RATE_USER_BURST', 200, { positive: true }) },
    rateLimiter: loadLeasingOptions(env),
    rateBatchTakes: envBool(env, 'RATE_BATCH_TAKES', true),
    responseCacheEntries: envCount(env, 'RESPONSE_CACHE_ENTRIES', 50_000),
    responseCacheMb: envNumber(env, 'RESPONSE_CACHE_MB', Math.floor(envNumber(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 1024, { positive: true }) / 4), {
      positive: true,
    }),
    cursorKeysFile: envString(env, 'CURSOR_KEYS_FILE'),
    cursorSecretArn: envString(env, 'CURSOR_SECRET_ARN'),
    originVerifySecret: envString(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: envString(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}
