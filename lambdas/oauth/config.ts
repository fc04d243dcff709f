import { loadLeasingOptions } from '../shared/rate-limit/leasing-config';
import type { LeasingOptions } from '../shared/rate-limit/rate-limiter';
import { envBool, envInt, envString, type Env } from '../shared/env';
import { authMode, localIssuerIdentity, publicUrl } from '../identity/config';

/**
 * Configuration of the OAuth 2.1 front (the authorization server MCP clients talk to), read once
 * from the environment; the CDK construct sets the same variables. Every lifetime and cap is a
 * variable with a safe default (DECISIONS: limits are configuration).
 */
export interface CognitoUpstream {
  /** Hosted sign-in base URL, `https://<prefix>.auth.<region>.amazoncognito.com` (COGNITO_DOMAIN). */
  domain: string;
  /** The front's own app client at the user pool (OAUTH_COGNITO_CLIENT_ID): public, code + PKCE, `openid`. */
  clientId: string;
  userPoolId: string;
}

export interface OAuthFrontConfig {
  /** `PUBLIC_URL`: the issuer (RFC 8414 / RFC 9207 `iss`) and the base of every endpoint. */
  issuer: string;
  /** `<PUBLIC_URL>/mcp`: the one resource (RFC 8707) this server grants tokens for. */
  audience: string;
  /** `local`: the development sign-in page; `cognito`: Cognito's hosted sign-in. */
  mode: 'local' | 'cognito';
  cognito?: CognitoUpstream;
  ttl: {
    /** Authorization codes (OAUTH_CODE_TTL_SECONDS, default 60). */
    code: number;
    /** Access tokens (OAUTH_ACCESS_TOKEN_TTL_SECONDS, default 3600). */
    access: number;
    /** Refresh tokens (OAUTH_REFRESH_TOKEN_TTL_SECONDS, default 30 days); each refresh rotates it. */
    refresh: number;
    /** A pending authorization between /authorize and the consent (OAUTH_TRANSACTION_TTL_SECONDS, default 600). */
    transaction: number;
    /** A registered client that never completes a sign-in is forgotten (OAUTH_UNUSED_CLIENT_TTL_SECONDS, default 1 day). */
    unusedClient: number;
    /**
     * A registered client is forgotten this long after its last token grant (OAUTH_IDLE_CLIENT_TTL_SECONDS,
     * default 90 days; at least the refresh lifetime, so a client never disappears under a live refresh token).
     */
    idleClient: number;
  };
  cimd: {
    /** OAUTH_CIMD_TIMEOUT_MS, default 3000. */
    timeoutMs: number;
    /** OAUTH_CIMD_MAX_BYTES, default 8192 (the drafts suggest documents of a few KB). */
    maxBytes: number;
    /** How long a fetched document is trusted (OAUTH_CIMD_CACHE_SECONDS, default 300). */
    cacheSeconds: number;
    /**
     * Accept `http://` client ids on loopback hosts and https ids on private address literals
     * (OAUTH_CIMD_ALLOW_LOOPBACK, default true only in local mode): tests and local development
     * serve documents on loopback, a deployment must never fetch from there.
     */
    allowLoopback: boolean;
  };
  /** Largest registration (JSON) or form body accepted (OAUTH_MAX_BODY_BYTES, default 16384). */
  maxBodyBytes: number;
  /** Cookies get `Secure` when the issuer is https. */
  secureCookies: boolean;
  /**
   * Per client IP, through the shared DynamoDB limiter (RATE_LIMIT_TABLE): registrations are cheap
   * to send and each one is a row in the client table, so they get a tight budget
   * (OAUTH_REGISTER_RATE_PER_MINUTE, default 10); the token and revocation endpoints a wider one
   * (OAUTH_TOKEN_RATE_PER_MINUTE, default 60). The burst equals the per-minute figure.
   */
  rate: { registerPerMinute: number; tokenPerMinute: number; table: string; limiter: LeasingOptions };
  /** CloudFront's origin header secret (ORIGIN_VERIFY_SECRET / _ARN): only then is the viewer address trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

export function loadOAuthFrontConfig(env: Env = process.env): OAuthFrontConfig {
  const refresh = envInt(env, 'OAUTH_REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600, { min: 1 });
  const idleClient = envInt(env, 'OAUTH_IDLE_CLIENT_TTL_SECONDS', Math.max(90 * 24 * 3600, refresh), { min: 1 });
  if (idleClient < refresh) throw new Error(`OAUTH_IDLE_CLIENT_TTL_SECONDS (${idleClient}) must be at least OAUTH_REFRESH_TOKEN_TTL_SECONDS (${refresh})`);
  const mode = authMode(env);
  if (mode !== 'local' && mode !== 'cognito') throw new Error(`AUTH_MODE must be cognito or local, got "${mode}"`);
  const issuer = publicUrl(env);
  let cognito: CognitoUpstream | undefined;
  if (mode === 'cognito') {
    const domain = envString(env, 'COGNITO_DOMAIN')?.replace(/\/+$/, '');
    const clientId = envString(env, 'OAUTH_COGNITO_CLIENT_ID');
    const userPoolId = envString(env, 'COGNITO_USER_POOL_ID');
    if (!domain || !clientId || !userPoolId) {
      throw new Error('AUTH_MODE=cognito needs COGNITO_DOMAIN, OAUTH_COGNITO_CLIENT_ID and COGNITO_USER_POOL_ID for the OAuth front');
    }
    cognito = { domain, clientId, userPoolId };
  }
  return {
    issuer,
    audience: localIssuerIdentity(env).audience,
    mode,
    cognito,
    ttl: {
      code: envInt(env, 'OAUTH_CODE_TTL_SECONDS', 60, { min: 1 }),
      access: envInt(env, 'OAUTH_ACCESS_TOKEN_TTL_SECONDS', 3600, { min: 1 }),
      refresh,
      transaction: envInt(env, 'OAUTH_TRANSACTION_TTL_SECONDS', 600, { min: 1 }),
      unusedClient: envInt(env, 'OAUTH_UNUSED_CLIENT_TTL_SECONDS', 24 * 3600, { min: 60 }),
      idleClient,
    },
    cimd: {
      timeoutMs: envInt(env, 'OAUTH_CIMD_TIMEOUT_MS', 3000, { min: 1 }),
      maxBytes: envInt(env, 'OAUTH_CIMD_MAX_BYTES', 8192, { min: 256 }),
      cacheSeconds: envInt(env, 'OAUTH_CIMD_CACHE_SECONDS', 300, { min: 0 }),
      allowLoopback: envBool(env, 'OAUTH_CIMD_ALLOW_LOOPBACK', mode === 'local'),
    },
    maxBodyBytes: envInt(env, 'OAUTH_MAX_BODY_BYTES', 16384, { min: 1024 }),
    secureCookies: issuer.startsWith('https://'),
    rate: {
      registerPerMinute: envInt(env, 'OAUTH_REGISTER_RATE_PER_MINUTE', 10, { min: 1 }),
      tokenPerMinute: envInt(env, 'OAUTH_TOKEN_RATE_PER_MINUTE', 60, { min: 1 }),
      table: envString(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
      limiter: loadLeasingOptions(env),
    },
    originVerifySecret: envString(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: envString(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}
