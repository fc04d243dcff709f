import { MEMORY_SCOPES } from './principal';

/**
 * The resource server's side of discovery: RFC 9728 protected-resource metadata for the MCP
 * endpoint and the 401 challenge pointing at it, so a client that only knows `/mcp` finds the
 * authorization server from there. The authorization server's own metadata is `oauth/metadata.ts`.
 */

export const SCOPE_STRING = MEMORY_SCOPES.join(' ');

/**
 * RFC 9728 §3.1: the metadata of resource `https://host/mcp` lives at
 * `https://host/.well-known/oauth-protected-resource/mcp` (the well-known segment goes between
 * the origin and the resource's path). Only the audience is needed, so `AuthConfig` works as is.
 */
export function protectedResourceMetadataUrl(config: { audience: string }): string {
  const u = new URL(config.audience);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}/.well-known/oauth-protected-resource${path}`;
}

export interface ChallengeOptions {
  /** RFC 6750 `error`, for a token that was presented but refused, or lacks a scope. */
  error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request';
  errorDescription?: string;
  /** Overrides the default scope (both memory scopes), e.g. the one scope a tool needs. */
  scope?: string;
}

/**
 * `WWW-Authenticate` of a 401 (or 403 insufficient_scope) from the MCP endpoint (DECISIONS):
 * `Bearer resource_metadata="<PRM URL>", scope="memory:read memory:write"`.
 */
export function wwwAuthenticate(config: { audience: string }, opts: ChallengeOptions = {}): string {
  const parts = [`resource_metadata="${protectedResourceMetadataUrl(config)}"`, `scope="${quoted(opts.scope ?? SCOPE_STRING)}"`];
  if (opts.error) parts.push(`error="${opts.error}"`);
  if (opts.errorDescription) parts.push(`error_description="${quoted(opts.errorDescription)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** RFC 7230 quoted-string content: no quotes, backslashes or control characters. */
function quoted(s: string): string {
  return s.replace(/[\\"\u0000-\u001f\u007f]/g, '');
}

export function protectedResourceMetadata(config: { audience: string; issuer: string }): Record<string, unknown> {
  return {
    resource: config.audience,
    authorization_servers: [config.issuer],
    scopes_supported: [...MEMORY_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'MCP memory',
  };
}
