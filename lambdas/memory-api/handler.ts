import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { retryingOnce } from '../shared/concurrency';
import { createMemoryApiHandler } from './api';
import { loadMemoryApiConfig } from './config';
import { createMemoryApiDeps } from './wiring';

/** The memory REST Lambda (AWS): every route of `MEMORY_API` (`/v1/memories/*`, `/v1/vaults/*`) and the `/v1` catch-all. */
// A failed init (e.g. Secrets Manager throttled) is not kept: the next request tries again.
export const handler = createMemoryApiHandler(
  retryingOnce(() => {
    // This function manages personal access tokens (`/v1/tokens`) and accepts them: revoking one here forgets it here at once.
    const { verifier, personalTokens } = createIdentity(loadAuthConfig(), { personalTokens: true });
    return createMemoryApiDeps(loadMemoryApiConfig(), verifier, { personalTokens });
  }),
);
