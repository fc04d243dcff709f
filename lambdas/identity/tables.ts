import type { TableSchema } from '../shared/aws/table-schema';

/** Opaque access and refresh tokens, authorization codes, grant families (`token-store.ts`). */
export const TOKEN_TABLE: TableSchema = { partitionKey: 'pk', ttl: 'expiresAt' };

/** OAuth clients of dynamic registration (`oauth/client-store.ts`); unused registrations expire. */
export const CLIENT_TABLE: TableSchema = { partitionKey: 'clientId', ttl: 'expiresAt' };

/** The names of the auth context's tables (tokens, OAuth clients, favorites). */
export interface AuthTableNames {
  tokens: string;
  clients: string;
  favorites: string;
}
