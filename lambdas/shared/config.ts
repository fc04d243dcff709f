/**
 * Runtime configuration, read once from the environment. Every limit is configuration with the
 * spec's value as the default (DECISIONS): environment variables locally, props in CDK.
 */
function str(name: string, fallback: string): string {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
}

function optional(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === '' ? undefined : v;
}

function int(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
}

function count(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
  return Number(v);
}

function fraction(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name} must be a number from 0 to 1, got "${v}"`);
  return n;
}

export interface RateTier {
  /** Sustained requests per second. */
  rate: number;
  /** Bucket size. */
  burst: number;
}

export interface CatalogConfig {
  catalogTable: string;
  rateLimitTable: string;
  iconsBucket: string;
  /** Local endpoints (DynamoDB Local, the S3 server); undefined in AWS. */
  dynamoEndpoint?: string;
  s3Endpoint?: string;
  region: string;
  searchBackend: 'embedded' | 'opensearch';
  opensearchUrl?: string;
  opensearchIndex: string;
  /** Embedded engine's snapshot file (shared between writers and the server). */
  searchSnapshotPath?: string;
  /** `io.<brand>.catalog/v0` in the registry feed's `_meta`. */
  brand: string;
  /** e.g. `https://mcp.example.com/servers/{slug}`; CatalogMeta.url is omitted when unset. */
  siteUrlTemplate?: string;
  anonymous: RateTier;
  authenticated: RateTier;
  /** Share of the burst an instance leases from the shared bucket per DynamoDB call (0 = every request). */
  rateLeaseFraction: number;
  /** Whole responses kept per instance for index-backed reads (0 disables; see response-cache.ts). */
  responseCacheEntries: number;
  /** Cursor keys: a JSON file locally, a Secrets Manager secret in AWS. */
  cursorKeysFile?: string;
  cursorSecretArn?: string;
  /** Secret header value CloudFront adds; when set, only then is CloudFront-Viewer-Address trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

export function loadCatalogConfig(): CatalogConfig {
  const backend = str('SEARCH_BACKEND', 'embedded');
  if (backend !== 'embedded' && backend !== 'opensearch') throw new Error(`SEARCH_BACKEND must be embedded or opensearch`);
  return {
    catalogTable: str('CATALOG_TABLE', 'catalog'),
    rateLimitTable: str('RATE_LIMIT_TABLE', 'rate-limits'),
    iconsBucket: str('ICONS_BUCKET', 'icons'),
    dynamoEndpoint: optional('DYNAMODB_ENDPOINT'),
    s3Endpoint: optional('S3_ENDPOINT'),
    region: str('AWS_REGION', 'us-east-1'),
    searchBackend: backend,
    opensearchUrl: optional('OPENSEARCH_URL'),
    opensearchIndex: str('OPENSEARCH_INDEX', 'catalog'),
    searchSnapshotPath: optional('SEARCH_SNAPSHOT_PATH'),
    brand: str('CATALOG_BRAND', 'example'),
    siteUrlTemplate: optional('SITE_URL_TEMPLATE'),
    anonymous: { rate: int('RATE_ANON_RPS', 30), burst: int('RATE_ANON_BURST', 60) },
    authenticated: { rate: int('RATE_USER_RPS', 100), burst: int('RATE_USER_BURST', 200) },
    rateLeaseFraction: fraction('RATE_LEASE_FRACTION', 0.1),
    responseCacheEntries: count('RESPONSE_CACHE_ENTRIES', 512),
    cursorKeysFile: optional('CURSOR_KEYS_FILE'),
    cursorSecretArn: optional('CURSOR_SECRET_ARN'),
    originVerifySecret: optional('ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: optional('ORIGIN_VERIFY_SECRET_ARN'),
  };
}
