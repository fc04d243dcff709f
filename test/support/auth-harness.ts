import { DynamoCatalogStore, embeddedSearchIndex } from '../../lambdas/catalog-core';
import { randomBytes } from 'node:crypto';
import { provision } from '../../bin/local-stack/catalog-env';
import { createLocalServer, listen, type RunningServer } from '../../bin/local-stack/server';
import type { AuthConfig } from '../../lambdas/identity/config';
import { createFavoritesHandler } from '../../lambdas/catalog/favorites/api';
import type { FavoritesDeps } from '../../lambdas/catalog/favorites/deps';
import { DynamoFavoritesStore } from '../../lambdas/catalog/favorites/store';
import { createFavoritesDeps } from '../../lambdas/catalog/favorites/wiring';
import { createJwksHandler, LOCAL_ISSUER_API } from '../../lambdas/identity/local-issuer';
import { DynamoTokenStore } from '../../lambdas/identity/token-store';
import { createTokenVerifier, type TokenVerifier } from '../../lambdas/identity/verifier';
import { createCatalogHandler } from '../../lambdas/catalog/api';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import type { CatalogConfig } from '../../lambdas/catalog/config';
import type { HttpEvent } from '../../lambdas/shared/http/types';
import { makeRecord } from './records';
import { AUDIENCE, bearerOf, ISSUER, localAuthConfig, testIssuer, type TestIssuer } from './auth-jwks';
import { catalogScratch } from './catalog-harness';

/**
 * The catalog and favorites functions behind the real local HTTP server (the catalog's route table
 * holds the favorites routes), the catalog's bearer tier switched on, and the local issuer's JWKS served by the same server; all on this test
 * file's own tables in the run's DynamoDB Local.
 */
export { AUDIENCE, ISSUER };

export interface FavoritesStack {
  url: string;
  config: CatalogConfig;
  authConfig: AuthConfig;
  issuer: TestIssuer;
  tokens: DynamoTokenStore;
  catalogStore: DynamoCatalogStore;
  deps: FavoritesDeps;
  /** The catalog function's dependencies (bearer tier on). */
  catalogDeps: CatalogDeps;
  verifier: TokenVerifier;
  /** A valid local-issuer bearer header for `sub`. */
  bearer(sub: string): string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startFavoritesStack(opts: { slugs: string[] }): Promise<FavoritesStack> {
  const { id, dir, ddbEndpoint, config: scratch } = catalogScratch('fav-');
  // The spec's tiers (30/60 anonymous, 100/200 per user): these tests read them back from the headers.
  const config: CatalogConfig = {
    ...scratch,
    anonymous: { rate: 30, burst: 60 },
    authenticated: { rate: 100, burst: 200 },
  };
  const tables = { tokens: `tokens-${id}`, clients: `clients-${id}`, favorites: `favorites-${id}` };
  await provision(config, { auth: tables });
  const ddb = dynamoClient({ region: config.region, dynamoEndpoint: ddbEndpoint });
  const doc = documentClient(ddb);
  const catalogStore = new DynamoCatalogStore(doc, config.catalogTable);
  await catalogStore.put(opts.slugs.map((slug) => ({ record: makeRecord(slug) })));
  const tokens = new DynamoTokenStore(doc, tables.tokens);
  const issuer = testIssuer(ISSUER, dir.root);

  let catalogDeps: CatalogDeps | undefined;
  let favoritesDeps: FavoritesDeps | undefined;
  const catalog = createCatalogHandler(async () => {
    if (!catalogDeps) throw new Error('not ready');
    return catalogDeps;
  });
  const favorites = createFavoritesHandler(async () => {
    if (!favoritesDeps) throw new Error('not ready');
    return favoritesDeps;
  });
  const running: RunningServer = await listen(
    createLocalServer({
      apis: [
        { table: CATALOG_API, functions: { catalog, favorites } },
        { table: LOCAL_ISSUER_API, functions: { auth: createJwksHandler(issuer.issuer) } },
      ],
      ready: () => true,
    }),
    0,
  );
  // The verifier fetches the JWKS from the server it runs in, as the local stack does.
  const authConfig = localAuthConfig(running.url, tables, config);
  const verifier = createTokenVerifier(authConfig, { tokens });
  catalogDeps = await createCatalogDeps(config, embeddedSearchIndex({}), verifier);
  // Pins one simulated second apart, so "newest first" does not hang on the wall clock's resolution.
  let tick = Date.parse('2026-11-01T00:00:00Z');
  const built = await createFavoritesDeps(config, { favoritesTable: tables.favorites, maxFavorites: 1000 }, verifier);
  favoritesDeps = { ...built, favorites: new DynamoFavoritesStore(doc, tables.favorites, () => (tick += 1000)) };

  return {
    url: running.url,
    config,
    authConfig,
    issuer,
    tokens,
    catalogStore,
    deps: favoritesDeps,
    catalogDeps,
    verifier,
    bearer: (sub) => bearerOf(issuer, sub),
    fetch: (path, init) => fetch(`${running.url}${path}`, init),
    close: async () => {
      await running.close();
      ddb.destroy();
    },
  };
}

/** An API Gateway v2 event for calling a handler directly (`$default` unless a route key is given). */
export function apiEvent(
  method: string,
  path: string,
  o: {
    headers?: Record<string, string>;
    body?: string;
    routeKey?: string;
    pathParameters?: Record<string, string>;
    query?: string;
    /** Fixed when a test looks for it in the logs; random otherwise. */
    requestId?: string;
  } = {},
): HttpEvent {
  return {
    version: '2.0',
    routeKey: o.routeKey ?? '$default',
    rawPath: path,
    rawQueryString: o.query ?? '',
    headers: o.headers ?? {},
    ...(o.pathParameters && { pathParameters: o.pathParameters }),
    body: o.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: o.requestId ?? randomBytes(8).toString('hex'),
      routeKey: o.routeKey ?? '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
  };
}
