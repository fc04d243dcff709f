import type { AuthConfig } from './config';
import { JwtAccessTokenVerifier, type FetchLike } from './jwt';
import { looksOpaque, TOKEN_PREFIX } from './opaque-tokens';
import { OpaqueAccessTokenVerifier } from './opaque-verifier';
import type { PersonalTokenVerifier } from './personal-token-verifier';
import { looksPersonal } from './personal-tokens';
import { AuthError, type Principal } from './principal';
import type { OpaqueTokenStore } from './token-store';
import { EVENT_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';

export { AuthError, type AuthErrorKind, type AuthFailureReason, type MemoryScope, type Principal } from './principal';

/**
 * The one token-verification module every API uses. `verify` takes the raw `Authorization` header
 * and resolves to the principal, or rejects with an `AuthError`:
 *   kind `unauthenticated`: missing, malformed, expired, not yet valid, wrong issuer, wrong
 *     audience or resource, a disallowed algorithm (`none`, HS256), a bad signature, an unknown
 *     or revoked opaque token;
 *   kind `unavailable`: the JWKS or the token table cannot be reached (answer 503, not 401).
 */
export interface TokenVerifier {
  verify(authorizationHeader: string | undefined): Promise<Principal>;
}

/** RFC 6750 `b64token`, bounded: anything else is not a bearer token we could have issued. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_CHARS = 8192;

/** `Bearer <token>` → the token; the scheme is case-insensitive (RFC 7235). */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new AuthError('missing', 'no bearer token');
  const m = /^\s*Bearer +(\S+)\s*$/i.exec(header);
  if (!m) throw new AuthError('malformed', 'the Authorization header is not "Bearer <token>"');
  const token = m[1];
  if (token.length > MAX_TOKEN_CHARS || !B64TOKEN.test(token)) throw new AuthError('malformed', 'the bearer token is malformed');
  return token;
}

/**
 * Dispatches on the token's shape: our opaque access tokens (`mcpat_…`) and personal access tokens
 * (`mcpm_pat_…`) go to the token table, everything else is tried as a JWT. Refresh tokens and
 * codes are never bearer tokens. Personal access tokens are accepted only where `personal` is
 * given (`/v1`, `/mcp`, git); elsewhere (the catalog, favorites) they are refused.
 */
export class BearerTokenVerifier implements TokenVerifier {
  constructor(
    private readonly jwt: JwtAccessTokenVerifier,
    private readonly opaque: OpaqueAccessTokenVerifier | undefined,
    private readonly personal?: PersonalTokenVerifier,
  ) {}

  async verify(authorizationHeader: string | undefined): Promise<Principal> {
    try {
      return await this.verifyToken(authorizationHeader);
    } catch (err) {
      // No token at all is the anonymous catalog reader's normal case, not a failure.
      if (err instanceof AuthError && err.reason !== 'missing') {
        countMetric(err.kind === 'unavailable' ? EVENT_METRICS.authUnavailable : EVENT_METRICS.authFailures);
      }
      throw err;
    }
  }

  private async verifyToken(authorizationHeader: string | undefined): Promise<Principal> {
    const token = bearerToken(authorizationHeader);
    if (looksPersonal(token)) {
      if (!this.personal) throw new AuthError('unknown-token', 'personal access tokens are not accepted here');
      return this.personal.verify(token);
    }
    if (looksOpaque(token)) {
      if (!token.startsWith(TOKEN_PREFIX.access)) throw new AuthError('malformed', 'not an access token');
      if (!this.opaque) throw new AuthError('unknown-token', 'opaque tokens are not accepted here');
      return this.opaque.verify(token);
    }
    return this.jwt.verify(token);
  }
}

export interface VerifierDeps {
  /** The opaque-token table; without it `mcpat_` tokens are refused. */
  tokens?: OpaqueTokenStore;
  /** The personal access tokens' verifier; without it `mcpm_pat_` tokens are refused. */
  personal?: PersonalTokenVerifier;
  /** Replaces global `fetch` for the JWKS (tests route Cognito's URL to a loopback server). */
  fetchImpl?: FetchLike;
  /** Milliseconds since the epoch, for the opaque-token cache and the JWKS failure back-off. */
  clock?: () => number;
}

export function createTokenVerifier(config: AuthConfig, deps: VerifierDeps = {}): BearerTokenVerifier {
  const jwt = new JwtAccessTokenVerifier(config.jwt, config.audience, { timeoutMs: config.jwksTimeoutMs, fetchImpl: deps.fetchImpl, clock: deps.clock });
  const opaque = deps.tokens
    ? new OpaqueAccessTokenVerifier(deps.tokens, { audience: config.audience, cacheSeconds: config.opaqueCacheSeconds, clock: deps.clock })
    : undefined;
  return new BearerTokenVerifier(jwt, opaque, deps.personal);
}
