import { authMode, localIssuerIdentity, publicUrl } from '../config';

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
  rate: { registerPerMinute: number; tokenPerMinute: number; table: string; leaseFraction: number };
  /** CloudFront's origin header secret (ORIGIN_VERIFY_SECRET / _ARN): only then is the viewer address trusted. */
  originVerifySecret?: string;
  originVerifySecretArn?: string;
}

type Env = Record<string, string | undefined>;

function get(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function int(env: Env, name: string, fallback: number, min: number): number {
  const v = get(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${v}"`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = get(env, name);
  if (v === undefined) return fallback;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new Error(`${name} must be true or false, got "${v}"`);
}

export function loadOAuthFrontConfig(env: Env = process.env): OAuthFrontConfig {
  const mode = authMode(env);
  if (mode !== 'local' && mode !== 'cognito') throw new Error(`AUTH_MODE must be cognito or local, got "${mode}"`);
  const issuer = publicUrl(env);
  let cognito: CognitoUpstream | undefined;
  if (mode === 'cognito') {
    const domain = get(env, 'COGNITO_DOMAIN')?.replace(/\/+$/, '');
    const clientId = get(env, 'OAUTH_COGNITO_CLIENT_ID');
    const userPoolId = get(env, 'COGNITO_USER_POOL_ID');
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
      code: int(env, 'OAUTH_CODE_TTL_SECONDS', 60, 1),
      access: int(env, 'OAUTH_ACCESS_TOKEN_TTL_SECONDS', 3600, 1),
      refresh: int(env, 'OAUTH_REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600, 1),
      transaction: int(env, 'OAUTH_TRANSACTION_TTL_SECONDS', 600, 1),
    },
    cimd: {
      timeoutMs: int(env, 'OAUTH_CIMD_TIMEOUT_MS', 3000, 1),
      maxBytes: int(env, 'OAUTH_CIMD_MAX_BYTES', 8192, 256),
      cacheSeconds: int(env, 'OAUTH_CIMD_CACHE_SECONDS', 300, 0),
      allowLoopback: bool(env, 'OAUTH_CIMD_ALLOW_LOOPBACK', mode === 'local'),
    },
    maxBodyBytes: int(env, 'OAUTH_MAX_BODY_BYTES', 16384, 1024),
    secureCookies: issuer.startsWith('https://'),
    rate: {
      registerPerMinute: int(env, 'OAUTH_REGISTER_RATE_PER_MINUTE', 10, 1),
      tokenPerMinute: int(env, 'OAUTH_TOKEN_RATE_PER_MINUTE', 60, 1),
      table: get(env, 'RATE_LIMIT_TABLE') ?? 'rate-limits',
      leaseFraction: Number(get(env, 'RATE_LEASE_FRACTION') ?? '0.1'),
    },
    originVerifySecret: get(env, 'ORIGIN_VERIFY_SECRET'),
    originVerifySecretArn: get(env, 'ORIGIN_VERIFY_SECRET_ARN'),
  };
}
