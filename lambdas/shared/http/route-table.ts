/**
 * Route tables are plain data, read by both the CDK stack (to declare API Gateway routes)
 * and the local server (to dispatch). Path templates use API Gateway's syntax:
 * `{name}` for one segment, `{name+}` for a greedy tail.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDef {
  method: HttpMethod;
  path: string;
  /** The Lambda function (bounded context) that serves the route. */
  fn: string;
  /** Stable id, also the OpenAPI operationId. */
  operationId: string;
}

export interface ApiTable {
  /** Function that answers the API's `$default` catch-all (404, 405, CORS preflight). */
  catchAllFn: string;
  /** Path prefix that belongs to this API (e.g. `/api`). */
  prefix: string;
  routes: readonly RouteDef[];
}

/** `GET /api/mcps/{slug}`: the API Gateway route key. */
export function routeKey(r: Pick<RouteDef, 'method' | 'path'>): string {
  return `${r.method} ${r.path}`;
}

interface CompiledRoute {
  route: RouteDef;
  regex: RegExp;
  params: string[];
}

export interface RouteMatch {
  route: RouteDef;
  pathParameters: Record<string, string>;
}

export interface PathMatch {
  /** The route for this method, if any. */
  match?: RouteMatch;
  /** Methods that some route serves on this path (empty when the path is unknown). */
  allowed: HttpMethod[];
}

/** Matches raw (still percent-encoded) paths against a table, the way API Gateway does. */
export class RouteMatcher {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly RouteDef[]) {
    this.compiled = routes.map((route) => {
      const params: string[] = [];
      const pattern = route.path
        .split('/')
        .map((seg) => {
          const m = /^\{([A-Za-z0-9_]+)(\+)?\}$/.exec(seg);
          if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          params.push(m[1]);
          return m[2] ? '(.+)' : '([^/]+)';
        })
        .join('/');
      return { route, regex: new RegExp(`^${pattern}$`), params };
    });
  }

  match(method: string, rawPath: string): PathMatch {
    const allowed: HttpMethod[] = [];
    let found: RouteMatch | undefined;
    for (const c of this.compiled) {
      const m = c.regex.exec(rawPath);
      if (!m) continue;
      if (!allowed.includes(c.route.method)) allowed.push(c.route.method);
      if (!found && c.route.method === method) {
        const pathParameters: Record<string, string> = {};
        c.params.forEach((p, i) => {
          pathParameters[p] = safeDecode(m[i + 1]);
        });
        found = { route: c.route, pathParameters };
      }
    }
    return { match: found, allowed };
  }
}

/** API Gateway hands path parameters over decoded once; a malformed escape stays as it came. */
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
