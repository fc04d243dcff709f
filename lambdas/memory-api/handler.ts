import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { createMemoryApiHandler } from './api';
import { loadMemoryApiConfig } from './config';
import type { MemoryApiDeps } from './deps';
import { createMemoryApiDeps } from './wiring';

/** The memory REST Lambda (AWS): every route of `MEMORY_API` (`/v1/memories/*`, `/v1/vaults/*`) and the `/v1` catch-all. */
let deps: Promise<MemoryApiDeps> | undefined;

function init(): Promise<MemoryApiDeps> {
  const auth = createIdentity(loadAuthConfig());
  return createMemoryApiDeps(loadMemoryApiConfig(), auth.verifier);
}

export const handler = createMemoryApiHandler(() => {
  deps ??= init().catch((err: unknown) => {
    deps = undefined; // a failed init (e.g. Secrets Manager throttled) is retried by the next request
    throw err;
  });
  return deps;
});
