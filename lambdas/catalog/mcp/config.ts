import { envInt, type Env } from '../../shared/env';

/** The catalog MCP endpoint's own settings (its limits are the catalog's tiers, `lambdas/catalog/config.ts`). */
export interface CatalogMcpConfig {
  /** Largest request body in bytes (`CATALOG_MCP_MAX_BODY_BYTES`, default 65536): the tools' arguments are a few hundred bytes. */
  maxBodyBytes: number;
}

export function loadCatalogMcpConfig(env: Env = process.env): CatalogMcpConfig {
  return { maxBodyBytes: envInt(env, 'CATALOG_MCP_MAX_BODY_BYTES', 64 * 1024, { min: 1024 }) };
}
