import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { loadCatalogConfig } from '../shared/config';
import { createCatalogHandler } from './api';
import type { CatalogDeps } from './deps';
import { createOpenSearchClient, OpenSearchIndex } from './search/opensearch';
import { createCatalogDeps } from './wiring';

/** The catalog Lambda (AWS): every `/api` route and the `$default` catch-all of the HTTP API. */
let deps: Promise<CatalogDeps> | undefined;

function init(): Promise<CatalogDeps> {
  const config = loadCatalogConfig();
  if (!config.opensearchUrl) throw new Error('OPENSEARCH_URL is required in AWS');
  const index = new OpenSearchIndex({ client: createOpenSearchClient(config.opensearchUrl, config.region), index: config.opensearchIndex });
  // The bearer tier: a valid token raises the limit; a bad or unverifiable one is anonymous, never a 401.
  return createCatalogDeps(config, index, createIdentity(loadAuthConfig()).verifier);
}

export const handler = createCatalogHandler(() => {
  deps ??= init().catch((err: unknown) => {
    deps = undefined; // a failed init (e.g. Secrets Manager throttled) is retried by the next request
    throw err;
  });
  return deps;
});
