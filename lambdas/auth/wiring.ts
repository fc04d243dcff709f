import { documentClient, dynamoClient } from '../shared/aws/clients';
import { DynamoClientStore, type ClientStore } from './client-store';
import type { AuthConfig } from './config';
import { DynamoTokenStore, type OpaqueTokenStore } from './token-store';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export interface AuthDeps {
  verifier: TokenVerifier;
  tokens?: OpaqueTokenStore;
  clients: ClientStore;
}

/** The verifier and stores from configuration: the same code in AWS and locally, only endpoints differ. */
export function createAuthDeps(config: AuthConfig): AuthDeps {
  const doc = documentClient(dynamoClient({ region: config.region, dynamoEndpoint: config.dynamoEndpoint }));
  const tokens = config.tokenTable ? new DynamoTokenStore(doc, config.tokenTable) : undefined;
  return {
    verifier: createTokenVerifier(config, { tokens }),
    tokens,
    clients: new DynamoClientStore(doc, config.clientTable),
  };
}
