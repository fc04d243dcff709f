import type { TableSchema } from '../aws/table-schema';

/** Rate-limit buckets, one item per key; idle buckets expire (`dynamo-rate-limiter.ts`). */
export const RATE_LIMIT_TABLE: TableSchema = { partitionKey: 'pk', ttl: 'expiresAt' };
