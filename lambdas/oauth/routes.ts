import type { ApiTable, RouteDef } from '../shared/http/route-table';

/**
 * The OAuth front's routes, all served by the function `oauth`. Two tables because the local
 * server and API Gateway mount APIs by path prefix: `/oauth` and `/.well-known` (which, locally,
 * also holds the local issuer's JWKS: see `wellKnownTable`).
 */
export const OAUTH_WELL_KNOWN_ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/.well-known/oauth-protected-resource', fn: 'oauth', operationId: 'oauthProtectedResource' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', fn: 'oauth', operationId: 'oauthProtectedResourceMcp' },
  { method: 'GET', path: '/.well-known/oauth-authorization-server', fn: 'oauth', operationId: 'oauthAuthorizationServer' },
];

export const OAUTH_ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/oauth/authorize', fn: 'oauth', operationId: 'oauthAuthorize' },
  /** Local mode only: the development sign-in form posts here. */
  { method: 'POST', path: '/oauth/login', fn: 'oauth', operationId: 'oauthLogin' },
  /** Cognito mode only: the hosted sign-in comes back here. */
  { method: 'GET', path: '/oauth/callback', fn: 'oauth', operationId: 'oauthCallback' },
  { method: 'POST', path: '/oauth/consent', fn: 'oauth', operationId: 'oauthConsent' },
  { method: 'POST', path: '/oauth/register', fn: 'oauth', operationId: 'oauthRegister' },
  { method: 'POST', path: '/oauth/token', fn: 'oauth', operationId: 'oauthToken' },
  { method: 'POST', path: '/oauth/revoke', fn: 'oauth', operationId: 'oauthRevoke' },
];

export const OAUTH_API: ApiTable = { catchAllFn: 'oauth', prefix: '/oauth', routes: OAUTH_ROUTES };

export const OAUTH_WELL_KNOWN_API: ApiTable = { catchAllFn: 'oauth', prefix: '/.well-known', routes: OAUTH_WELL_KNOWN_ROUTES };

/**
 * `/.well-known` with other routes merged in (locally, the issuer's `jwks.json` of fn `auth`),
 * answered for unknown paths and wrong verbs by the front.
 */
export function wellKnownTable(extra: readonly RouteDef[]): ApiTable {
  return { ...OAUTH_WELL_KNOWN_API, routes: [...OAUTH_WELL_KNOWN_ROUTES, ...extra] };
}

/** Paths a browser-based MCP client calls with fetch: open CORS, preflight 204. */
export const CORS_PATHS: ReadonlySet<string> = new Set([...OAUTH_WELL_KNOWN_ROUTES.map((r) => r.path), '/oauth/register', '/oauth/token', '/oauth/revoke']);
