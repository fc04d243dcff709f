import { CognitoJwtVerifier } from 'aws-jwt-verify';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import * as z from 'zod';
import { JwksHttpFetcher } from '../identity/jwt';
import type { HttpFetch } from './clients';
import type { CognitoUpstream } from './config';
import { s256 } from './signed';

/**
 * Cognito as the identity provider behind the front (AWS mode): the user signs in on Cognito's
 * hosted pages with the front's own app client (authorization code + PKCE, scope `openid`), the
 * front redeems that code at Cognito's token endpoint and takes the account (`sub`) from the
 * verified ID token. Cognito's tokens never reach the MCP client, which gets the front's own.
 */
export interface UpstreamIdentity {
  /** Where to send the browser: Cognito's `/oauth2/authorize`. */
  authorizeUrl(opts: { state: string; codeVerifier: string; redirectUri: string }): string;
  /** Redeems Cognito's code and returns the verified subject; throws `UpstreamError` when it cannot. */
  exchange(opts: { code: string; codeVerifier: string; redirectUri: string }): Promise<{ sub: string }>;
}

export class UpstreamError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamError';
  }
}

const TokenResponse = z.object({ id_token: z.string().min(1) });

export class CognitoUpstreamIdentity implements UpstreamIdentity {
  private readonly verifier: ReturnType<typeof CognitoJwtVerifier.create<{ userPoolId: string; tokenUse: 'id'; clientId: string }>>;

  constructor(
    private readonly cfg: CognitoUpstream,
    private readonly fetchImpl: HttpFetch,
    private readonly timeoutMs = 5000,
  ) {
    // The same fetcher as every other JWKS read: typed failures, an injectable fetch for tests.
    const jwksCache = new SimpleJwksCache({ fetcher: new JwksHttpFetcher({ timeoutMs, fetchImpl: (u, init) => fetchImpl(u, init) }) });
    this.verifier = CognitoJwtVerifier.create({ userPoolId: cfg.userPoolId, tokenUse: 'id', clientId: cfg.clientId }, { jwksCache });
  }

  authorizeUrl(opts: { state: string; codeVerifier: string; redirectUri: string }): string {
    const u = new URL(`${this.cfg.domain}/oauth2/authorize`);
    u.searchParams.set('response_type', 'code');
    u.searchParams.set('client_id', this.cfg.clientId);
    u.searchParams.set('redirect_uri', opts.redirectUri);
    u.searchParams.set('scope', 'openid');
    u.searchParams.set('state', opts.state);
    u.searchParams.set('code_challenge', s256(opts.codeVerifier));
    u.searchParams.set('code_challenge_method', 'S256');
    return u.toString();
  }

  async exchange(opts: { code: string; codeVerifier: string; redirectUri: string }): Promise<{ sub: string }> {
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.cfg.domain}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: this.cfg.clientId,
          code: opts.code,
          redirect_uri: opts.redirectUri,
          code_verifier: opts.codeVerifier,
        }).toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new UpstreamError('the sign-in service could not be reached', { cause: err });
    }
    const text = await res.text().catch(() => '');
    if (res.status !== 200) throw new UpstreamError(`the sign-in service refused the code (HTTP ${res.status})`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new UpstreamError('the sign-in service answered something that is not JSON', { cause: err });
    }
    const parsed = TokenResponse.safeParse(body);
    if (!parsed.success) throw new UpstreamError('the sign-in service returned no ID token');
    let payload: { sub?: unknown };
    try {
      payload = await this.verifier.verify(parsed.data.id_token);
    } catch (err) {
      throw new UpstreamError('the ID token from the sign-in service did not verify', { cause: err });
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new UpstreamError('the ID token has no subject');
    return { sub: payload.sub };
  }
}
