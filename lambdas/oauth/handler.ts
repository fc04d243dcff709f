import { loadAuthConfig } from '../identity/config';
import { createIdentity } from '../identity/wiring';
import { createOAuthHandler } from './api';
import { loadOAuthFrontConfig } from './config';
import type { OAuthDeps } from './deps';
import { originSecretGetter } from '../shared/secrets';
import { createClientStore, createOAuthDeps, createOAuthLimiter, loadKeyRing } from './wiring';
import { retryingOnce } from '../shared/concurrency';

/** The OAuth front Lambda (AWS): `/.well-known/oauth-*` and `/oauth/*`. */
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

// Built once per instance; a failed build (e.g. Secrets Manager throttled) is retried by the next request.
export const handler = createOAuthHandler(retryingOnce(init));
