import middy from '@middy/core';
import { randomUUID } from 'node:crypto';
import { routeResolver } from '../shared/http/resolve';
import type { RouteDef } from '../shared/http/route-table';
import type { HttpEvent, HttpResult, LambdaContext } from '../shared/http/types';
import { logger } from '../shared/logger';
import { logRequest } from '../shared/http/request-log';
import { failOpen } from '../shared/rate-limit/fail-open';
import { clientIp } from '../shared/http/client-ip';
import type { RatePolicy } from '../shared/rate-limit/rate-limiter';
import { authorize, consent, localLogin, upstreamCallback } from './authorize';
import type { OAuthDeps } from './deps';
import { CORS_HEADERS, htmlResult, jsonResult, oauthError, preflight } from './http';
import { protectedResourceMetadata } from '../identity/protected-resource';
import { authorizationServerMetadata } from './metadata';
import { errorPage } from './pages';
import { CORS_PATHS, OAUTH_ROUTES, OAUTH_WELL_KNOWN_ROUTES } from './routes';
import { register, revoke, token } from './token';

type Handler = (event: HttpEvent, deps: OAuthDeps) => Promise<HttpResult>;

/** Discovery documents change only with a deployment: cacheable (no `Pragma: no-cache` beside it). */
const metadata = (body: object): HttpResult => {
  const out = jsonResult(200, body, { 'cache-control': 'public, max-age=300' });
  delete out.headers.pragma;
  return out;
};

const HANDLERS: Record<string, Handler> = {
  oauthProtectedResource: async (_e, d) => metadata(protectedResourceMetadata(d.config)),
  oauthProtectedResourceMcp: async (_e, d) => metadata(protectedResourceMetadata(d.config)),
  oauthAuthorizationServer: async (_e, d) => metadata(authorizationServerMetadata(d.config)),
  oauthAuthorize: authorize,
  oauthLogin: localLogin,
  oauthCallback: upstreamCallback,
  oauthConsent: consent,
  oauthRegister: register,
  oauthToken: token,
  oauthRevoke: revoke,
};

/** Routes answered with pages (a browser is looking); the others answer JSON. */
const PAGES: ReadonlySet<string> = new Set(['oauthAuthorize', 'oauthLogin', 'oauthCallback', 'oauthConsent']);


/** Which routes spend from which per-IP budget (see `OAuthFrontConfig.rate`); pages and metadata are not limited. */
function ratePolicy(route: string, deps: OAuthDeps): RatePolicy | undefined {
  const { registerPerMinute, tokenPerMinute } = deps.config.rate;
  if (route === 'oauthRegister') return { name: 'oauth-register', ratePerSecond: registerPerMinute / 60, burst: registerPerMinute };
  if (route === 'oauthToken' || route === 'oauthRevoke') return { name: 'oauth-token', ratePerSecond: tokenPerMinute / 60, burst: tokenPerMinute };
  return undefined;
}

/** A 429 in OAuth's error JSON (RFC 6749 has no code for it; `rate_limited` is ours, documented). */
async function rateLimited(event: HttpEvent, route: string, deps: OAuthDeps, requestId: string): Promise<HttpResult | undefined> {
  const policy = ratePolicy(route, deps);
  const limiter = deps.limiter;
  if (!policy || !limiter) return undefined;
  const d = await failOpen(requestId, () => limiter.consume(`ip:${clientIp(event, deps.originSecret())}`, policy));
  if (!d || d.allowed) return undefined;
  return oauthError(429, 'rate_limited', `Too many requests; retry in ${d.retryAfterSeconds} s`, { 'retry-after': String(d.retryAfterSeconds) });
}

/**
 * The front's dispatcher. `extraRoutes` are other functions' routes mounted under the same
 * prefixes (locally, the issuer's JWKS), so a wrong verb on them is still a 405 with `Allow`.
 */
export function createOAuthDispatcher(extraRoutes: readonly RouteDef[] = []) {
  const resolve = routeResolver([...OAUTH_ROUTES, ...OAUTH_WELL_KNOWN_ROUTES, ...extraRoutes], 'oauth');
  return async (event: HttpEvent, deps: OAuthDeps, requestId: string): Promise<HttpResult> => {
    const started = performance.now();
    const resolved = resolve(event);
    // Browser clients probe other discovery documents too (openid-configuration): their 404 is readable.
    const cors = CORS_PATHS.has(event.rawPath) || event.rawPath.startsWith('/.well-known/');
    let out: HttpResult;
    let route: string = resolved.kind;
    if (resolved.kind === 'preflight') {
      out = cors ? preflight(resolved.allowed) : { statusCode: 204, headers: {}, body: '' };
    } else if (resolved.kind === 'error') {
      const e = resolved.error;
      out =
        e.code === 'METHOD_NOT_ALLOWED'
          ? oauthError(405, 'method_not_allowed', e.message, e.headers)
          : e.code === 'NOT_FOUND'
            ? oauthError(404, 'not_found', 'No such endpoint')
            : oauthError(500, 'server_error', 'An internal error occurred');
    } else {
      route = resolved.route.operationId;
      try {
        out = (await rateLimited(event, route, deps, requestId)) ?? (await HANDLERS[route](event, deps));
      } catch (err) {
        // Names and messages only: a stack or an SDK error's input could carry a code or a token.
        logger.error('oauth handler failed', { requestId, route, err: err instanceof Error ? `${err.name}: ${err.message}` : 'non-error thrown' });
        out = PAGES.has(route)
          ? htmlResult(500, errorPage('Something went wrong', 'The server could not complete this step. Try again in a moment.'))
          : oauthError(500, 'server_error', 'An internal error occurred; please retry later');
      }
    }
    if (cors) out.headers = { ...out.headers, ...CORS_HEADERS };
    logRequest(requestId, event, route, out.statusCode, started);
    return out;
  };
}

/** The Lambda entry: middy around the dispatcher; a failed initialisation is a 500 in OAuth's JSON. */
export function createOAuthHandler(getDeps: () => Promise<OAuthDeps>, extraRoutes: readonly RouteDef[] = []) {
  const dispatch = createOAuthDispatcher(extraRoutes);
  return middy<HttpEvent, HttpResult, Error, LambdaContext>().handler(async (event, context) => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId ?? randomUUID();
    try {
      return await dispatch(event, await getDeps(), requestId);
    } catch (err) {
      logger.error('oauth front failed', { requestId, err: err instanceof Error ? err.message : String(err) });
      const failed = oauthError(500, 'server_error', 'An internal error occurred; please retry later');
      return { ...failed, headers: { ...failed.headers, ...CORS_HEADERS } };
    }
  });
}
