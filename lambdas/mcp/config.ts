import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';
import { envInt, envString, type Env } from '../shared/env';

/**
 * Configuration of the MCP endpoint, read once from the environment (CDK props set the same
 * variables). Every limit is configuration with the documented default (DECISIONS); the tests of a
 * limit run with the default.
 */
export interface McpConfig {
  /**
   * Browser origins allowed to call `/mcp` (`MCP_ALLOWED_ORIGINS`, comma-separated, e.g.
   * `https://app.example.com`). Requests without `Origin` (native clients) always pass; a browser
   * origin not listed is 403, which is what protects a local user's token from DNS rebinding.
   */
  allowedOrigins: string[];
  /** Calls per minute per user (`MCP_RATE_PER_MINUTE`), default 120. */
  ratePerMinute: number;
  /** Entries shown per folder by memory__list (`MCP_LIST_MAX_ENTRIES`), default 100 (spec 3). */
  listMaxEntries: number;
  /** The shared rate-limit table (`RATE_LIMIT_TABLE`), the one the catalog and favorites use. */
  rateLimitTable: string;
  /** The shared limiter's leases and provisional allowance (`RATE_LEASE_FRACTION`, `RATE_PROVISIONAL_TOKENS`). */
  rateLimiter: LeasingOptions;
  /** Largest request body, in bytes (`MCP_MAX_BODY_BYTES`): a 1 MiB note JSON-escaped, with room. */
  maxBodyBytes: number;
}

/**
 * An origin as browsers send it: `scheme://host[:port]`, lower-cased, default ports dropped. An
 * allow-list entry that is not an origin (a path, a wildcard) is a configuration error, not a
 * silently dead entry.
 */
export function normaliseOrigin(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new Error(`MCP_ALLOWED_ORIGINS: "${value}" is not an origin (scheme://host[:port])`);
  }
  if (u.origin === 'null' || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || value.includes('*')) {
    throw new Error(`MCP_ALLOWED_ORIGINS: "${value}" is not an origin (scheme://host[:port])`);
  }
  return u.origin.toLowerCase();
}

export function loadMcpConfig(env: Env = process.env): McpConfig {
  const origins = (envString(env, 'MCP_ALLOWED_ORIGINS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(normaliseOrigin);
  return {
    allowedOrigins: [...new Set(origins)],
    ratePerMinute: envInt(env, 'MCP_RATE_PER_MINUTE', 120, { min: 1 }),
    listMaxEntries: envInt(env, 'MCP_LIST_MAX_ENTRIES', 100, { min: 1 }),
    rateLimitTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    rateLimiter: loadLeasingOptions(env),
    maxBodyBytes: envInt(env, 'MCP_MAX_BODY_BYTES', 4 * 1024 * 1024, { min: 1 }),
  };
}
