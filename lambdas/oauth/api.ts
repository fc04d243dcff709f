import { protectedResourceMetadata } from '../identity/protected-resource';
import { clientIp } from '../shared/http/client-ip';
import { createPipeline, lambdaEntry, type ApiPolicy, type Operation, type Pipeline, type Problem } from '../shared/http/pipeline';
import type { RouteDef } from '../shared/http/route-table';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import { logger } from '../shared/logger';
import type { RatePolicy } from '../shared/rate-limit/rate-limiter';
import { authorize, consent, localLogin, upstreamCallback } from './authorize';
import type { OAuthDeps } from './deps';
import { CORS_HEADERS, htmlResult, jsonResult, oauthError, preflight } from './protocol';
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

const OPERATIONS: Record<string, Operation<OAuthDeps>> = Object.fromEntries(Object.entries(HANDLERS).map(([id, h]) => [id, (ctx) => h(ctx.event, ctx.deps)]));

/** Routes answered with pages (a browser is looking); the others answer JSON. */
const PAGES: ReadonlySet<string> = new Set(['oauthAuthorize', 'oauthLogin', 'oauthCallback', 'oauthConsent']);

/** Which routes spend from which per-IP budget (see `OAuthFrontConfig.rate`); pages and metadata are not limited. */
function ratePolicy(route: string, deps: OAuthDeps): RatePolicy | undefined {
  const { registerPerMinute, tokenPerMinute } = deps.config.rate;
  if (route === 'oauthRegister') return { name: 'oauth-register', ratePerSecond: registerPerMinute / 60, burst: registerPerMinute };
  if (route === 'oauthToken' || route === 'oauthRevoke') return { name: 'oauth-token', ratePerSecond: tokenPerMinute / 60, burst: tokenPerMinute };
  return undefined;
}

/** Browser clients probe other discovery documents too (openid-configuration): their 404 is readable. */
const corsPath = (event: HttpEvent): boolean => CORS_PATHS.has(event.rawPath) || event.rawPath.startsWith('/.well-known/');

/** OAuth's error JSON (RFC 6749 §5.2) for the pipeline's problems; a 429 is `rate_limited` (ours, documented: RFC 6749 has none). */
function oauthProblem(problem: Problem, _event: HttpEvent, operationId?: string): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return oauthError(404, 'not_found', 'No such endpoint');
    case 'method_not_allowed':
      return oauthError(405, 'method_not_allowed', `${problem.method} is not allowed here`, { allow: problem.allowed.join(', ') });
    case 'rate_limited':
      return oauthError(429, 'rate_limited', `Too many requests; retry in ${problem.retryAfterSeconds} s`, {
        'retry-after': String(problem.retryAfterSeconds),
      });
    case 'too_large':
      return oauthError(413, 'invalid_request', `The request body is larger than ${problem.maxBytes} bytes`);
    case 'forbidden_origin':
      // RFC 6749 §4.1.2.1's access_denied: the request did not come through the deployment's public URL.
      return oauthError(403, 'access_denied', 'This origin answers requests through the public URL only');
    case 'starting':
      // RFC 6749 §4.1.2.1's temporarily_unavailable, with the wait a client should take.
      return oauthError(503, 'temporarily_unavailable', 'The service is starting or a dependency is unavailable; retry shortly', { 'retry-after': '1' });
    case 'internal':
      return operationId && PAGES.has(operationId)
        ? htmlResult(500, errorPage('Something went wrong', 'The server could not complete this step. Try again in a moment.'))
        : oauthError(500, 'server_error', 'An internal error occurred; please retry later');
  }
}

/**
 * The OAuth front (the authorization server of MCP clients). `extraRoutes` are other functions'
 * routes mounted under the same prefixes (locally, the issuer's JWKS), so a wrong verb on them is
 * still a 405 with `Allow`.
 */
export function oauthPolicy(extraRoutes: readonly RouteDef[] = []): ApiPolicy<OAuthDeps> {
  return {
    name: 'oauth',
    fn: 'oauth',
    routes: [...OAUTH_ROUTES, ...OAUTH_WELL_KNOWN_ROUTES, ...extraRoutes],
    operations: OPERATIONS,
    limit: {
      limiter: (deps) => deps.limiter,
      bucket: ({ event, deps, resolution }) => {
        const policy = resolution.kind === 'route' ? ratePolicy(resolution.route.operationId, deps) : undefined;
        return policy && { key: `ip:${clientIp(event, deps.originSecret())}`, policy };
      },
      timing: 'first',
      headers: () => ({}),
    },
    preflight: (allowed, event) => (corsPath(event) ? preflight(allowed) : { statusCode: 204, headers: {}, body: '' }),
    problem: oauthProblem,
    error: (err, { event, requestId, operationId }) => {
      // Names and messages only: a stack or an SDK error's input could carry a code or a token.
      logger.error('oauth handler failed', { requestId, route: operationId, err: err instanceof Error ? `${err.name}: ${err.message}` : 'non-error thrown' });
      return oauthProblem({ kind: 'internal' }, event, operationId);
    },
    headers: (event) => (corsPath(event) ? CORS_HEADERS : {}),
    originSecret: (deps) => deps.originSecret,
  };
}

export function createOAuthDispatcher(extraRoutes: readonly RouteDef[] = []): Pipeline<OAuthDeps> {
  return createPipeline(oauthPolicy(extraRoutes));
}

/** The Lambda entry; a failed initialisation is a 500 in OAuth's JSON. */
export function createOAuthHandler(getDeps: () => Promise<OAuthDeps>, extraRoutes: readonly RouteDef[] = []) {
  const policy = oauthPolicy(extraRoutes);
  return lambdaEntry(policy, getDeps, createPipeline(policy));
}
