import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { createOAuthHandler } from './api';
import { loadOAuthFrontConfig } from './config';
import type { OAuthDeps } from './deps';
import { originSecretGetter } from '../shared/secrets';
import { createClientStore, createOAuthDeps, createOAuthLimiter, loadKeyRing } from './wiring';

/** The OAuth front Lambda (AWS): `/.well-known/oauth-*` and `/oauth/*`. */
let deps: Promise<OAuthDeps> | undefined;

async function init(): Promise<OAuthDeps> {
  const auth = loadAuthConfig();
  const { tokens } = createIdentity(auth);
  const clients = createClientStore(auth);
  const keyRing = await loadKeyRing(process.env, auth.region);
  const config = loadOAuthFrontConfig();
  const originSecret = await originSecretGetter({ value: config.originVerifySecret, arn: config.originVerifySecretArn, region: auth.region });
  const limiter = createOAuthLimiter(config, auth);
  return createOAuthDeps(config, { tokens, clients, keyRing, limiter, originSecret });
}

export const handler = createOAuthHandler(() => {
  deps ??= init().catch((err: unknown) => {
    deps = undefined; // a failed init (e.g. Secrets Manager throttled) is retried by the next request
    throw err;
  });
  return deps;
});
