import { documentClient, dynamoClient } from '../shared/aws/clients';
import { loadPersonalTokenLimits, type AuthConfig } from './config';
import { DynamoPersonalTokenStore } from './personal-token-store';
import { PersonalTokens } from './personal-token-service';
import { PersonalTokenVerifier } from './personal-token-verifier';
import { DynamoTokenStore, type OpaqueTokenStore } from './token-store';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export interface Identity {
  verifier: TokenVerifier;
  /** The opaque-token table, when configured: the verifier reads it, the OAuth front also writes it. */
  tokens?: OpaqueTokenStore;
  /** Personal access tokens (`/v1/tokens`), when asked for: revoking one here makes this verifier forget it at once. */
  personalTokens?: PersonalTokens;
}

export interface IdentityOptions {
  /**
   * Accept personal access tokens (`/v1`, `/mcp`, git): the verifier reads them (and records their
   * use, which writes `lastUsedAt`), and `personalTokens` manages them. Off: they are refused.
   */
  personalTokens?: boolean;
  /** Milliseconds since the epoch, for token lifetimes and caches (tests hold it). */
  clock?: () => number;
}

/** The verifier and the token stores from configuration: the same code in AWS and locally, only endpoints differ. */
export function createIdentity(config: AuthConfig, opts: IdentityOptions = {}): Identity {
  const doc = documentClient(dynamoClient({ region: config.region, dynamoEndpoint: config.dynamoEndpoint }));
  const tokenTable = config.tokenTable;
  const tokens = tokenTable ? new DynamoTokenStore(doc, tokenTable, opts.clock) : undefined;
  if (!opts.personalTokens || !tokenTable) return { verifier: createTokenVerifier(config, { tokens, clock: opts.clock }), tokens };
  const store = new DynamoPersonalTokenStore(doc, tokenTable, opts.clock);
  const limits = config.personalTokens ?? loadPersonalTokenLimits({});
  const personal = new PersonalTokenVerifier(store, {
    cacheSeconds: config.opaqueCacheSeconds,
    lastUsedSeconds: limits.lastUsedSeconds,
    clock: opts.clock,
  });
  return {
    verifier: createTokenVerifier(config, { tokens, personal, clock: opts.clock }),
    tokens,
    personalTokens: new PersonalTokens(store, limits, { clock: opts.clock, onRevoke: (id) => personal.forget(id) }),
  };
}
