import type { TableSchema } from '../../shared/aws/table-schema';

/** Favorites: one partition per user (`pk` = sub), a pin or the counter per `sk` (`store.ts`). */
export const FAVORITES_TABLE: TableSchema = { partitionKey: 'pk', sortKey: 'sk' };
