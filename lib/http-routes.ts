import { HttpMethod, HttpRoute, HttpRouteKey, type IHttpApi, type IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { routeKey, type ApiTable, type RouteDef } from '../lambdas/shared/http/route-table';

/** Authorization of one route, for routes that API Gateway itself should guard. */
export interface RouteAuthorization {
  readonly authorizer?: IHttpRouteAuthorizer;
  readonly authorizationScopes?: string[];
}

export interface AddRoutesFromTableOptions {
  /**
   * Declare the `$default` catch-all route, integrated with the table's `catchAllFn`, so unknown
   * paths, wrong verbs and CORS preflights reach the function and are answered in the API's own
   * envelope (DECISIONS). An HTTP API has one `$default` route: pass `false` for every table but one
   * when several tables share an API.
   * @default true
   */
  readonly catchAll?: boolean;
  /**
   * Authorization per route (e.g. a JWT authorizer on routes that must never run anonymously).
   * @default - no route has an API Gateway authorizer; the functions read bearer tokens themselves
   */
  readonly authorizationFor?: (route: RouteDef) => RouteAuthorization | undefined;
}

export interface TableRoutes {
  /** The routes of the table, by route key (`GET /api/mcps`). */
  readonly routes: ReadonlyMap<string, HttpRoute>;
  /** The `$default` route, when one was declared. */
  readonly catchAll?: HttpRoute;
}

const METHODS: Readonly<Record<RouteDef['method'], HttpMethod>> = {
  GET: HttpMethod.GET,
  POST: HttpMethod.POST,
  PUT: HttpMethod.PUT,
  PATCH: HttpMethod.PATCH,
  DELETE: HttpMethod.DELETE,
};

/**
 * Declares one API Gateway route per entry of a route table, each integrated (Lambda proxy, payload
 * format 2.0) with the function that serves it, plus the `$default` catch-all. The table is the
 * single source of truth shared with the local server: nothing here lists routes by hand.
 *
 * `fnByName` maps the table's function names (`RouteDef.fn`, `ApiTable.catchAllFn`) to functions;
 * a name the table uses but the map lacks is an error at synth time. Each function gets one
 * integration per API, and each route a Lambda permission scoped to its own path.
 */
export function addRoutesFromTable(
  httpApi: IHttpApi,
  table: ApiTable,
  fnByName: Readonly<Record<string, IFunction>>,
  options: AddRoutesFromTableOptions = {},
): TableRoutes {
  const integrations = new Map<string, HttpLambdaIntegration>();
  const integrationFor = (name: string): HttpLambdaIntegration => {
    let integration = integrations.get(name);
    if (!integration) {
      const fn = fnByName[name];
      if (!fn) {
        throw new Error(`route table ${table.prefix}: no function named "${name}" (known: ${Object.keys(fnByName).join(', ') || 'none'})`);
      }
      integration = new HttpLambdaIntegration(`${pascal(name)}Integration`, fn);
      integrations.set(name, integration);
    }
    return integration;
  };

  const routes = new Map<string, HttpRoute>();
  for (const def of table.routes) {
    const key = routeKey(def);
    if (routes.has(key)) throw new Error(`route table ${table.prefix}: duplicate route ${key}`);
    if (def.path !== table.prefix && !def.path.startsWith(`${table.prefix}/`)) {
      throw new Error(`route table ${table.prefix}: ${key} lies outside the table's prefix`);
    }
    const auth = options.authorizationFor?.(def);
    routes.set(
      key,
      new HttpRoute(httpApi, `Route${pascal(def.operationId)}`, {
        httpApi,
        routeKey: HttpRouteKey.with(def.path, METHODS[def.method]),
        integration: integrationFor(def.fn),
        authorizer: auth?.authorizer,
        authorizationScopes: auth?.authorizationScopes,
      }),
    );
  }

  const catchAll =
    options.catchAll === false
      ? undefined
      : new HttpRoute(httpApi, 'RouteCatchAll', {
          httpApi,
          routeKey: HttpRouteKey.DEFAULT,
          integration: integrationFor(table.catchAllFn),
        });

  return { routes, catchAll };
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/**
 * `ANY <path>` routes on `httpApi` to `fn`, one per path, for paths whose every verb the function
 * answers itself (a wrong verb is its own 405, not the catch-all's). Created in `scope` as
 * `<ids.route><i>`, with one integration `ids.integration`.
 */
export function addAnyRoutes(
  scope: Construct,
  httpApi: IHttpApi,
  paths: readonly string[],
  fn: IFunction,
  ids: { route: string; integration: string },
): HttpRoute[] {
  const integration = new HttpLambdaIntegration(ids.integration, fn);
  return paths.map((p, i) => new HttpRoute(scope, `${ids.route}${i}`, { httpApi, routeKey: HttpRouteKey.with(p, HttpMethod.ANY), integration }));
}
