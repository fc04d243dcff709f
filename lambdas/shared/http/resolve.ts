import { AppError } from '../errors';
import { logger } from '../logger';
import { internalError } from './catalog-envelope';
import { definedOnly } from './respond';
import { RouteMatcher, routeKey, type RouteDef } from './route-table';
import { header, type HttpEvent } from './types';

export type Resolved =
  | { kind: 'route'; route: RouteDef; params: Record<string, string> }
  | { kind: 'preflight'; allowed: string[] }
  | { kind: 'error'; error: AppError };

/**
 * Which route of `fn` a request is for. API Gateway already resolved it into `routeKey`; requests
 * that fell through to `$default` are unknown paths (404), wrong verbs (405 with `Allow` naming the
 * path's verbs across every route of the table) or CORS preflights (204), answered in the API's
 * own envelope. A preflight of an unknown path gets `preflightFallback` when given, else a 404.
 */
export function routeResolver(routes: readonly RouteDef[], fn: string, preflightFallback?: string[]) {
  const matcher = new RouteMatcher(routes);
  const byKey = new Map<string, RouteDef>(routes.filter((r) => r.fn === fn).map((r) => [routeKey(r), r]));
  return (event: HttpEvent): Resolved => {
    const route = byKey.get(event.routeKey);
    if (route) return { kind: 'route', route, params: definedOnly(event.pathParameters) };
    const method = event.requestContext.http.method.toUpperCase();
    const { match, allowed } = matcher.match(method, event.rawPath);
    if (match && match.route.fn === fn) return { kind: 'route', route: match.route, params: match.pathParameters };
    if (match) {
      // A route of another function reached this one: the routing is misconfigured.
      logger.error(`route of another function reached the ${fn} function`, { route: match.route.operationId, fn: match.route.fn });
      return { kind: 'error', error: internalError() };
    }
    const preflight = allowed.length ? allowed : preflightFallback;
    if (method === 'OPTIONS' && header(event, 'access-control-request-method') && preflight) return { kind: 'preflight', allowed: preflight };
    if (allowed.length) {
      return {
        kind: 'error',
        error: new AppError('METHOD_NOT_ALLOWED', `${method} is not allowed here`, undefined, { allow: allowed.join(', ') }),
      };
    }
    return { kind: 'error', error: new AppError('NOT_FOUND', 'No such endpoint') };
  };
}
