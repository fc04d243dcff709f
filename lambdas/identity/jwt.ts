import { CognitoJwtVerifier, JwtVerifier } from 'aws-jwt-verify';
import {
  CognitoJwtInvalidClientIdError,
  CognitoJwtInvalidTokenUseError,
  FetchError,
  JwksValidationError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { decomposeUnverifiedJwt } from 'aws-jwt-verify/jwt';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import type { CognitoJwtConfig, LocalJwtConfig } from './config';
import { AuthError, normaliseScopes, parseMemoriesClaim, type Principal } from './principal';

/** The JWKS endpoint could not be read (network, timeout, non-200, not a JWKS): the verifier's backend is down. */
export class JwksUnavailableError extends Error {
  constructor(uri: string, why: string, options?: { cause?: unknown }) {
    super(`JWKS at ${uri} unavailable: ${why}`, options);
    this.name = 'JwksUnavailableError';
  }
}

export type FetchLike = (input: string, init?: { signal?: AbortSignal }) => Promise<Response>;

/**
 * A JWKS fetcher for `SimpleJwksCache`. Unlike the library's default it accepts `http:` (the local
 * issuer serves its JWKS on loopback), and it throws one typed error for every way the endpoint
 * can fail, so an outage is answered 503 (retry) and never 401 (sign out).
 */
export class JwksHttpFetcher implements Fetcher {
  private readonly failedUntil = new Map<string, number>();

  constructor(
    private readonly opts: {
      timeoutMs: number;
      /** After a failure, answer `unavailable` at once for this long instead of waiting out another timeout per request. */
      backoffMs?: number;
      fetchImpl?: FetchLike;
      clock?: () => number;
    },
  ) {}

  async fetch(uri: string): Promise<ArrayBuffer> {
    const now = (this.opts.clock ?? Date.now)();
    const until = this.failedUntil.get(uri);
    if (until !== undefined && now < until) throw new JwksUnavailableError(uri, 'failed moments ago; backing off');
    try {
      const body = await this.fetchOnce(uri);
      this.failedUntil.delete(uri);
      return body;
    } catch (err) {
      this.failedUntil.set(uri, now + (this.opts.backoffMs ?? 2000));
      throw err;
    }
  }

  private async fetchOnce(uri: string): Promise<ArrayBuffer> {
    const fetchImpl = this.opts.fetchImpl ?? ((input, init) => fetch(input, init));
    let res: Response;
    try {
      res = await fetchImpl(uri, { signal: AbortSignal.timeout(this.opts.timeoutMs) });
    } catch (err) {
      throw new JwksUnavailableError(uri, err instanceof Error ? err.message : String(err), { cause: err });
    }
    const body = await res.arrayBuffer().catch((err: unknown) => {
      throw new JwksUnavailableError(uri, 'body could not be read', { cause: err });
    });
    if (res.status !== 200) throw new JwksUnavailableError(uri, `HTTP ${res.status}`);
    let doc: unknown;
    try {
      doc = JSON.parse(Buffer.from(body).toString('utf8'));
    } catch (err) {
      throw new JwksUnavailableError(uri, 'not JSON', { cause: err });
    }
    if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys)) {
      throw new JwksUnavailableError(uri, 'not a JWKS document');
    }
    return body;
  }
}

/**
 * Verifies RS256 access-token JWTs with aws-jwt-verify: Cognito access tokens in AWS
 * (`CognitoJwtVerifier`: issuer, `token_use`, `client_id`, expiry, signature), the local issuer's
 * tokens locally (`JwtVerifier`, the same library path, plus the audience).
 */
export class JwtAccessTokenVerifier {
  private readonly verifyJwt: (jwt: string) => Promise<JwtPayload>;
  private readonly issuers: ReadonlySet<string>;
  private readonly resourceServerId?: string;

  constructor(config: CognitoJwtConfig | LocalJwtConfig, audience: string, opts: { timeoutMs: number; fetchImpl?: FetchLike; clock?: () => number }) {
    const jwksCache = new SimpleJwksCache({ fetcher: new JwksHttpFetcher(opts) });
    if (config.kind === 'cognito') {
      const v = CognitoJwtVerifier.create({ userPoolId: config.userPoolId, tokenUse: 'access', clientId: config.clientIds }, { jwksCache });
      this.verifyJwt = (jwt) => v.verify(jwt);
      // Cognito signs with the regional issuer or, newer pools, the global one; the library accepts both.
      this.issuers = new Set([
        CognitoJwtVerifier.parseUserPoolId(config.userPoolId).issuer,
        CognitoJwtVerifier.parseUserPoolId(config.userPoolId, 'https://issuer-cognito-idp.').issuer,
      ]);
      this.resourceServerId = config.resourceServerId;
    } else {
      const v = JwtVerifier.create({ issuer: config.issuer, audience, jwksUri: config.jwksUri }, { jwksCache });
      this.verifyJwt = (jwt) => v.verify(jwt);
      this.issuers = new Set([config.issuer]);
      this.resourceServerId = audience;
    }
  }

  async verify(jwt: string): Promise<Principal> {
    this.precheck(jwt);
    let payload: JwtPayload;
    try {
      payload = await this.verifyJwt(jwt);
    } catch (err) {
      throw toAuthError(err);
    }
    return principalOf(payload, this.resourceServerId);
  }

  /**
   * Refuses what needs no key to refuse (a foreign issuer, a non-RS256 `alg` such as `none` or
   * HS256) before the library would fetch the JWKS: such tokens are 401 even while the JWKS host
   * is down, and an attacker cannot make the verifier call out with them.
   */
  private precheck(jwt: string): void {
    let decomposed: ReturnType<typeof decomposeUnverifiedJwt>;
    try {
      decomposed = decomposeUnverifiedJwt(jwt);
    } catch (err) {
      throw toAuthError(err);
    }
    if (decomposed.header.alg !== 'RS256') throw new AuthError('bad-algorithm', 'only RS256 tokens are accepted');
    const iss = decomposed.payload.iss;
    if (typeof iss !== 'string' || !this.issuers.has(iss)) throw new AuthError('wrong-issuer', 'token of another issuer');
  }
}

function principalOf(payload: JwtPayload, resourceServerId: string | undefined): Principal {
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') throw new AuthError('invalid-claims', 'token has no subject');
  // The library checks `exp` only when present; a token that never expires is not accepted here.
  if (typeof payload.exp !== 'number') throw new AuthError('invalid-claims', 'token has no expiry');
  if (payload.token_use !== undefined && payload.token_use !== 'access') throw new AuthError('invalid-claims', 'not an access token');
  const memories = parseMemoriesClaim(payload.memories);
  const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
  const claimed = payload['cognito:groups'];
  const groups = Array.isArray(claimed) ? claimed.filter((g): g is string => typeof g === 'string') : undefined;
  return {
    sub,
    scopes: normaliseScopes(payload.scope, resourceServerId),
    ...(memories !== undefined && { memories }),
    ...(clientId !== undefined && { clientId }),
    ...(groups !== undefined && groups.length > 0 && { groups }),
    kind: 'jwt',
    expiresAt: payload.exp,
  };
}

/** aws-jwt-verify's error classes → our reasons. Anything unrecognised fails closed (401). */
function toAuthError(err: unknown): AuthError {
  if (err instanceof AuthError) return err;
  if (err instanceof JwksUnavailableError || err instanceof FetchError || err instanceof JwksValidationError) {
    return new AuthError('jwks-unavailable', 'the token signing keys cannot be fetched', { cause: err });
  }
  const map: Array<[abstract new (...args: never[]) => Error, AuthError['reason'], string]> = [
    [JwtExpiredError, 'expired', 'token expired'],
    [JwtNotBeforeError, 'not-yet-valid', 'token not valid yet'],
    [JwtInvalidIssuerError, 'wrong-issuer', 'token of another issuer'],
    [JwtInvalidAudienceError, 'wrong-audience', 'token for another audience'],
    [CognitoJwtInvalidClientIdError, 'wrong-audience', 'token of another client'],
    [CognitoJwtInvalidTokenUseError, 'invalid-claims', 'not an access token'],
    [JwtInvalidSignatureAlgorithmError, 'bad-algorithm', 'signature algorithm not accepted'],
    [JwtInvalidSignatureError, 'bad-signature', 'invalid signature'],
    [KidNotFoundInJwksError, 'unknown-key', 'token signed with an unknown key'],
    [WaitPeriodNotYetEndedJwkError, 'unknown-key', 'token signed with an unknown key'],
    [JwtWithoutValidKidError, 'unknown-key', 'token names no key'],
    [JwtParseError, 'malformed', 'token is not a well-formed JWT'],
  ];
  for (const [cls, reason, message] of map) if (err instanceof cls) return new AuthError(reason, message, { cause: err });
  return new AuthError('malformed', 'token rejected', { cause: err });
}
