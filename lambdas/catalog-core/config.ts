/**
 * The catalog core's configuration: where the catalog is kept (the table, the icons bucket), which
 * search engine reads and writes it, and how the catalog names itself in registry records. Read
 * once from the environment by every function on the core (the catalog API, the site, the
 * crawler) and by the local stack; the HTTP API adds its own settings (`lambdas/catalog/config.ts`).
 */
import { loadClientOptions, type ClientOptions } from '../shared/aws/clients';
import { envCount, envString, type Env } from '../shared/env';

export interface CatalogStoreConfig extends ClientOptions {
  catalogTable: string;
  /** Health checks and tool changes per server (`tables.ts` TRUST_TABLE). */
  trustTable: string;
  /** Days a health check is kept (the trust table's TTL). */
  checkRetentionDays: number;
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
  /** `io.<brand>.catalog/v0` in the registry records' `_meta` (`views.ts`). */
  brand: string;
  /** e.g. `https://mcp.example.com/servers/{slug}`; the registry records' `_meta` url is omitted when unset. */
  siteUrlTemplate?: string;
  /** The organisation's allow-list file: bucket and key (`org/allow-list.ts`). */
  allowList: { bucket: string; key: string };
  /** How often an instance asks S3 whether the allow-list changed, in seconds (0: every request). */
  allowListRefreshSeconds: number;
}

export function loadCatalogStoreConfig(env: Env = process.env): CatalogStoreConfig {
  const backend = envString(env, 'SEARCH_BACKEND') ?? 'embedded';
  if (backend !== 'embedded' && backend !== 'opensearch') throw new Error(`SEARCH_BACKEND must be embedded or opensearch`);
  return {
    catalogTable: envString(env, 'CATALOG_TABLE') ?? 'catalog',
    trustTable: envString(env, 'TRUST_TABLE') ?? 'catalog-trust',
    checkRetentionDays: envCount(env, 'CHECK_RETENTION_DAYS', 90),
    iconsBucket: envString(env, 'ICONS_BUCKET') ?? 'icons',
    ...loadClientOptions(env),
    searchBackend: backend,
    opensearchUrl: envString(env, 'OPENSEARCH_URL'),
    opensearchIndex: envString(env, 'OPENSEARCH_INDEX') ?? 'catalog',
    searchSnapshotPath: envString(env, 'SEARCH_SNAPSHOT_PATH'),
    searchSnapshotBucket: envString(env, 'SEARCH_SNAPSHOT_BUCKET'),
    searchSnapshotKey: envString(env, 'SEARCH_SNAPSHOT_KEY') ?? 'search/catalog-index.json.gz',
    searchSnapshotRefreshSeconds: envCount(env, 'SEARCH_SNAPSHOT_REFRESH_SECONDS', 60),
    brand: envString(env, 'CATALOG_BRAND') ?? 'example',
    siteUrlTemplate: envString(env, 'SITE_URL_TEMPLATE'),
    allowList: { bucket: envString(env, 'ORG_SETTINGS_BUCKET') ?? 'org-settings', key: envString(env, 'ORG_ALLOW_LIST_KEY') ?? 'org/allow-list.yaml' },
    allowListRefreshSeconds: envCount(env, 'ORG_ALLOW_LIST_REFRESH_SECONDS', 30),
  };
}
