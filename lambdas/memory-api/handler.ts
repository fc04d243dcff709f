import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { retryingOnce } from '../shared/concurrency';
import { createMemoryApiHandler } from './api';
import { loadMemoryApiConfig } from './config';
import { createMemoryApiDeps } from './wiring';

/** The memory REST Lambda (AWS): every route of `MEMORY_API` (`/v1/memories/*`, `/v1/vaults/*`) and the `/v1` catch-all. */
// A failed init (e.g. Secrets Manager throttled) is not kept: the next request tries again.
export const handler = createMemoryApiHandler(retryingOnce(() => createMemoryApiDeps(loadMemoryApiConfig(), createIdentity(loadAuthConfig()).verifier)));
