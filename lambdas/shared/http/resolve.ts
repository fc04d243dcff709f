import { RouteMatcher, routeKey, type RouteDef } from './route-table';
import { definedOnly } from './respond';
import { header, type HttpEvent } from './types';

/**
 * Which route a request is for, in no API's vocabulary (each API words the outcomes itself).
 * API Gateway already resolved it into `routeKey`; requests that fell through to `$default` are
 * unknown paths, wrong verbs (with the verbs the path does take, across every route of the table)
 * or CORS preflights.
 */
export type Resolution =
  | { kind: 'route'; route: RouteDef; params: Record<string, string> }
  | { kind: 'preflight'; allowed: string[] }
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed'; method: string; allowed: string[] }
  /** A route of another function reached this one: the routing is misconfigured. */
  | { kind: 'misrouted'; route: RouteDef };

/**
 * The resolver of function `fn` over `routes` (the whole table, so `Allow` names every verb of a
 * path). A preflight of a path the table does not know gets `preflightFallback` when given.
 */
export function routeResolver(routes: readonly RouteDef[], fn: string, preflightFallback?: string[]): (event: HttpEvent) => Resolution {
  const matcher = new RouteMatcher(routes);
  const byKey = new Map<string, RouteDef>(routes.filter((r) => r.fn === fn).map((r) => [routeKey(r), r]));
  return (event) => {
    const route = byKey.get(event.routeKey);
    if (route) return { kind: 'route', route, params: definedOnly(event.pathParameters) };
    const method = event.requestContext.http.method.toUpperCase();
    const { match, allowed } = matcher.match(method, event.rawPath);
    if (match && match.route.fn === fn) return { kind: 'route', route: match.route, params: match.pathParameters };
    if (match) return { kind: 'misrouted', route: match.route };
    const preflight = allowed.length ? allowed : preflightFallback;
    if (method === 'OPTIONS' && header(event, 'access-control-request-method') && preflight) return { kind: 'preflight', allowed: preflight };
    if (allowed.length) return { kind: 'method_not_allowed', method, allowed };
    return { kind: 'not_found' };
  };
}
