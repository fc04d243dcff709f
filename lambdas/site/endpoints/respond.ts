import type { HandlerResponse } from '../../shared/http/types';
import type { SiteConfig } from '../config';

/**
 * How pages are answered. Pages are the same for every reader (favorites are drawn by the script),
 * so they are cacheable: briefly by browsers, longer by CloudFront (`s-maxage`), and served stale
 * for a while during a revalidation. The crawl runs every few hours; a few minutes at the edge cost
 * nothing in freshness and absorb almost every request.
 */
export function cacheControl(config: SiteConfig): string {
  const edge = config.edgeCacheSeconds > 0 ? `, s-maxage=${config.edgeCacheSeconds}, stale-while-revalidate=${config.edgeCacheSeconds}` : '';
  return `public, max-age=${config.browserCacheSeconds}${edge}`;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';

export function htmlPage(config: SiteConfig, body: string, status = 200): HandlerResponse {
  return { kind: 'text', status, body, contentType: 'text/html; charset=utf-8', headers: { 'cache-control': cacheControl(config) } };
}

export function textResponse(config: SiteConfig, body: string, contentType: string): HandlerResponse {
  return { kind: 'text', body, contentType, headers: { 'cache-control': cacheControl(config) } };
}
