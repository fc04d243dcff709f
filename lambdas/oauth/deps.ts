import type { OriginSecretGetter } from '../shared/http/origin-guard';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import type { ClientStore } from './client-store';
import type { OpaqueTokenStore } from '../identity/token-store';
import type { ClientResolver } from './clients';
import type { UpstreamIdentity } from './cognito';
import type { OAuthFrontConfig } from './config';
import type { FrontSigner } from './signed';

/** Everything the front's handlers use, injected so tests and the local stack swap adapters only. */
export interface OAuthDeps {
  config: OAuthFrontConfig;
  tokens: OpaqueTokenStore;
  clients: ClientStore;
  resolver: ClientResolver;
  signer: FrontSigner;
  /** Cognito mode: the hosted sign-in the front delegates to; absent in local mode. */
  upstream?: UpstreamIdentity;
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** The shared per-IP limiter of the JSON endpoints; absent: unlimited (unit tests of single handlers). */
  limiter?: RateLimiter;
  /** The origin header secret that makes CloudFront's viewer address trustworthy. */
  originSecret: OriginSecretGetter;
}

export const nowSeconds = (deps: Pick<OAuthDeps, 'clock'>): number => Math.floor(deps.clock() / 1000);
