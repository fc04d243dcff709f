/**
 * Runtime configuration, read once from the environment. Every limit is configuration with the
 * spec's value as the default (DECISIONS): environment variables locally, props in CDK.
 */
import { envBool, envNumber, envString, type Env } from '../shared/env';
import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';
import { loadClientOptions, type ClientOptions } from '../shared/aws/clients';

/** A whole number written as digits only (0 allowed; `1e3`, `1.5` and `-1` are refused). */
function count(env: Env, name: string, fallback: number): number {
  const v = envString(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
  return Number(v);
}

export interface RateTier {
  /** Sustained requests per second. */
  rate: number;
  /** Bucket size. */
  burst: number;
}

export interface CatalogConfig extends ClientOptions {
  catalogTable: string;
  rateLimitTable: string;
  iconsBucket: string;
  searchBackend: 'embedded' | 'opensearch';
  opensearchUrl?: string;
  opensearchIndex: string;
  /** Embedded engine's snapshot file (shared between writers and the server). */
  searchSnapshotPath?: string;
  /** Embedded engine in AWS: the bucket of its snapshot object (the small-catalog mode; see search/s3-snapshot.ts). */
  searchSnapshotBucket?: string;
  /** The snapshot object's key. */
  searchSnapshotKey: string;
  /** How often a catalog instance asks S3 for a new snapshot generation, in seconds. */
  searchSnapshotRefreshSeconds: number;
  /** `io.<brand>.catalog/v0` in the registry feed's `_meta`. */
  brand: string;
  /** e.g. `https://mcp.example.com/servers/{slug}`; CatalogMeta.url is omitted when unset. */
  siteUrlTemplate?: string;
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
  /** And the most they may hold, in MB. */
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
  const backend = envString(env, 'SEARCH_BACKEND') ?? 'embedded';
  if (backend !== 'embedded' && backend !== 'opensearch') throw new Error(`SEARCH_BACKEND must be embedded or opensearch`);
  return {
    catalogTable: envString(env, 'CATALOG_TABLE') ?? 'catalog',
    rateLimitTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    iconsBucket: envString(env, 'ICONS_BUCKET') ?? 'icons',
    ...loadClientOptions(env),
    searchBackend: backend,
    opensearchUrl: envString(env, 'OPENSEARCH_URL'),
    opensearchIndex: envString(env, 'OPENSEARCH_INDEX') ?? 'catalog',
    searchSnapshotPath: envString(env, 'SEARCH_SNAPSHOT_PATH'),
    searchSnapshotBucket: envString(env, 'SEARCH_SNAPSHOT_BUCKET'),
    searchSnapshotKey: envString(env, 'SEARCH_SNAPSHOT_KEY') ?? 'search/catalog-index.json.gz',
    searchSnapshotRefreshSeconds: count(env, 'SEARCH_SNAPSHOT_REFRESH_SECONDS', 60),
    brand: envString(env, 'CATALOG_BRAND') ?? 'example',
    siteUrlTemplate: envString(env, 'SITE_URL_TEMPLATE'),
    anonymous: { rate: envNumber(env, 'RATE_ANON_RPS', 30, { positive: true }), burst: envNumber(env, 'RATE_ANON_BURST', 60, { positive: true }) },
    authenticated: { rate: envNumber(env, 'RATE_USER_RPS', 100, { positive: true }), burst: envNumber(env, 'RATE_USER_BURST', 200, { positive: true }) },
    rateLimiter: loadLeasingOptions(env),
    rateBatchTakes: envBool(env, 'RATE_BATCH_TAKES', true),
    responseCacheEntries: count(env, 'RESPONSE_CACHE_ENTRIES', 4096),
    responseCacheMb: envNumber(env, 'RESPONSE_CACHE_MB', 32, { positive: true }),
    cursorKeysFile: envString(env, 'CURSOR_KEYS_FILE'),
    cursorSecretArn: envString(env, 'CURSOR_SECRET_ARN'),
    originVerifySecret: envString(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: envString(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}
