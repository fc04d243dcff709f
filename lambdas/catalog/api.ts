import { ValidationError } from '../shared/http/query';
import { createPipeline, lambdaEntry, operationsOf, type ApiPolicy, type Operation, type Pipeline, type Problem } from '../shared/http/pipeline';
import { toResult } from '../shared/http/respond';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import { corsHeaders, preflightHeaders } from './cors';
import type { CatalogDeps } from './deps';
import { errorResult, internalError, rateHeaders } from './envelope';
import { CatalogError, invalidQuery } from './errors';
import { CATALOG_ENDPOINTS } from './endpoints';
import { ResponseCache } from './response-cache';
import { CATALOG_API } from './routes';
import { loadCatalogMcpConfig, type CatalogMcpConfig } from './mcp/config';
import { CATALOG_MCP_PATH } from './mcp/routes';
import { CATALOG_MCP_POLICY, handleCatalogMcpRequest, type CatalogMcpDeps } from './mcp/api';

/**
 * The catalog API (spec 1): its route table (`routes.ts`), its endpoints (`endpoints/index.ts`) and
 * this policy for the shared pipeline: the `{ success, data, meta }` envelope, limits per client
 * IP or per user (the bearer tier, `callers.ts`) decided while the read runs, icons exempt.
 */

/** Icons are immutable and exempt from rate limits (spec 1). */
const UNLIMITED = new Set(['getIcon']);
/** Reads answered from the search index alone, whose responses depend only on the query and the index content. */
const INDEX_READS = new Set([
  'listServers',
  'searchServers',
  'autocomplete',
  'listCategories',
  'listLanguages',
  'listLicenses',
  'getFacets',
  'listSlugs',
  'listRegistryServers',
]);
const caches = new WeakMap<CatalogDeps, ResponseCache | null>();

/** The response cache of these dependencies (`null` when configured off). */
export function responseCacheOf(deps: CatalogDeps): ResponseCache | null {
  let cache = caches.get(deps);
  if (cache === undefined) {
    cache = deps.config.responseCacheEntries > 0 ? new ResponseCache(deps.config.responseCacheEntries, deps.config.responseCacheMb * 1024 * 1024) : null;
    caches.set(deps, cache);
  }
  return cache;
}

/** An index read answered from the response cache of the index's current generation when it can be. */
function cachedRead(op: Operation<CatalogDeps>, id: string): Operation<CatalogDeps> {
  return async (ctx) => {
    const { deps, event } = ctx;
    const cache = deps.index.generation ? responseCacheOf(deps) : null;
    const generation = cache && deps.index.generation ? await deps.index.generation() : undefined;
    const key = `${id}?${event.rawQueryString ?? ''}`;
    const cached = cache && generation && cache.get(key, generation);
    if (cached) return cached;
    const res = await op(ctx);
    const result = 'statusCode' in res ? res : toResult(res);
    if (cache && generation) cache.set(key, generation, result);
    return result;
  };
}

const operations = operationsOf(CATALOG_ENDPOINTS);
for (const id of INDEX_READS) operations[id] = cachedRead(operations[id], id);

/** The catalog envelope's wording of the pipeline's problems (shared with favorites). */
export function catalogProblem(problem: Problem): HttpResult {
  switch (problem.kind) {
    case 'not_found':
      return errorResult(new CatalogError('NOT_FOUND', 'No such endpoint'));
    case 'method_not_allowed':
      return errorResult(new CatalogError('METHOD_NOT_ALLOWED', `${problem.method} is not allowed here`, undefined, { allow: problem.allowed.join(', ') }));
    case 'rate_limited':
      return errorResult(
        new CatalogError('RATE_LIMITED', 'Too many requests; retry after the delay in Retry-After', undefined, {
          'retry-after': String(problem.retryAfterSeconds),
        }),
      );
    case 'internal':
      return errorResult(internalError());
    case 'too_large':
      return { ...errorResult(new CatalogError('INVALID_QUERY', `The request body is larger than ${problem.maxBytes} bytes`)), statusCode: 413 };
    case 'forbidden_origin':
      return errorResult(new CatalogError('FORBIDDEN', 'This origin answers requests through the public URL only'));
    case 'starting':
      // Spec 1 leaves INTERNAL_ERROR's status open: a dependency that is not up yet is a 503 the client retries.
      return {
        ...errorResult(
          new CatalogError('INTERNAL_ERROR', 'The service is starting or a dependency is unavailable; retry shortly', undefined, { 'retry-after': '1' }),
        ),
        statusCode: 503,
      };
  }
}

/** The catalog's typed errors and the shared validation error, in the envelope; anything else is unexpected. */
export function catalogError(err: unknown): HttpResult | undefined {
  if (err instanceof CatalogError) return errorResult(err);
  if (err instanceof ValidationError) return errorResult(invalidQuery(err.details, err.message));
  return undefined;
}

export const CATALOG_POLICY: ApiPolicy<CatalogDeps> = {
  name: 'catalog',
  fn: 'catalog',
  // Every route of the table (favorites too), so 405 `Allow` and preflights name each path's verbs; any /api preflight gets at least GET.
  routes: CATALOG_API.routes,
  preflightFallback: ['GET'],
  operations,
  limit: {
    limiter: (deps) => deps.limiter,
    // The tier resolver verifies a bearer itself: a bad or unverifiable token is the anonymous tier, never an error.
    bucket: ({ event, deps, resolution }) =>
      resolution.kind === 'route' && UNLIMITED.has(resolution.route.operationId) ? undefined : deps.callers.resolve(event),
    timing: 'concurrent',
    headers: rateHeaders,
  },
  preflight: (allowed) => ({ statusCode: 204, headers: preflightHeaders(allowed), body: '' }),
  problem: catalogProblem,
  error: catalogError,
  headers: corsHeaders,
  originSecret: (deps) => deps.originSecret,
};

export const handleCatalogRequest = createPipeline(CATALOG_POLICY);

// ------------------------------------------------------------------------------------------------
// The catalog over MCP (`/api/mcp`, lambdas/catalog/mcp) is served by this same function: the same
// warm instances, search index (the S3 snapshot loaded once) and limiter, and no function, function
// URL or CloudFront behaviour of its own. Its SDK part is loaded by its first request (mcp-endpoint.ts).

const isMcp = (event: HttpEvent): boolean => event.rawPath === CATALOG_MCP_PATH;

let mcpConfig: CatalogMcpConfig | undefined;

/** The MCP endpoint's dependencies: the catalog function's own (a handful of references, taken per request as the deps are now). */
function mcpDepsOf(deps: CatalogDeps): CatalogMcpDeps {
  mcpConfig ??= loadCatalogMcpConfig();
  return {
    config: mcpConfig,
    store: deps.store,
    index: deps.index,
    cursors: deps.cursors,
    ...(deps.config.siteUrlTemplate !== undefined && { siteUrlTemplate: deps.config.siteUrlTemplate }),
    ...(deps.allowList && { allowList: deps.allowList }),
    limiter: deps.limiter,
    tiers: deps.callers,
    ...(deps.originSecret && { originSecret: deps.originSecret }),
  };
}

/** The catalog function: `/api/mcp` to the MCP endpoint's pipeline, every other path to the JSON API's. */
export const handleCatalogFunctionRequest: Pipeline<CatalogDeps> = (event, deps, requestId) =>
  isMcp(event) ? handleCatalogMcpRequest(event, mcpDepsOf(deps), requestId) : handleCatalogRequest(event, deps, requestId);

/** The function's policy around the pipelines: a request that cannot be served yet is worded by the endpoint it was for. */
const CATALOG_FUNCTION_POLICY: ApiPolicy<CatalogDeps> = {
  ...CATALOG_POLICY,
  problem: (problem, event, operationId) => (isMcp(event) ? CATALOG_MCP_POLICY.problem(problem, event) : CATALOG_POLICY.problem(problem, event, operationId)),
  headers: (event, deps) => (isMcp(event) ? CATALOG_MCP_POLICY.headers?.(event, undefined) : CATALOG_POLICY.headers?.(event, deps)) ?? {},
};

/** The Lambda entry. */
export function createCatalogHandler(getDeps: () => Promise<CatalogDeps>) {
  return lambdaEntry(CATALOG_FUNCTION_POLICY, getDeps, handleCatalogFunctionRequest);
}
