import type { ApiTable, RouteDef } from '../shared/http/route-table';

/**
 * The site's pages (fn `site`), read by CDK (API Gateway routes and CloudFront behaviours) and by
 * the local server. The table has no prefix of its own: the site sits at the root beside `/api`,
 * `/v1`, `/mcp` and the OAuth front, so each path is its own route, and `SITE_PATH_PATTERNS` names
 * the CloudFront behaviours that send them to the render function with the site's cache policy.
 */
export const SITE_ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/', fn: 'site', operationId: 'homePage' },
  // CloudFront's default root object turns `/` into `/index.html`, so the home page has a path a behaviour can match.
  { method: 'GET', path: '/index.html', fn: 'site', operationId: 'homeIndexPage' },
  { method: 'GET', path: '/servers', fn: 'site', operationId: 'serversPage' },
  { method: 'GET', path: '/servers/{slug}', fn: 'site', operationId: 'serverPage' },
  { method: 'GET', path: '/servers/{slug}/feed.xml', fn: 'site', operationId: 'serverFeed' },
  { method: 'GET', path: '/search', fn: 'site', operationId: 'searchPage' },
  { method: 'GET', path: '/favorites', fn: 'site', operationId: 'favoritesPage' },
  { method: 'GET', path: '/tokens', fn: 'site', operationId: 'tokensPage' },
  { method: 'GET', path: '/feed.xml', fn: 'site', operationId: 'atomFeed' },
  { method: 'GET', path: '/sitemap.xml', fn: 'site', operationId: 'sitemap' },
  { method: 'GET', path: '/robots.txt', fn: 'site', operationId: 'robots' },
  { method: 'GET', path: '/oauth-client.json', fn: 'site', operationId: 'oauthClientMetadata' },
  { method: 'GET', path: '/assets/{file}', fn: 'site', operationId: 'asset' },
];

/** One table for API Gateway and the local server; its catch-all is never declared (`$default` stays the catalog's). */
export const SITE_API: ApiTable = { catchAllFn: 'site', prefix: '', routes: SITE_ROUTES };

/**
 * CloudFront path patterns of the site (each its own behaviour, in this order). `/` itself cannot
 * be a pattern; the distribution's default root object maps it to `/index.html`.
 */
export const SITE_PATH_PATTERNS: readonly string[] = [
  '/index.html',
  '/servers',
  '/servers/*',
  '/search',
  '/favorites',
  '/tokens',
  '/feed.xml',
  '/sitemap.xml',
  '/robots.txt',
  '/oauth-client.json',
  '/assets/*',
];

/** Route keys of every method on the site's paths, so a wrong verb reaches the site (405 in HTML) rather than the catalog's catch-all. */
export const SITE_ANY_PATHS: readonly string[] = [...new Set(SITE_ROUTES.map((r) => r.path))];
