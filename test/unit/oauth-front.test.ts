import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { redirectUriProblem, validateClientMetadata, ClientMetadataError } from '../../lambdas/oauth/clients';
import { loadOAuthFrontConfig } from '../../lambdas/oauth/config';
import { protectedResourceMetadata, protectedResourceMetadataUrl, wwwAuthenticate } from '../../lambdas/identity/protected-resource';
import { authorizationServerMetadata } from '../../lambdas/oauth/metadata';
import { escapeHtml } from '../../lambdas/oauth/pages';
import { FrontSigner, s256 } from '../../lambdas/oauth/signed';

describe('metadata helpers the MCP endpoint uses', () => {
  it('puts the well-known segment between the origin and the resource path (RFC 9728 §3.1)', () => {
    expect(protectedResourceMetadataUrl({ audience: 'https://mcp.example.com/mcp' })).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(protectedResourceMetadataUrl({ audience: 'http://localhost:3000/mcp/' })).toBe('http://localhost:3000/.well-known/oauth-protected-resource/mcp');
    expect(protectedResourceMetadataUrl({ audience: 'https://mcp.example.com' })).toBe('https://mcp.example.com/.well-known/oauth-protected-resource');
  });

  it('builds the 401 challenge of DECISIONS, and variants with an error or one scope', () => {
    const config = { audience: 'https://mcp.example.com/mcp' };
    expect(wwwAuthenticate(config)).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="memory:read memory:write"',
    );
    expect(wwwAuthenticate(config, { error: 'insufficient_scope', scope: 'memory:write', errorDescription: 'needs "write"' })).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="memory:write", error="insufficient_scope", error_description="needs write"',
    );
  });

  it('describes the resource and the authorization server', () => {
    const config = { audience: 'https://x.example/mcp', issuer: 'https://x.example' };
    expect(protectedResourceMetadata(config)).toMatchObject({
      resource: 'https://x.example/mcp',
      authorization_servers: ['https://x.example'],
      bearer_methods_supported: ['header'],
    });
    expect(authorizationServerMetadata(config)).toMatchObject({
      issuer: 'https://x.example',
      token_endpoint: 'https://x.example/oauth/token',
      code_challenge_methods_supported: ['S256'],
    });
  });
});

describe('redirect URIs', () => {
  it.each([
    ['https://app.example/cb', undefined],
    ['https://app.example/cb?x=1', undefined],
    ['http://localhost:8080/cb', undefined],
    ['http://127.0.0.1/cb', undefined],
    ['http://[::1]:9/cb', undefined],
    ['http://localhost.evil.example/cb', 'must use https'],
    ['http://app.example/cb', 'must use https'],
    ['https://app.example/cb#frag', 'fragment'],
    ['https://user:pw@app.example/cb', 'user information'],
    ['myapp://callback', 'must use https'],
    ['javascript:alert(1)', 'must use https'],
    ['not a url', 'not an absolute URL'],
  ])('%s → %s', (uri, problem) => {
    const got = redirectUriProblem(uri);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });

  it('defaults grant types to both, de-duplicates redirect URIs and strips control characters from the name', () => {
    expect(validateClientMetadata({ redirect_uris: ['https://a.example/cb', 'https://a.example/cb'], client_name: ' My\u0007 App ' })).toEqual({
      redirectUris: ['https://a.example/cb'],
      clientName: 'My App',
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    expect(validateClientMetadata({ redirect_uris: ['https://a.example/cb'], grant_types: ['authorization_code'] }).grantTypes).toEqual(['authorization_code']);
    expect(() => validateClientMetadata(null)).toThrow(ClientMetadataError);
  });
});

describe('signed values', () => {
  const Shape = z.object({ a: z.number() });
  const ring = { current: { id: 2, secret: randomBytes(32) }, previous: { id: 1, secret: randomBytes(32) } };

  it('round-trips for its purpose only, until it expires', () => {
    const s = new FrontSigner(ring);
    const v = s.sign('tx', { a: 1 }, 1000);
    expect(s.verify('tx', v, 999, Shape)).toEqual({ a: 1 });
    expect(s.verify('consent', v, 999, Shape)).toBeUndefined();
    expect(s.verify('tx', v, 1000, Shape)).toBeUndefined();
    expect(s.verify('tx', v, 999, z.object({ b: z.string() }))).toBeUndefined();
  });

  it('refuses tampering and unknown keys, and accepts the previous key after a rotation', () => {
    const old = new FrontSigner({ current: ring.previous });
    const s = new FrontSigner(ring);
    const v = old.sign('tx', { a: 1 }, 1000);
    expect(s.verify('tx', v, 0, Shape)).toEqual({ a: 1 });
    const [id, body, mac] = v.split('.');
    const forged = Buffer.from(JSON.stringify({ p: { a: 2 }, e: 1000 })).toString('base64url');
    expect(s.verify('tx', `${id}.${forged}.${mac}`, 0, Shape)).toBeUndefined();
    expect(s.verify('tx', `9.${body}.${mac}`, 0, Shape)).toBeUndefined();
    expect(new FrontSigner({ current: { id: 1, secret: randomBytes(32) } }).verify('tx', v, 0, Shape)).toBeUndefined();
    expect(s.verify('tx', undefined, 0, Shape)).toBeUndefined();
    expect(s.verify('tx', 'garbage', 0, Shape)).toBeUndefined();
  });

  it('computes S256 as RFC 7636 appendix B does', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});

describe('configuration', () => {
  it('defaults to the local mode on PORT, with the documented lifetimes, and loopback documents allowed only locally', () => {
    const c = loadOAuthFrontConfig({ PORT: '4000' });
    expect(c).toMatchObject({
      issuer: 'http://localhost:4000',
      audience: 'http://localhost:4000/mcp',
      mode: 'local',
      ttl: { code: 60, access: 3600, refresh: 2592000, transaction: 600, unusedClient: 86400, idleClient: 7776000 },
      cimd: { allowLoopback: true },
      secureCookies: false,
    });
    const aws = loadOAuthFrontConfig({
      AUTH_MODE: 'cognito',
      PUBLIC_URL: 'https://mcp.example.com/',
      COGNITO_DOMAIN: 'https://x.auth.eu-west-1.amazoncognito.com/',
      OAUTH_COGNITO_CLIENT_ID: 'c',
      COGNITO_USER_POOL_ID: 'eu-west-1_x',
    });
    expect(aws).toMatchObject({
      issuer: 'https://mcp.example.com',
      mode: 'cognito',
      cimd: { allowLoopback: false },
      secureCookies: true,
      cognito: { domain: 'https://x.auth.eu-west-1.amazoncognito.com' },
    });
  });

  it('refuses an incomplete Cognito mode and nonsense numbers', () => {
    expect(() => loadOAuthFrontConfig({ AUTH_MODE: 'cognito', COGNITO_USER_POOL_ID: 'p' })).toThrow(/COGNITO_DOMAIN/);
    expect(() => loadOAuthFrontConfig({ OAUTH_CODE_TTL_SECONDS: '0' })).toThrow(/OAUTH_CODE_TTL_SECONDS/);
    expect(() => loadOAuthFrontConfig({ OAUTH_CIMD_ALLOW_LOOPBACK: 'maybe' })).toThrow(/true or false/);
    // A client must outlive its refresh tokens.
    expect(() => loadOAuthFrontConfig({ OAUTH_IDLE_CLIENT_TTL_SECONDS: '3600' })).toThrow(/at least OAUTH_REFRESH_TOKEN_TTL_SECONDS/);
    expect(loadOAuthFrontConfig({ OAUTH_REFRESH_TOKEN_TTL_SECONDS: String(200 * 86400) }).ttl.idleClient).toBe(200 * 86400);
    expect(() => loadOAuthFrontConfig({ OAUTH_UNUSED_CLIENT_TTL_SECONDS: '5' })).toThrow(/OAUTH_UNUSED_CLIENT_TTL_SECONDS/);
  });
});

it('escapes everything a page shows', () => {
  expect(escapeHtml(`<script>"x" & 'y'</script>`)).toBe('&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;');
});
