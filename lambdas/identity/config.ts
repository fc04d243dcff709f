/**
 * Auth configuration, read once from the environment (props in CDK set the same variables).
 *
 * One audience per deployment: `audience` is this deployment's MCP resource URL. It is the `aud`
 * of local-issuer JWTs, the `resource` (RFC 8707) bound into every opaque token, and by default the
 * Cognito resource-server identifier whose scopes are normalised. A token for anything else is 401.
 */
import { envInt, envNumber, envString, type Env } from '../shared/env';

export interface CognitoJwtConfig {
  kind: 'cognito';
  userPoolId: string;
  /** App clients whose access tokens are accepted (the web front's client, …). */
  clientIds: string[];
  /** Resource-server identifier: scopes arrive as `<id>/memory:read`. */
  resourceServerId: string;
}

export interface LocalJwtConfig {
  kind: 'local';
  /** `iss` of the local issuer's tokens. */
  issuer: string;
  /** Where the verifier fetches the JWKS (may differ from `<issuer>/.well-known/jwks.json` when the issuer URL is not what this process can reach). */
  jwksUri: string;
}

export interface AuthConfig {
  audience: string;
  jwt: CognitoJwtConfig | LocalJwtConfig;
  /** Opaque tokens (and codes, families) of the OAuth front; unset: `mcpat_` tokens are refused. */
  tokenTable?: string;
  /** OAuth clients registered with the front (RFC 7591, CIMD). */
  clientTable: string;
  /**
   * How long a verified opaque or personal access token is trusted without a table read: the
   * worst-case delay before a revocation made on one instance is seen by another.
   */
  opaqueCacheSeconds: number;
  /** Personal access tokens (`/v1/tokens`): lifetimes, the per-user ceiling, how often their use is recorded. Default: the defaults of `loadPersonalTokenLimits`. */
  personalTokens?: PersonalTokenLimits;
  /** JWKS fetch budget; past it the verifier answers `unavailable`. */
  jwksTimeoutMs: number;
  region: string;
  dynamoEndpoint?: string;
}

export interface PersonalTokenLimits {
  /** Active (unexpired, unrevoked) tokens per user (`AUTH_PAT_MAX_PER_USER`, 50); one more is 409. */
  maxPerUser: number;
  /** Lifetime when `expiresInDays` is omitted (`AUTH_PAT_DEFAULT_DAYS`, 90). */
  defaultDays: number;
  /** The longest lifetime a token may be given (`AUTH_PAT_MAX_DAYS`, 366). */
  maxDays: number;
  /** `lastUsed` is written at most this often per token (`AUTH_PAT_LAST_USED_SECONDS`, 3600): a use within it writes nothing. */
  lastUsedSeconds: number;
}

export function loadPersonalTokenLimits(env: Env = process.env): PersonalTokenLimits {
  const maxDays = envInt(env, 'AUTH_PAT_MAX_DAYS', 366, { min: 1 });
  return {
    maxPerUser: envInt(env, 'AUTH_PAT_MAX_PER_USER', 50, { min: 1 }),
    defaultDays: Math.min(maxDays, envInt(env, 'AUTH_PAT_DEFAULT_DAYS', 90, { min: 1 })),
    maxDays,
    lastUsedSeconds: envInt(env, 'AUTH_PAT_LAST_USED_SECONDS', 3600, { min: 0 }),
  };
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** The deployment's public base URL: `PUBLIC_URL`, else the local stack's `http://localhost:<PORT>`. */
export function publicUrl(env: Env = process.env): string {
  return trimSlash(envString(env, 'PUBLIC_URL') ?? `http://localhost:${envString(env, 'PORT') ?? '3000'}`);
}

/**
 * The local issuer's identity, shared by `npm start` and `npm run token` so that a token minted
 * while the stack is down still verifies once it is up (same env, same data dir).
 */
export function localIssuerIdentity(env: Env = process.env): { issuer: string; audience: string } {
  const base = publicUrl(env);
  return { issuer: trimSlash(envString(env, 'AUTH_ISSUER') ?? base), audience: envString(env, 'AUTH_AUDIENCE') ?? `${base}/mcp` };
}

/** `AUTH_MODE`; a deployment that names a user pool verifies Cognito tokens unless told otherwise. */
export function authMode(env: Env = process.env): string {
  return envString(env, 'AUTH_MODE') ?? (envString(env, 'COGNITO_USER_POOL_ID') ? 'cognito' : 'local');
}

export function loadAuthConfig(env: Env = process.env): AuthConfig {
  const mode = authMode(env);
  const { issuer, audience } = localIssuerIdentity(env);
  let jwt: AuthConfig['jwt'];
  if (mode === 'cognito') {
    const userPoolId = envString(env, 'COGNITO_USER_POOL_ID');
    const clientIds = (envString(env, 'COGNITO_CLIENT_IDS') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!userPoolId || clientIds.length === 0) throw new Error('AUTH_MODE=cognito needs COGNITO_USER_POOL_ID and COGNITO_CLIENT_IDS');
    jwt = { kind: 'cognito', userPoolId, clientIds, resourceServerId: envString(env, 'COGNITO_RESOURCE_SERVER') ?? audience };
  } else if (mode === 'local') {
    jwt = { kind: 'local', issuer, jwksUri: envString(env, 'AUTH_JWKS_URI') ?? `${issuer}/.well-known/jwks.json` };
  } else {
    throw new Error(`AUTH_MODE must be cognito or local, got "${mode}"`);
  }
  return {
    audience,
    jwt,
    tokenTable: envString(env, 'AUTH_TOKEN_TABLE') ?? 'auth-tokens',
    clientTable: envString(env, 'AUTH_CLIENT_TABLE') ?? 'auth-clients',
    opaqueCacheSeconds: envNumber(env, 'AUTH_TOKEN_CACHE_SECONDS', 30, { min: 0 }),
    personalTokens: loadPersonalTokenLimits(env),
    jwksTimeoutMs: envNumber(env, 'AUTH_JWKS_TIMEOUT_MS', 3000, { min: 1 }),
    region: envString(env, 'AWS_REGION') ?? 'us-east-1',
    dynamoEndpoint: envString(env, 'DYNAMODB_ENDPOINT'),
  };
}
