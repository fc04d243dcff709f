import { searchIndexForReads } from '../catalog-core';
import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { loadCatalogConfig } from './config';
import { createCatalogHandler } from './api';
import type { CatalogDeps } from './deps';
import { createCatalogDeps } from './wiring';
import { retryingOnce } from '../shared/concurrency';

/**
 * The catalog Lambda (AWS): every `/api` route and the `$default` catch-all of the HTTP API. The
 * search engine is the OpenSearch domain, or in the small-catalog mode the embedded engine over
 * the S3 snapshot (loaded here, at the instance's first request).
 */
async function init(): Promise<CatalogDeps> {
  const config = loadCatalogConfig();
  const index = await searchIndexForReads(config);
  // The bearer tier: a valid token raises the limit; a bad or unverifiable one is anonymous, never a 401.
  return createCatalogDeps(config, index, createIdentity(loadAuthConfig()).verifier);
}

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createCatalogHandler(retryingOnce(init));
