import { AppError } from '../shared/errors';
import { errorResult, internalError } from '../shared/http/catalog-envelope';
import { catalogEnvelopeEntry } from '../shared/http/lambda-entry';
import { corsHeaders, preflightHeaders } from '../shared/http/cors';
import { parseRawQuery } from '../shared/http/query';
import { rateHeaders, toResult } from '../shared/http/respond';
import { routeResolver, type Resolved } from '../shared/http/resolve';
import type { HttpEvent, HttpResult } from '../shared/http/types';
import { logger } from '../shared/logger';
import { logRequest } from '../shared/http/request-log';
import { failOpen } from '../shared/rate-limit/fail-open';
import type { RateDecision } from '../shared/rate-limit/rate-limiter';
import type { CatalogDeps } from './deps';
import { CATALOG_HANDLERS } from './handlers';
import { ResponseCache } from './response-cache';
import { CATALOG_API } from './routes';

/** Icons are immutable and exempt from rate limits (spec 1). */
const UNLIMITED = new Set(['getIcon']);
/** Reads answered from the search index alone, whose responses depend only on the query and the index content. */
const INDEX_READS = new Set(['listServers', 'searchServers', 'autocomplete', 'listCategories', 'listLanguages', 'listLicenses', 'getFacets', 'listSlugs', 'listRegistryServers']);
const caches = new WeakMap<CatalogDeps, ResponseCache | null>();

function responseCache(deps: CatalogDeps): ResponseCache | null {
  let cache = caches.get(deps);
  if (cache === undefined) {
    cache = deps.config.responseCacheEntries > 0 ? new ResponseCache(deps.config.responseCacheEntries) : null;
    caches.set(deps, cache);
  }
  return cache;
}

/** Every route of the table (favorites too), so 405 `Allow` and preflights name each path's verbs; any /api preflight gets at least GET. */
const resolve = routeResolver(CATALOG_API.routes, 'catalog', ['GET']);

async function runRoute(resolved: Resolved, event: HttpEvent, deps: CatalogDeps, requestId: string): Promise<HttpResult> {
  if (resolved.kind === 'error') return errorResult(resolved.error);
  if (resolved.kind === 'preflight') return { statusCode: 204, headers: preflightHeaders(resolved.allowed), body: '' };
  const op = resolved.route.operationId;
  const handler = CATALOG_HANDLERS[op];
  try {
    const cache = INDEX_READS.has(op) && deps.index.generation ? responseCache(deps) : null;
    const generation = cache && deps.index.generation ? await deps.index.generation() : undefined;
    const key = `${op}?${event.rawQueryString ?? ''}`;
    const cached = cache && generation && cache.get(key, generation);
    if (cached) return cached;
    const result = toResult(await handler({ event, query: parseRawQuery(event.rawQueryString), params: resolved.params, requestId }, deps));
    if (cache && generation) cache.set(key, generation, result);
    return result;
  } catch (err) {
    if (err instanceof AppError) return errorResult(err);
    logger.error('unhandled error', { requestId, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
    return errorResult(internalError());
  }
}

/** Consults the shared limiter; an outage of the limiter's table fails open (logged), never a 500. */
function limit(event: HttpEvent, deps: CatalogDeps, requestId: string): Promise<RateDecision | undefined> {
  return failOpen(requestId, async () => {
    const caller = await deps.callers.resolve(event);
    return deps.limiter.consume(caller.key, caller.policy);
  });
}

export async function handleCatalogRequest(event: HttpEvent, deps: CatalogDeps, requestId: string): Promise<HttpResult> {
  const started = performance.now();
  const resolved = resolve(event);
  const limited = !(resolved.kind === 'preflight' || (resolved.kind === 'route' && UNLIMITED.has(resolved.route.operationId)));
  // The limiter's round trip runs concurrently with the request's own work (reads have no side effects).
  const [decision, result] = await Promise.all([
    limited ? limit(event, deps, requestId) : Promise.resolve(undefined),
    runRoute(resolved, event, deps, requestId),
  ]);
  let out = result;
  if (decision && !decision.allowed) {
    out = errorResult(
      new AppError('RATE_LIMITED', 'Too many requests; retry after the delay in Retry-After', undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      }),
    );
  }
  out.headers = { ...out.headers, ...corsHeaders(), ...(decision && rateHeaders(decision)) };
  logRequest(requestId, event, resolved.kind === 'route' ? resolved.route.operationId : resolved.kind, out.statusCode, started);
  return out;
}

/** The Lambda entry (see `catalogEnvelopeEntry`). */
export function createCatalogHandler(getDeps: () => Promise<CatalogDeps>) {
  return catalogEnvelopeEntry('catalog', getDeps, handleCatalogRequest);
}
