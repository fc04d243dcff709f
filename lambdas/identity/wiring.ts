import { documentClient, dynamoClient } from '../shared/aws/clients';
import type { AuthConfig } from './config';
import { DynamoTokenStore, type OpaqueTokenStore } from './token-store';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export interface Identity {
  verifier: TokenVerifier;
  /** The opaque-token table, when configured: the verifier reads it, the OAuth front also writes it. */
  tokens?: OpaqueTokenStore;
}

/** The verifier and the token store from configuration: the same code in AWS and locally, only endpoints differ. */
export function createIdentity(config: AuthConfig): Identity {
  const doc = documentClient(dynamoClient({ region: config.region, dynamoEndpoint: config.dynamoEndpoint }));
  const tokens = config.tokenTable ? new DynamoTokenStore(doc, config.tokenTable) : undefined;
  return { verifier: createTokenVerifier(config, { tokens }), tokens };
}
