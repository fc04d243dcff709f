import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import { provision } from '../../bin/local-stack/catalog-env';
import { createLocalServer, listen, type RunningServer } from '../../bin/local-stack/server';
import { createCatalogHandler } from '../../lambdas/catalog/api';
import type { CatalogConfig } from '../../lambdas/catalog/config';
import { createOrgHandler } from '../../lambdas/catalog/org/api';
import { createOrgDeps, loadOrgConfig, type OrgDeps } from '../../lambdas/catalog/org/deps';
import { ORG_API } from '../../lambdas/catalog/org/routes';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { createJwksHandler, LOCAL_ISSUER_API } from '../../lambdas/identity/local-issuer';
import { DynamoTokenStore } from '../../lambdas/identity/token-store';
import { createTokenVerifier } from '../../lambdas/identity/verifier';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { bearerOf, ISSUER, localAuthConfig, testIssuer } from './auth-jwks';
import { catalogScratch } from './catalog-harness';
import { docOf, type Entry } from './records';

/**
 * The organisation registry (`/org`) and the catalog API (`/api`) behind the real local HTTP server,
 * on this test's own tables and buckets in the run's DynamoDB Local and S3 server, with the local
 * issuer's JWKS on the same server for the admin API's tokens. The allow-list is read afresh on
 * every request (refresh 0) unless `refreshSeconds` says otherwise.
 */
export interface OrgStack {
  url: string;
  deps: OrgDeps;
  /** A bearer header of the local issuer for `sub`, with these user pool groups. */
  bearer(sub: string, groups?: string[]): string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startOrgStack(entries: Entry[], opts: { refreshSeconds?: number } = {}): Promise<OrgStack> {
  const { id, dir, ddbEndpoint, config: scratch } = catalogScratch('org-');
  const config: CatalogConfig = {
    ...scratch,
    allowList: { bucket: `org-${id}`.toLowerCase(), key: 'org/allow-list.yaml' },
    allowListRefreshSeconds: opts.refreshSeconds ?? 0,
    anonymous: { rate: 100000, burst: 100000 },
  };
  const tables = { tokens: `tokens-${id}`, clients: `clients-${id}`, favorites: `favorites-${id}` };
  await provision(config, { auth: tables });
  const ddb = dynamoClient({ region: config.region, dynamoEndpoint: ddbEndpoint });
  const issuer = testIssuer(ISSUER, dir.root);
  let orgDeps: OrgDeps | undefined;
  const catalog = createCatalogHandler(async () => (orgDeps as OrgDeps) ?? Promise.reject(new Error('not ready')));
  const org = createOrgHandler(async () => orgDeps ?? Promise.reject(new Error('not ready')));
  const running: RunningServer = await listen(
    createLocalServer({
      apis: [
        { table: CATALOG_API, functions: { catalog, favorites: catalog } },
        { table: ORG_API, functions: { org } },
        { table: LOCAL_ISSUER_API, functions: { auth: createJwksHandler(issuer.issuer) } },
      ],
      ready: () => true,
    }),
    0,
  );
  const verifier = createTokenVerifier(localAuthConfig(running.url, tables, config), {
    tokens: new DynamoTokenStore(documentClient(ddb), tables.tokens),
  });
  const index = embeddedSearchIndex({});
  const catalogDeps = await createCatalogDeps(config, index, verifier);
  await catalogDeps.store.put(entries);
  await index.upsert(entries.map(docOf));
  orgDeps = createOrgDeps(loadOrgConfig(config, {}), catalogDeps, verifier);
  return {
    url: running.url,
    deps: orgDeps,
    bearer: (sub, groups) => bearerOf(issuer, sub, groups),
    fetch: (path, init) => fetch(`${running.url}${path}`, init),
    close: async () => {
      await running.close();
      ddb.destroy();
    },
  };
}
