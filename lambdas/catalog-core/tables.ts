import type { TableSchema } from '../shared/aws/table-schema';

/** The catalog table: one partition per server slug, items `SERVER`, `README`, `TOOLS` (`adapters/dynamo-catalog-store.ts`). */
export const CATALOG_TABLE: TableSchema = { partitionKey: 'slug', sortKey: 'sk' };

/**
 * The trust table: a server's history, one partition per slug (`adapters/dynamo-trust-store.ts`):
 * one item per live check (`check#<time>`, expiring after the retention, TTL `expiresAt`) and one
 * per change of its tools or version (`change#<time>#<id>`, kept). Apart from the catalog table so
 * the catalog's detail Query and its full scans never read history.
 */
export const TRUST_TABLE: TableSchema = { partitionKey: 'slug', sortKey: 'sk', ttl: 'expiresAt' };
