import { hasScope, type Principal } from '../identity/principal';
import type { Caller } from '../memory';
import { clientIp } from '../shared/http/client-ip';
import { createPipeline, lambdaEntry, operationsOf, withPrincipal, type ApiPolicy, type Problem, type RequestContext } from '../shared/http/pipeline';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import type { RateDecision, RatePolicy } from '../shared/rate-limit/rate-limiter';
import type { MemoryApiDeps } from './deps';
import { ApiError, errorResult, forbidden, gitErrorResult, internalError, toApiError } from './errors';
import { MEMORY_HANDLERS, type MemoryCtx } from './endpoints';
import { ALIAS_HEADERS, baseOperation, isAliasPath, isGitOperation, isTokenOperation, MEMORY_API, MEMORY_FN, scopeOf } from './routes';
import { idempotent } from './idempotency';

/** What a browser may send and read (bearer, not cookies: `*` is safe). */
const CORS_EXPOSE =
  'ETag, Location, Content-Disposition, RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, Deprecation, Sunset, Link, Idempotent-Replayed';
const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, If-Match, Accept, Idempotency-Key';

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

function callerOf(principal: Principal): Caller {
  // The client id goes into the commit author so history shows which app wrote what.
  const name = principal.clientId ? `${principal.sub} (${principal.clientId})` : principal.sub;
  return {
    account: principal.sub,
    grants: principal.memories,
    author: { name },
    ...(principal.pathPrefix !== undefined && { pathPrefix: principal.pathPrefix }),
  };
}

/** git's requests under /v1 (for problems answered before a route is known, e.g. a 429). */
const GIT_PATH = /^\/v1\/(memories|vaults)\/[^/]+\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/**
 * The `/v1` envelope's wording of the pipeline's problems; on the git remote's paths, the same as
 * one line of text (what git shows its user).
 */
function memoryProblem(problem: Problem, event: HttpEvent): HttpResult {
  const result = jsonProblem(problem);
  if (!GIT_PATH.test(event.rawPath ?? '')) return result;
  const { error } = JSON.parse(result.body as string) as { error: { code: ApiError['code']; message: string } };
  const { 'content-type': _type, ...headers } = result.headers;
  return { ...gitErrorResult(new ApiError(error.code, error.message, headers)), statusCode: result.statusCode };
}

function jsonProblem(problem: Problem): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return errorResult(new ApiError('NOT_FOUND', 'No such endpoint'));
    case 'method_not_allowed':
      return errorResult(new ApiError('METHOD_NOT_ALLOWED', `${problem.method} is not allowed here`, { allow: problem.allowed.join(', ') }));
    case 'rate_limited':
      return errorResult(
        new ApiError('RATE_LIMITED', 'Too many requests; retry after the delay in Retry-After', { 'retry-after': String(problem.retryAfterSeconds) }),
      );
    case 'internal':
      return errorResult(internalError());
    case 'starting':
      return errorResult(new ApiError('UPSTREAM_UNAVAILABLE', 'The service is starting or a dependency is unavailable; retry shortly', { 'retry-after': '1' }));
    case 'too_large':
      // Spec 2 has no code of its own for it: the envelope's BAD_REQUEST, with HTTP's own status.
      return { ...errorResult(new ApiError('BAD_REQUEST', `The request body is larger than ${problem.maxBytes} bytes`)), statusCode: 413 };
    case 'forbidden_origin':
      return errorResult(forbidden('This origin answers requests through the public URL only'));
  }
}

/**
 * Every write route (not GET) takes an `Idempotency-Key`; git's requests are git's own protocol and
 * do not, nor do the token routes (a remembered answer would keep a token's secret in the table).
 */
const handlerOf = (r: (typeof MEMORY_API.routes)[number]) => {
  const handler = MEMORY_HANDLERS[baseOperation(r)];
  return r.method !== 'GET' && !isGitOperation(r.operationId) && !isTokenOperation(r.operationId) ? idempotent(handler) : handler;
};

/**
 * The memory REST API (spec 2): its route table (`routes.ts`), its endpoints (`endpoints.ts`) and
 * this policy. Order: CORS preflight (204, not counted); the rate limit per client IP (every other
 * request counts, unknown paths included) with the token verified concurrently; 404/405; 401/503
 * for the token; 403 for the scope; the handler. Every response carries CORS, the rate-limit
 * headers and, under `/v1/vaults`, the alias headers.
 */
export const MEMORY_POLICY: ApiPolicy<MemoryApiDeps, Principal> = {
  name: 'memory',
  fn: MEMORY_FN,
  routes: MEMORY_API.routes,
  operations: operationsOf<MemoryApiDeps, Principal, MemoryCtx>(Object.fromEntries(MEMORY_API.routes.map((r) => [r.operationId, handlerOf(r)])), (ctx) => {
    const c = withPrincipal(ctx);
    // `query` by name: it is a getter of the pipeline's context, which a spread leaves out.
    return { ...c, query: c.query, caller: callerOf(c.principal) };
  }),
  auth: {
    mode: 'required',
    verify: (deps, authorization, route) => deps.verifier.verify(isGitOperation(route.operationId) ? bearerOf(authorization) : authorization),
  },
  limit: {
    limiter: (deps) => deps.limiter,
    bucket: ({ event, deps }) => ({ key: `ip:${clientIp(event, deps.originSecret())}`, policy: memoryRatePolicy(deps) }),
    timing: 'first',
    headers: (d, policy, deps) => rateLimitHeaders(d, policy, deps.config.rateWindowSeconds),
  },
  authorize: (ctx: RequestContext<MemoryApiDeps, Principal>) => {
    const scope = scopeOf(ctx.route, ctx.query);
    if (!ctx.principal) throw forbidden('This request needs a token');
    if (scope !== undefined && !hasScope(ctx.principal, scope)) throw forbidden(`This token lacks the ${scope} scope`);
  },
  preflight: (allowed) => ({
    statusCode: 204,
    headers: {
      'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': '86400',
    },
    body: '',
  }),
  problem: memoryProblem,
  originSecret: (deps) => deps.originSecret,
  error: (err, at) => {
    let unexpected = false;
    const e = toApiError(err, () => {
      unexpected = true;
    });
    if (unexpected) return undefined;
    return isGitOperation(at.operationId) ? gitErrorResult(e) : errorResult(e);
  },
  headers: (event) => ({
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS_EXPOSE,
    ...(isAliasPath(event.rawPath ?? '') && ALIAS_HEADERS),
  }),
};

export const handleMemoryRequest = createPipeline(MEMORY_POLICY);

/**
 * The token of a git request: git sends credentials as HTTP Basic (the token is the password, any
 * user name; or the user name when the password is empty) or, with `http.extraHeader`, as a bearer.
 */
export function bearerOf(authorization: string | undefined): string | undefined {
  const m = /^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!m) return authorization;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  const token = password || user;
  return token ? `Bearer ${token}` : undefined;
}

/** The Lambda entry: a failed initialisation (a secret or table unreachable) is a 503 with Retry-After; the next request retries. */
export function createMemoryApiHandler(getDeps: () => Promise<MemoryApiDeps>) {
  return lambdaEntry(MEMORY_POLICY, getDeps, handleMemoryRequest);
}
