import type { TableSchema } from '../shared/aws/table-schema';

/** The catalog table: one partition per server slug, items `SERVER`, `README`, `TOOLS` (`adapters/dynamo-catalog-store.ts`). */
export const CATALOG_TABLE: TableSchema = { partitionKey: 'slug', sortKey: 'sk' };

/** Favorites: one partition per user (`pk` = sub), a pin or the counter per `sk` (`favorites/store.ts`). */
export const FAVORITES_TABLE: TableSchema = { partitionKey: 'pk', sortKey: 'sk' };
