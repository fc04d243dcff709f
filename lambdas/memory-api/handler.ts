import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { createMemoryApiHandler } from './api';
import { loadMemoryApiConfig } from './config';
import type { MemoryApiDeps } from './deps';
import { createMemoryApiDeps } from './wiring';
import { retryingOnce } from '../shared/concurrency';

/** The memory REST Lambda (AWS): every route of `MEMORY_API` (`/v1/memories/*`, `/v1/vaults/*`) and the `/v1` catch-all. */
function init(): Promise<MemoryApiDeps> {
  const auth = createIdentity(loadAuthConfig());
  return createMemoryApiDeps(loadMemoryApiConfig(), auth.verifier);
}

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createMemoryApiHandler(retryingOnce(init));
