import { AppError } from '../../shared/errors';
import { errorResult, internalError } from '../../shared/http/catalog-envelope';
import { catalogEnvelopeEntry } from '../../shared/http/lambda-entry';
import { corsHeaders, preflightHeaders } from '../../shared/http/cors';
import { parseRawQuery } from '../../shared/http/query';
import { rateHeaders, toResult } from '../../shared/http/respond';
import { routeResolver } from '../../shared/http/resolve';
import type { RouteDef } from '../../shared/http/route-table';
import { header, type HttpEvent, type HttpResult } from '../../shared/http/types';
import { logger } from '../../shared/logger';
import { logRequest } from '../../shared/http/request-log';
import { failOpen } from '../../shared/rate-limit/fail-open';
import type { RateDecision } from '../../shared/rate-limit/rate-limiter';
import { tierFor } from '../callers';
import type { Principal } from '../../identity/principal';
import type { TokenVerifier } from '../../identity/verifier';
import type { FavoritesDeps } from './deps';
import { FAVORITES_HANDLERS } from './handlers';
import { FAVORITES_ROUTES } from './routes';

/**
 * In AWS only the three favorites routes reach this function (their preflights and wrong verbs
 * fall to the catalog's catch-all); resolving them here too keeps the function correct wherever
 * it is mounted.
 */
const resolve = routeResolver(FAVORITES_ROUTES, 'favorites');

/**
 * A verifier that answers this request's header from the verification already done for the rate
 * limit, so a token is checked once per request (one table read at most for an opaque token).
 */
function settledVerifier(inner: TokenVerifier, authorization: string | undefined, verification: Promise<Principal>): TokenVerifier {
  return { verify: (h) => (h === authorization ? verification : inner.verify(h)) };
}

export async function handleFavoritesRequest(event: HttpEvent, deps: FavoritesDeps, requestId: string): Promise<HttpResult> {
  const started = performance.now();
  const resolved = resolve(event);
  let out: HttpResult;
  let decision: RateDecision | undefined;
  if (resolved.kind === 'preflight') {
    out = { statusCode: 204, headers: preflightHeaders(resolved.allowed), body: '' };
  } else {
    const authorization = header(event, 'authorization');
    const verification = deps.verifier.verify(authorization);
    const principal = await verification.then(
      (p) => p,
      () => undefined,
    );
    // Writes have side effects, so the limiter decides before the handler runs (unlike catalog reads).
    decision = await consume(event, deps, principal, requestId);
    if (decision && !decision.allowed) {
      out = errorResult(
        new AppError('RATE_LIMITED', 'Too many requests; retry after the delay in Retry-After', undefined, {
          'retry-after': String(decision.retryAfterSeconds),
        }),
      );
    } else if (resolved.kind === 'error') {
      out = errorResult(resolved.error);
    } else {
      const requestDeps: FavoritesDeps = { ...deps, verifier: settledVerifier(deps.verifier, authorization, verification) };
      out = await runRoute(resolved.route, resolved.params, event, requestDeps, requestId);
    }
  }
  out.headers = { ...out.headers, ...corsHeaders(), ...(decision && rateHeaders(decision)) };
  logRequest(requestId, event, resolved.kind === 'route' ? resolved.route.operationId : resolved.kind, out.statusCode, started);
  return out;
}

async function runRoute(route: RouteDef, params: Record<string, string>, event: HttpEvent, deps: FavoritesDeps, requestId: string): Promise<HttpResult> {
  const handler = FAVORITES_HANDLERS[route.operationId];
  try {
    return toResult(await handler({ event, query: parseRawQuery(event.rawQueryString), params, requestId }, deps));
  } catch (err) {
    if (err instanceof AppError) return errorResult(err);
    logger.error('unhandled error', { requestId, err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
    return errorResult(internalError());
  }
}

/** The shared limiter, tiered like catalog reads; its table failing opens the gate (logged), never a 500. */
async function consume(event: HttpEvent, deps: FavoritesDeps, principal: Principal | undefined, requestId: string): Promise<RateDecision | undefined> {
  return failOpen(requestId, () => {
    const caller = tierFor(principal, event, deps.catalogConfig, deps.originSecret);
    return deps.limiter.consume(caller.key, caller.policy);
  });
}

/** The Lambda entry (see `catalogEnvelopeEntry`). */
export function createFavoritesHandler(getDeps: () => Promise<FavoritesDeps>) {
  return catalogEnvelopeEntry('favorites', getDeps, handleFavoritesRequest);
}
