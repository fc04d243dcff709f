import type { TableSchema } from '../shared/aws/table-schema';

/**
 * Opaque access and refresh tokens, authorization codes, grant families (`token-store.ts`), and
 * personal access tokens with the list of each owner's (`personal-token-store.ts`).
 */
export const TOKEN_TABLE: TableSchema = { partitionKey: 'pk', ttl: 'expiresAt' };

/**
 * Key prefixes of the personal access tokens' items in the token table: one item per token, one
 * per owner listing the owner's tokens. CDK grants writes on these keys only (`dynamodb:LeadingKeys`).
 */
export const PERSONAL_TOKEN_KEYS = { token: 'pat#', owner: 'pat-owner#' } as const;

/** OAuth clients of dynamic registration (`oauth/client-store.ts`); unused registrations expire. */
export const CLIENT_TABLE: TableSchema = { partitionKey: 'clientId', ttl: 'expiresAt' };

/** The names of the auth context's tables (tokens, OAuth clients, favorites). */
export interface AuthTableNames {
  tokens: string;
  clients: string;
  favorites: string;
}
