import type { TableSchema } from '../shared/aws/table-schema';

/** The crawl state: runs, units, names, slugs and the HTTP cache (`adapters/dynamo-crawl-state.ts`). */
export const CRAWL_STATE_TABLE: TableSchema = { partitionKey: 'pk', sortKey: 'sk', ttl: 'expiresAt' };
