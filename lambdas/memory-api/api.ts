import middy from '@middy/core';
import { randomUUID } from 'node:crypto';
import { clientIp } from '../shared/http/client-ip';
import { hasScope, type Principal } from '../identity/principal';
import type { Caller } from '../memory/types';
import { parseRawQuery } from '../shared/http/query';
import { toResult } from '../shared/http/respond';
import { routeResolver } from '../shared/http/resolve';
import type { RouteDef } from '../shared/http/route-table';
import { header, type HttpEvent, type HttpResult, type LambdaContext } from '../shared/http/types';
import { logger } from '../shared/logger';
import { logRequest } from '../shared/http/request-log';
import { failOpen } from '../shared/rate-limit/fail-open';
import type { RateDecision, RatePolicy } from '../shared/rate-limit/rate-limiter';
import type { MemoryApiDeps } from './deps';
import { ApiError, errorResult, forbidden, toApiError } from './errors';
import { MEMORY_HANDLERS } from './handlers';
import { ALIAS_HEADERS, baseOperation, isAliasPath, MEMORY_API, MEMORY_FN, scopeOf } from './routes';

const resolve = routeResolver(MEMORY_API.routes, MEMORY_FN);

/** What a browser may send and read (bearer, not cookies: `*` is safe). */
const CORS_EXPOSE = 'ETag, Location, Content-Disposition, RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, Deprecation, Sunset, Link';
const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, If-Match, Accept';

function corsHeaders(): Record<string, string> {
  return { 'access-control-allow-origin': '*', 'access-control-expose-headers': CORS_EXPOSE };
}

export function memoryRatePolicy(deps: Pick<MemoryApiDeps, 'config'>): RatePolicy {
  const { rateLimit, rateWindowSeconds } = deps.config;
  return { name: 'memory-ip', ratePerSecond: rateLimit / rateWindowSeconds, burst: rateLimit };
}

/**
 * IETF draft-7 (draft-ietf-httpapi-ratelimit-headers-07): `RateLimit: limit=60, remaining=N,
 * reset=S` and `RateLimit-Policy: 60;w=60`. `reset` is the seconds until the bucket is full again.
 */
export function rateLimitHeaders(d: RateDecision, policy: RatePolicy, windowSeconds: number): Record<string, string> {
  return {
    ratelimit: `limit=${policy.burst}, remaining=${d.remaining}, reset=${d.resetSeconds}`,
    'ratelimit-policy': `${policy.burst};w=${windowSeconds}`,
  };
}

/**
 * One `/v1` request, from the API Gateway event to its answer. Order: CORS preflight (204, not
 * counted); the rate limit per client IP (every other request counts, unknown paths included) with
 * the token verified concurrently; 404/405; 401/503 for the token; 403 for the scope; the handler.
 * Every response carries CORS, the rate-limit headers and, under `/v1/vaults`, the alias headers.
 */
export async function handleMemoryRequest(event: HttpEvent, deps: MemoryApiDeps, requestId: string): Promise<HttpResult> {
  const started = performance.now();
  const resolved = resolve(event);
  let out: HttpResult;
  let limitHeaders: Record<string, string> = {};
  if (resolved.kind === 'preflight') {
    out = {
      statusCode: 204,
      headers: {
        'access-control-allow-methods': [...resolved.allowed, 'OPTIONS'].join(', '),
        'access-control-allow-headers': CORS_ALLOW_HEADERS,
        'access-control-max-age': '86400',
      },
      body: '',
    };
  } else {
    // Verification runs while the limiter decides; its outcome is used only if the request may proceed.
    const verification: Promise<Principal | ApiError> | undefined =
      resolved.kind === 'route'
        ? deps.verifier.verify(header(event, 'authorization')).then(
            (principal) => principal,
            (err: unknown) => toApiError(err, (e) => logUnexpected(requestId, e)),
          )
        : undefined;
    const policy = memoryRatePolicy(deps);
    const decision = await consume(event, deps, policy, requestId);
    if (decision) limitHeaders = rateLimitHeaders(decision, policy, deps.config.rateWindowSeconds);
    if (decision && !decision.allowed) {
      out = errorResult(new ApiError('RATE_LIMITED', 'Too many requests; retry after the delay in Retry-After', { 'retry-after': String(decision.retryAfterSeconds) }));
    } else if (resolved.kind === 'error') {
      out = errorResult(toApiError(resolved.error, (e) => logUnexpected(requestId, e)));
    } else {
      const principal = await (verification as Promise<Principal | ApiError>);
      out = principal instanceof ApiError ? errorResult(principal) : await runRoute(resolved.route, resolved.params, event, principal, deps, requestId);
    }
  }
  out.headers = { ...out.headers, ...corsHeaders(), ...limitHeaders, ...(isAliasPath(event.rawPath) && ALIAS_HEADERS) };
  logRequest(requestId, event, resolved.kind === 'route' ? resolved.route.operationId : resolved.kind, out.statusCode, started);
  return out;
}

function callerOf(principal: Principal): Caller {
  // The client id goes into the commit author so history shows which app wrote what.
  const name = principal.clientId ? `${principal.sub} (${principal.clientId})` : principal.sub;
  return { account: principal.sub, grants: principal.memories, author: { name } };
}

async function runRoute(route: RouteDef, params: Record<string, string>, event: HttpEvent, principal: Principal, deps: MemoryApiDeps, requestId: string): Promise<HttpResult> {
  try {
    const scope = scopeOf(route);
    if (!hasScope(principal, scope)) throw forbidden(`This token lacks the ${scope} scope`);
    const handler = MEMORY_HANDLERS[baseOperation(route)];
    const res = await handler({ event, query: parseRawQuery(event.rawQueryString), params, caller: callerOf(principal), requestId }, deps);
    return toResult(res);
  } catch (err) {
    return errorResult(toApiError(err, (e) => logUnexpected(requestId, e)));
  }
}

function logUnexpected(requestId: string, err: unknown): void {
  logger.error('unhandled error', { requestId, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
}

/** The shared limiter per client IP; its table failing opens the gate (logged), never a 500. */
function consume(event: HttpEvent, deps: MemoryApiDeps, policy: RatePolicy, requestId: string): Promise<RateDecision | undefined> {
  return failOpen(requestId, () => deps.limiter.consume(`ip:${clientIp(event, deps.originSecret())}`, policy));
}

/**
 * The Lambda entry: middy around the dispatcher. The dispatcher answers its own errors; what lands
 * here is a failed initialisation (a secret or table unreachable), answered 503 in the `/v1`
 * envelope with Retry-After (the next request retries the init).
 */
export function createMemoryApiHandler(getDeps: () => Promise<MemoryApiDeps>) {
  return middy<HttpEvent, HttpResult, Error, LambdaContext>().handler(async (event, context) => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId ?? randomUUID();
    let deps: MemoryApiDeps;
    try {
      deps = await getDeps();
    } catch (err) {
      logger.error('memory API initialisation failed', { requestId, err: err instanceof Error ? err.message : String(err) });
      const failed = errorResult(new ApiError('UPSTREAM_UNAVAILABLE', 'The service is starting or a dependency is unavailable; retry shortly', { 'retry-after': '1' }));
      return { ...failed, headers: { ...failed.headers, ...corsHeaders(), ...(isAliasPath(event.rawPath ?? '') && ALIAS_HEADERS) } };
    }
    return handleMemoryRequest(event, deps, requestId);
  });
}
