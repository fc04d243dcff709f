import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { loadCatalogConfig } from './config';
import { createCatalogHandler } from './api';
import type { CatalogDeps } from './deps';
import { createOpenSearchClient, OpenSearchIndex } from './search/opensearch';
import { createCatalogDeps } from './wiring';
import { retryingOnce } from '../shared/concurrency';

/** The catalog Lambda (AWS): every `/api` route and the `$default` catch-all of the HTTP API. */
function init(): Promise<CatalogDeps> {
  const config = loadCatalogConfig();
  if (!config.opensearchUrl) throw new Error('OPENSEARCH_URL is required in AWS');
  const index = new OpenSearchIndex({ client: createOpenSearchClient(config.opensearchUrl, config.region), index: config.opensearchIndex });
  // The bearer tier: a valid token raises the limit; a bad or unverifiable one is anonymous, never a 401.
  return createCatalogDeps(config, index, createIdentity(loadAuthConfig()).verifier);
}

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createCatalogHandler(retryingOnce(init));
