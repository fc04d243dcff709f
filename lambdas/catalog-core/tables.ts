import type { TableSchema } from '../shared/aws/table-schema';

/** The catalog table: one partition per server slug, items `SERVER`, `README`, `TOOLS` (`adapters/dynamo-catalog-store.ts`). */
export const CATALOG_TABLE: TableSchema = { partitionKey: 'slug', sortKey: 'sk' };
