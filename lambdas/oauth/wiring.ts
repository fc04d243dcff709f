import { sharedLimiter } from '../shared/rate-limit/leasing-config';
import { parseKeyRing, type KeyRing } from '../shared/cursor';
import { documentClient, dynamoClient } from '../shared/aws/clients';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import { keyRingJson } from '../shared/secrets';
import type { AuthConfig } from '../identity/config';
import { DynamoClientStore, type ClientStore } from './client-store';
import type { OpaqueTokenStore } from '../identity/token-store';
import { ClientResolver, type HttpFetch } from './clients';
import { CognitoUpstreamIdentity, type UpstreamIdentity } from './cognito';
import type { OAuthFrontConfig } from './config';
import type { OAuthDeps } from './deps';
import { guardedLookup, pinnedFetch, systemResolver } from '../shared/http/pinned-fetch';
import { FrontSigner } from './signed';

export interface OAuthWiring {
  tokens: OpaqueTokenStore | undefined;
  clients: ClientStore;
  keyRing: KeyRing;
  /** Replaces the fetches of metadata documents and of Cognito (tests serve both on loopback). */
  fetchImpl?: HttpFetch;
  /** Replaces the Cognito upstream (tests of the AWS mode). */
  upstream?: UpstreamIdentity;
  clock?: () => number;
  /** The shared limiter (DynamoDB); tests of other concerns may leave it out. */
  limiter?: RateLimiter;
  originSecret?: () => string | undefined;
}

/** The registered clients' table (`AUTH_CLIENT_TABLE`). */
export function createClientStore(auth: Pick<AuthConfig, 'region' | 'dynamoEndpoint' | 'clientTable'>): ClientStore {
  return new DynamoClientStore(documentClient(dynamoClient({ region: auth.region, dynamoEndpoint: auth.dynamoEndpoint })), auth.clientTable);
}

/** The front's dependencies from configuration, the token store of `createIdentity` and the client store. */
export function createOAuthDeps(config: OAuthFrontConfig, w: OAuthWiring): OAuthDeps {
  if (!w.tokens) throw new Error('the OAuth front needs the token table (AUTH_TOKEN_TABLE)');
  const fetchImpl: HttpFetch = w.fetchImpl ?? ((input, init) => fetch(input, init));
  // Documents live at URLs the client chose: resolve once, refuse internal addresses, connect to the checked one.
  const documentFetch: HttpFetch = w.fetchImpl ?? pinnedFetch(guardedLookup(systemResolver, config.cimd.allowLoopback));
  const clock = w.clock ?? Date.now;
  let upstream = w.upstream;
  if (!upstream && config.mode === 'cognito') {
    if (!config.cognito) throw new Error('AUTH_MODE=cognito needs the Cognito upstream settings');
    upstream = new CognitoUpstreamIdentity(config.cognito, fetchImpl);
  }
  return {
    config,
    tokens: w.tokens,
    clients: w.clients,
    resolver: new ClientResolver(w.clients, config.cimd, documentFetch, clock),
    signer: new FrontSigner(w.keyRing),
    ...(upstream && { upstream }),
    clock,
    ...(w.limiter && { limiter: w.limiter }),
    originSecret: w.originSecret ?? (() => config.originVerifySecret),
  };
}

/** The signing key ring: the cursor keys (CURSOR_KEYS_FILE locally, CURSOR_SECRET_ARN in AWS). */
export async function loadKeyRing(env: Record<string, string | undefined>, region: string): Promise<KeyRing> {
  return parseKeyRing(await keyRingJson({ file: env.CURSOR_KEYS_FILE, arn: env.CURSOR_SECRET_ARN, region }));
}

/** The shared DynamoDB limiter of the front's JSON endpoints (RATE_LIMIT_TABLE). */
export function createOAuthLimiter(config: OAuthFrontConfig, client: { region: string; dynamoEndpoint?: string }): RateLimiter {
  return sharedLimiter(dynamoClient(client), config.rate.table, config.rate.limiter);
}
