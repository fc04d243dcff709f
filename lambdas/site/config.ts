/**
 * The site's configuration, read once from the environment (props of `lib/site.ts` in AWS). Every
 * limit is a variable with a documented default (DECISIONS: limits are configuration).
 */
import { publicUrl } from '../identity/config';
import { envInt, envString, type Env } from '../shared/env';
import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';

export interface SiteConfig {
  /** The deployment's base URL (PUBLIC_URL): canonical links, feeds, sitemap, the OAuth client id. */
  publicUrl: string;
  /** Shown in titles and feeds (SITE_NAME). */
  siteName: string;
  /** Servers per list and search page (SITE_PAGE_SIZE, 1-100, default 24, as /api/mcps). */
  pageSize: number;
  /** Browser cache of pages, seconds (SITE_BROWSER_CACHE_SECONDS, default 60). */
  browserCacheSeconds: number;
  /** Shared (CloudFront) cache of pages, seconds (SITE_EDGE_CACHE_SECONDS, default 300; 0: no shared cache). */
  edgeCacheSeconds: number;
  /** Per client IP, through the shared limiter: pages rendered per second and burst (SITE_RATE_RPS, SITE_RATE_BURST; 30 / 60). */
  rate: { rate: number; burst: number };
  /** The shared rate-limit table (RATE_LIMIT_TABLE), the one the catalog API and favorites use. */
  rateLimitTable: string;
  /** The shared limiter's leases and provisional allowance (RATE_LEASE_FRACTION, RATE_PROVISIONAL_TOKENS, RATE_MAX_BACKLOG). */
  rateLimiter: LeasingOptions;
  /** Characters of a README's source rendered on its page (SITE_README_MAX_CHARS, default 40000). */
  readmeMaxChars: number;
  /** Tools shown with their input schemas on a detail page (SITE_MAX_TOOLS, default 100). */
  maxTools: number;
  /** Entries per Atom feed (SITE_FEED_ENTRIES, default 50). */
  feedEntries: number;
  /** URLs per sitemap file; above it `/sitemap.xml` is an index of parts (SITE_SITEMAP_MAX_URLS, default 50000, the protocol's limit). */
  sitemapMaxUrls: number;
  /** Rendered READMEs kept per instance (SITE_README_CACHE_ENTRIES, default 200; 0: off). */
  readmeCacheEntries: number;
  /** Secret header CloudFront adds; only then is the viewer address trusted for the limit (ORIGIN_VERIFY_SECRET / _ARN). */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

function bounded(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = envInt(env, name, fallback, { min });
  if (v > max) throw new Error(`${name} must be at most ${max}, got "${v}"`);
  return v;
}

export function loadSiteConfig(env: Env = process.env): SiteConfig {
  return {
    publicUrl: publicUrl(env),
    siteName: envString(env, 'SITE_NAME') ?? 'MCP Catalog',
    pageSize: bounded(env, 'SITE_PAGE_SIZE', 24, 1, 100),
    browserCacheSeconds: envInt(env, 'SITE_BROWSER_CACHE_SECONDS', 60, { min: 0 }),
    edgeCacheSeconds: envInt(env, 'SITE_EDGE_CACHE_SECONDS', 300, { min: 0 }),
    rate: { rate: envInt(env, 'SITE_RATE_RPS', 30, { min: 1 }), burst: envInt(env, 'SITE_RATE_BURST', 60, { min: 1 }) },
    rateLimitTable: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
    rateLimiter: loadLeasingOptions(env),
    readmeMaxChars: envInt(env, 'SITE_README_MAX_CHARS', 40_000, { min: 1000 }),
    maxTools: envInt(env, 'SITE_MAX_TOOLS', 100, { min: 1 }),
    feedEntries: bounded(env, 'SITE_FEED_ENTRIES', 50, 1, 500),
    sitemapMaxUrls: bounded(env, 'SITE_SITEMAP_MAX_URLS', 50_000, 10, 50_000),
    readmeCacheEntries: envInt(env, 'SITE_README_CACHE_ENTRIES', 200, { min: 0 }),
    originVerifySecret: envString(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: envString(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}

/** The Client ID Metadata Document URL: the site's OAuth client id at the deployment's OAuth front. */
export function oauthClientId(config: Pick<SiteConfig, 'publicUrl'>): string {
  return `${config.publicUrl}/oauth-client.json`;
}

/** Where the front sends the browser back after sign-in. */
export function oauthRedirectUri(config: Pick<SiteConfig, 'publicUrl'>): string {
  return `${config.publicUrl}/favorites`;
}

/** Where it sends it back after the Tokens page's sign-in (with memory scopes, apart from the favorites one). */
export function tokensRedirectUri(config: Pick<SiteConfig, 'publicUrl'>): string {
  return `${config.publicUrl}/tokens`;
}
