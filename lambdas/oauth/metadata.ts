import { MEMORY_SCOPES } from '../identity/principal';

/** RFC 8414 authorization-server metadata of the front (the protected resource's is `identity/protected-resource.ts`). */
export function authorizationServerMetadata(config: { issuer: string }): Record<string, unknown> {
  const base = config.issuer;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    // Public clients only: MCP clients hold no secret, PKCE binds the code to the client instance.
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...MEMORY_SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
