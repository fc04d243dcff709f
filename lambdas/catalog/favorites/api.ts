import { isAuthError, refusalMessage, type Principal } from '../../identity/principal';
import { createPipeline, lambdaEntry, operationsOf, withPrincipal, type ApiPolicy } from '../../shared/http/pipeline';
import type { HttpResult } from '../../shared/http/types';
import { catalogError, catalogProblem } from '../api';
import { tierFor } from '../callers';
import { corsHeaders, preflightHeaders } from '../cors';
import { errorResult, rateHeaders } from '../envelope';
import { CatalogError } from '../errors';
import type { FavoritesDeps } from './deps';
import { FAVORITES_ENDPOINTS, type FavoritesCtx } from './endpoints';
import { FAVORITES_ROUTES } from './routes';

/** Seconds a client waits before retrying when the token could not be checked. */
const AUTH_RETRY_AFTER = '5';

/**
 * A verifier failure in the catalog's envelope: 401 UNAUTHORIZED (with the RFC 6750 challenge) or
 * 503 AUTH_UNAVAILABLE (with Retry-After), so a client retries an outage instead of signing out.
 */
function authFailure(err: unknown): HttpResult | undefined {
  if (!isAuthError(err)) return undefined;
  if (err.kind === 'unavailable') {
    return errorResult(
      new CatalogError('AUTH_UNAVAILABLE', 'The sign-in service cannot be reached; retry shortly', undefined, { 'retry-after': AUTH_RETRY_AFTER }),
    );
  }
  const missing = err.reason === 'missing';
  return errorResult(
    new CatalogError('UNAUTHORIZED', refusalMessage(err), undefined, {
      'www-authenticate': missing ? 'Bearer' : 'Bearer error="invalid_token"',
    }),
  );
}

/**
 * Favorites (spec 1): the catalog's envelope and tiers, a valid token of any scope required
 * (DECISIONS). In AWS only the three favorites routes reach this function (their preflights and
 * wrong verbs fall to the catalog's catch-all); resolving them here too keeps the function correct
 * wherever it is mounted. Writes have side effects, so the limiter decides before the handler runs,
 * on the user's bucket when the token is good and the client IP's otherwise.
 */
export const FAVORITES_POLICY: ApiPolicy<FavoritesDeps, Principal> = {
  name: 'favorites',
  fn: 'favorites',
  routes: FAVORITES_ROUTES,
  operations: operationsOf<FavoritesDeps, Principal, FavoritesCtx>(FAVORITES_ENDPOINTS, withPrincipal),
  auth: { mode: 'required', verify: (deps, authorization) => deps.verifier.verify(authorization) },
  limit: {
    limiter: (deps) => deps.limiter,
    bucket: ({ event, deps, principal }) => tierFor(principal, event, deps.catalogConfig, deps.originSecret),
    timing: 'first',
    afterVerification: true,
    headers: rateHeaders,
  },
  preflight: (allowed) => ({ statusCode: 204, headers: preflightHeaders(allowed), body: '' }),
  problem: catalogProblem,
  error: (err) => authFailure(err) ?? catalogError(err),
  headers: corsHeaders,
  originSecret: (deps) => deps.originSecret,
};

export const handleFavoritesRequest = createPipeline(FAVORITES_POLICY);

/** The Lambda entry. */
export function createFavoritesHandler(getDeps: () => Promise<FavoritesDeps>) {
  return lambdaEntry(FAVORITES_POLICY, getDeps, handleFavoritesRequest);
}
