import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalStack } from '../../bin/local-stack/stack';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
import { pkcePair, signInAndConsent, TestBrowser, hiddenField } from '../support/oauth-browser';

/**
 * The front over HTTP against what a hostile or broken client tries: each case answers with the
 * code RFC 6749 / 7591 / 7009 / 8707 / OAuth 2.1 prescribe, and nothing it refuses leaves a usable
 * credential behind. Opaque tokens are not cached (AUTH_TOKEN_CACHE_SECONDS=0), so a revocation is
 * visible at the next request.
 */
let scratch: ScratchStack | undefined;
let stack: LocalStack;
let base: string;
let docs: Server;
let docsUrl: string;
/** Client ID Metadata Documents served by the fake loopback host, by path. */
const documents = new Map<string, { status?: number; body: string; headers?: Record<string, string> }>();

beforeAll(async () => {
  process.env.AUTH_TOKEN_CACHE_SECONDS = '0';
  process.env.OAUTH_CIMD_ALLOW_LOOPBACK = 'true';
  // Not a test of the per-IP limits (oauth-rate-limit.test.ts is): every request here comes from one address.
  process.env.OAUTH_REGISTER_RATE_PER_MINUTE = '10000';
  process.env.OAUTH_TOKEN_RATE_PER_MINUTE = '10000';
  scratch = await startScratchStack('oauth-attacks');
  stack = scratch.stack;
  base = stack.url;
  docs = createServer((req, res) => {
    const d = documents.get(req.url ?? '');
    if (!d) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(d.status ?? 200, { 'content-type': 'application/json', ...d.headers }).end(d.body);
  });
  await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
  docsUrl = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((r) => docs?.close(r));
  await scratch?.close();
});

const REDIRECT = 'http://127.0.0.1:9/cb';
const OTHER_REDIRECT = 'https://client.example/cb';

async function register(body: unknown, raw?: string): Promise<Response> {
  return fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ?? JSON.stringify(body) });
}

async function newClient(redirectUris = [REDIRECT, OTHER_REDIRECT]): Promise<string> {
  const res = await register({ client_name: 'attack test', redirect_uris: redirectUris });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function authorizeUrl(params: Record<string, string | undefined>): string {
  const u = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}

function goodParams(clientId: string, challenge: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    scope: 'memory:read memory:write',
    resource: stack.auth.audience,
    ...extra,
  };
}

function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** A code for `clientId` through the real pages. */
async function codeFor(clientId: string, extra: Record<string, string | undefined> = {}): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const cb = await signInAndConsent(new TestBrowser(), authorizeUrl(goodParams(clientId, challenge, extra)), { username: 'mallory' });
  const code = cb.searchParams.get('code');
  if (!code) throw new Error(`no code: ${cb.toString()}`);
  return { code, verifier };
}

async function exchange(clientId: string, code: string, verifier: string, redirectUri = REDIRECT): Promise<Response> {
  return tokenRequest({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: redirectUri });
}

async function tokensFor(clientId: string): Promise<{ access_token: string; refresh_token: string }> {
  const { code, verifier } = await codeFor(clientId);
  const res = await exchange(clientId, code, verifier);
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

const favorites = (token: string) => fetch(`${base}/api/favorites`, { headers: { authorization: `Bearer ${token}` } });

async function oauthErrorOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: string }).error;
}

/** The client-facing redirect of an authorize error: its `error`, with state and iss echoed. */
async function redirectedError(url: string): Promise<string | null> {
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get('location') as string);
  expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
  expect(loc.searchParams.get('state')).toBe('xyz');
  expect(loc.searchParams.get('iss')).toBe(stack.oauth.config.issuer);
  expect(loc.searchParams.get('code')).toBeNull();
  return loc.searchParams.get('error');
}

describe('discovery and CORS', () => {
  it('serves RFC 9728 metadata at the root and path-aware URLs, and RFC 8414 metadata, with open CORS', async () => {
    const { issuer, audience } = stack.oauth.config;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toMatchObject({
        resource: audience,
        authorization_servers: [issuer],
        scopes_supported: ['memory:read', 'memory:write'],
        bearer_methods_supported: ['header'],
      });
    }
    const as = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(as.headers.get('access-control-allow-origin')).toBe('*');
    expect(await as.json()).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
    });
    // Cacheable, and nothing beside it says otherwise.
    expect([as.headers.get('cache-control'), as.headers.get('pragma')]).toEqual(['public, max-age=300', null]);
    // A browser client probing other discovery documents can read the 404.
    const oidc = await fetch(`${base}/.well-known/openid-configuration`);
    expect([oidc.status, oidc.headers.get('access-control-allow-origin')]).toEqual([404, '*']);
    // The local issuer's JWKS still lives under the same prefix.
    expect(((await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys.length).toBe(1);
  });

  it('answers preflights of the fetch endpoints with 204, and unknown paths and wrong verbs in OAuth JSON', async () => {
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke', '/.well-known/oauth-authorization-server']) {
      const res = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    }
    const wrongVerb = await fetch(`${base}/oauth/token`);
    expect(wrongVerb.status).toBe(405);
    expect(wrongVerb.headers.get('allow')).toBe('POST');
    expect(await oauthErrorOf(wrongVerb)).toBe('method_not_allowed');
    const jwksVerb = await fetch(`${base}/.well-known/jwks.json`, { method: 'POST', body: '' });
    expect(jwksVerb.status).toBe(405);
    const unknown = await fetch(`${base}/oauth/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(await oauthErrorOf(unknown)).toBe('not_found');
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  it('registers a public client: 201 with client_id, client_id_issued_at and the metadata it will honour', async () => {
    const res = await register({ client_name: 'Ok', redirect_uris: ['https://app.example/cb', 'http://localhost:8765/cb', 'http://[::1]:1/cb'] });
    expect(res.status).toBe(201);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual({
      client_id: expect.stringMatching(/^mcpc_/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Ok',
      redirect_uris: ['https://app.example/cb', 'http://localhost:8765/cb', 'http://[::1]:1/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it.each<[string, string, unknown]>([
    ['no redirect_uris', 'invalid_redirect_uri', { client_name: 'x' }],
    ['empty redirect_uris', 'invalid_redirect_uri', { redirect_uris: [] }],
    ['a non-loopback http redirect', 'invalid_redirect_uri', { redirect_uris: ['http://evil.example/cb'] }],
    ['a redirect with a fragment', 'invalid_redirect_uri', { redirect_uris: ['https://app.example/cb#x'] }],
    ['a javascript: redirect', 'invalid_redirect_uri', { redirect_uris: ['javascript:alert(1)'] }],
    ['a relative redirect', 'invalid_redirect_uri', { redirect_uris: ['/cb'] }],
    ['a non-string redirect', 'invalid_redirect_uri', { redirect_uris: [42] }],
    ['the implicit grant', 'invalid_client_metadata', { redirect_uris: [REDIRECT], grant_types: ['implicit'] }],
    ['refresh without authorization_code', 'invalid_client_metadata', { redirect_uris: [REDIRECT], grant_types: ['refresh_token'] }],
    ['response type token', 'invalid_client_metadata', { redirect_uris: [REDIRECT], response_types: ['token'] }],
    ['a non-string client_name', 'invalid_client_metadata', { redirect_uris: [REDIRECT], client_name: 7 }],
    ['an array body', 'invalid_client_metadata', [REDIRECT]],
  ])('refuses %s with 400 %s', async (_what, error, body) => {
    const res = await register(body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: string; error_description: string };
    expect(json.error).toBe(error);
    expect(json.error_description).toEqual(expect.any(String));
  });

  it('registers a client that asks for a secret as the public client it will be (RFC 7591 §3.2.1: the answer says none)', async () => {
    for (const method of ['client_secret_post', 'client_secret_basic']) {
      const res = await register({ client_name: 'Python-style', redirect_uris: [REDIRECT], token_endpoint_auth_method: method });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ token_endpoint_auth_method: 'none' });
      expect(body).not.toHaveProperty('client_secret');
    }
  });

  it('refuses malformed JSON and oversized bodies as invalid_client_metadata', async () => {
    const bad = await register(undefined, '{"redirect_uris": [');
    expect(bad.status).toBe(400);
    expect(await oauthErrorOf(bad)).toBe('invalid_client_metadata');
    const big = await register({ redirect_uris: [REDIRECT], client_name: 'x', pad: 'y'.repeat(20000) });
    expect(big.status).toBe(400);
    expect(await oauthErrorOf(big)).toBe('invalid_client_metadata');
  });
});

describe('registration lifetime', () => {
  const DAY = 24 * 3600;
  const nowS = () => Math.floor(Date.now() / 1000);
  const expiryOf = async (clientId: string) => (await stack.oauth.clients.get(clientId))?.expiresAt as number;
  /**
   * Runs `action` and returns the seconds it spanned: an expiry the server set during it, `life`
   * after its own clock, lies between `start + life` and `end + life`, however slow the machine.
   */
  const during = async <T>(action: () => Promise<T>) => {
    const start = nowS();
    const value = await action();
    return { value, expect: (expiry: number, life: number) => expectBetween(expiry, start + life, nowS() + life) };
  };
  const expectBetween = (value: number, low: number, high: number) => {
    expect(value).toBeGreaterThanOrEqual(low);
    expect(value).toBeLessThanOrEqual(high);
  };

  it('forgets a registration after a day unless it signs someone in, then keeps it 90 days past each grant', async () => {
    const registered = await during(() => newClient());
    const clientId = registered.value;
    registered.expect(await expiryOf(clientId), DAY);
    const granted = await during(() => tokensFor(clientId));
    granted.expect(await expiryOf(clientId), 90 * DAY);
  });

  it('extends on a refresh once the remaining life nears the refresh lifetime, not on every refresh', async () => {
    const clientId = await newClient();
    const { refresh_token } = await tokensFor(clientId);
    const client = await stack.oauth.clients.get(clientId);
    if (!client) throw new Error(`client ${clientId} was not stored`);
    // 70 days left: more than 30 (refresh) + 30 (half the 60 days of slack), so a refresh writes nothing.
    const seventy = nowS() + 70 * DAY;
    await stack.oauth.clients.put({ ...client, expiresAt: seventy });
    const first = await tokenRequest({ grant_type: 'refresh_token', refresh_token, client_id: clientId });
    expect(first.status).toBe(200);
    expect(await expiryOf(clientId)).toBe(seventy);
    // 50 days left: below 60, so the refresh moves it to 90 days again.
    await stack.oauth.clients.put({ ...client, expiresAt: nowS() + 50 * DAY });
    const rotated = ((await first.json()) as { refresh_token: string }).refresh_token;
    const second = await during(() => tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated, client_id: clientId }));
    expect(second.value.status).toBe(200);
    second.expect(await expiryOf(clientId), 90 * DAY);
  });

  it('treats an expired registration as unknown at once (the table deletes it lazily): error page at authorize, invalid_client at token', async () => {
    const clientId = await newClient();
    const { refresh_token } = await tokensFor(clientId);
    const client = await stack.oauth.clients.get(clientId);
    if (!client) throw new Error(`client ${clientId} was not stored`);
    await stack.oauth.clients.put({ ...client, expiresAt: nowS() - 1 });
    const { challenge } = pkcePair();
    const page = await fetch(authorizeUrl(goodParams(clientId, challenge)), { redirect: 'manual' });
    expect([page.status, page.headers.get('location')]).toEqual([400, null]);
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(401);
    expect(await oauthErrorOf(refreshed)).toBe('invalid_client');
  });
});

describe('authorization endpoint', () => {
  it('shows an error page, never a redirect, for an unknown client or a redirect URI it did not register', async () => {
    const clientId = await newClient();
    const { challenge } = pkcePair();
    for (const url of [
      authorizeUrl(goodParams('mcpc_unknown', challenge)),
      authorizeUrl(goodParams(clientId, challenge, { redirect_uri: 'https://evil.example/cb' })),
      authorizeUrl(goodParams(clientId, challenge, { redirect_uri: `${REDIRECT}/` })),
      authorizeUrl(goodParams(clientId, challenge, { redirect_uri: undefined })),
      authorizeUrl(goodParams(clientId, challenge, { client_id: undefined })),
    ]) {
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('lets a loopback redirect name any port (RFC 8252 §7.3), and nothing else differ', async () => {
    // REDIRECT is http://127.0.0.1:9/cb: a native client listening on an ephemeral port uses another.
    const clientId = await newClient([REDIRECT, 'http://localhost/cb']);
    const ephemeral = 'http://127.0.0.1:49152/cb';
    const { verifier, challenge } = pkcePair();
    const cb = await signInAndConsent(new TestBrowser(), authorizeUrl(goodParams(clientId, challenge, { redirect_uri: ephemeral })), { username: 'mallory' });
    expect(`${cb.origin}${cb.pathname}`).toBe(ephemeral);
    const res = await exchange(clientId, cb.searchParams.get('code') as string, verifier, ephemeral);
    expect(res.status).toBe(200);
    // localhost registered without a port takes one too.
    expect((await fetch(authorizeUrl(goodParams(clientId, challenge, { redirect_uri: 'http://localhost:5555/cb' })), { redirect: 'manual' })).status).toBe(200);
    for (const other of [
      'http://127.0.0.1:49152/other',
      'http://localhost:49152/cb?x=1',
      'http://[::1]:49152/cb',
      'http://127.0.0.1:49152/x/../cb',
      'http://127.0.0.1:49152/%2e%2e/cb',
      'https://127.0.0.1:49152/cb',
    ]) {
      const page = await fetch(authorizeUrl(goodParams(clientId, challenge, { redirect_uri: other })), { redirect: 'manual' });
      expect([other, page.status, page.headers.get('location')]).toEqual([other, 400, null]);
    }
    // The token request must name the redirect the code was issued for, port included.
    const again = pkcePair();
    const cb2 = await signInAndConsent(new TestBrowser(), authorizeUrl(goodParams(clientId, again.challenge, { redirect_uri: ephemeral })), {
      username: 'mallory',
    });
    expect(await oauthErrorOf(await exchange(clientId, cb2.searchParams.get('code') as string, again.verifier, REDIRECT))).toBe('invalid_grant');
  });

  it.each<[string, string, Record<string, string | undefined>]>([
    ['PKCE missing', 'invalid_request', { code_challenge: undefined, code_challenge_method: undefined }],
    ['PKCE plain', 'invalid_request', { code_challenge_method: 'plain' }],
    ['a challenge method but no challenge', 'invalid_request', { code_challenge: undefined }],
    ['a malformed challenge', 'invalid_request', { code_challenge: 'short' }],
    ['response_type token', 'unsupported_response_type', { response_type: 'token' }],
    ['an unknown scope', 'invalid_scope', { scope: 'memory:read admin' }],
    ['another resource', 'invalid_target', { resource: 'https://elsewhere.example/mcp' }],
  ])('sends %s back to the client as error=%s', async (_what, error, extra) => {
    const clientId = await newClient();
    const { challenge } = pkcePair();
    expect(await redirectedError(authorizeUrl(goodParams(clientId, challenge, extra)))).toBe(error);
  });

  it('refuses a consent or sign-in form from another browser, a tampered one, or one without its cookie', async () => {
    const clientId = await newClient();
    const { challenge } = pkcePair();
    const victim = new TestBrowser();
    const attacker = new TestBrowser();
    const page = await (await attacker.get(authorizeUrl(goodParams(clientId, challenge)))).text();
    const tx = hiddenField(page, 'tx');
    // Login CSRF: the attacker's transaction posted from the victim's browser.
    await victim.get(authorizeUrl(goodParams(clientId, challenge)));
    expect(
      (
        await victim.postForm(`${base}/oauth/login`, [
          ['tx', tx],
          ['username', 'victim'],
        ])
      ).status,
    ).toBe(400);
    expect(
      (
        await new TestBrowser().postForm(`${base}/oauth/login`, [
          ['tx', tx],
          ['username', 'nobody'],
        ])
      ).status,
    ).toBe(400);
    const tampered = tx.replace(/\.([A-Za-z0-9_-])/, (_m, c: string) => `.${c === 'A' ? 'B' : 'A'}`);
    expect(
      (
        await attacker.postForm(`${base}/oauth/login`, [
          ['tx', tampered],
          ['username', 'a'],
        ])
      ).status,
    ).toBe(400);
    const consentPage = await (
      await attacker.postForm(`${base}/oauth/login`, [
        ['tx', tx],
        ['username', 'attacker'],
      ])
    ).text();
    const consent = hiddenField(consentPage, 'consent');
    const res = await victim.postForm(`${base}/oauth/consent`, [
      ['consent', consent],
      ['scope', 'memory:read'],
      ['memories_mode', 'all'],
      ['decision', 'approve'],
    ]);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    // A sign-in value is not a consent value (each is signed for its own step).
    expect(
      (
        await attacker.postForm(`${base}/oauth/consent`, [
          ['consent', tx],
          ['scope', 'memory:read'],
          ['decision', 'approve'],
        ])
      ).status,
    ).toBe(400);
  });

  it('keeps the user on the consent page for an invalid memory list', async () => {
    const clientId = await newClient();
    const { challenge } = pkcePair();
    const b = new TestBrowser();
    const page = await (await b.get(authorizeUrl(goodParams(clientId, challenge)))).text();
    const consentPage = await (
      await b.postForm(`${base}/oauth/login`, [
        ['tx', hiddenField(page, 'tx')],
        ['username', 'carol'],
      ])
    ).text();
    const res = await b.postForm(`${base}/oauth/consent`, [
      ['consent', hiddenField(consentPage, 'consent')],
      ['scope', 'memory:read'],
      ['memories_mode', 'some'],
      ['memories', 'Not A Name'],
      ['decision', 'approve'],
    ]);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/is not a memory name/);
  });
});

describe('token endpoint', () => {
  it('refuses a refresh that asks for a scope the grant does not hold (invalid_scope), leaving the token usable', async () => {
    const clientId = await newClient();
    const { verifier, challenge } = pkcePair();
    const cb = await signInAndConsent(new TestBrowser(), authorizeUrl(goodParams(clientId, challenge)), { username: 'mallory', scopes: ['memory:read'] });
    const first = (await (await exchange(clientId, cb.searchParams.get('code') as string, verifier)).json()) as { refresh_token: string; scope: string };
    expect(first.scope).toBe('memory:read');
    const wider = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
      scope: 'memory:read memory:write',
    });
    expect(wider.status).toBe(400);
    expect(await oauthErrorOf(wider)).toBe('invalid_scope');
    // Nothing was spent: the same refresh token still rotates, within the grant.
    const same = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId, scope: 'memory:read' });
    expect(same.status).toBe(200);
    expect(((await same.json()) as { scope: string }).scope).toBe('memory:read');
  });

  it('answers a good exchange with no-store, and refuses a wrong verifier (spending the code)', async () => {
    const clientId = await newClient();
    const { code, verifier } = await codeFor(clientId);
    const wrong = await exchange(clientId, code, pkcePair().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    expect(await oauthErrorOf(wrong)).toBe('invalid_grant');
    // The code is spent: the right verifier comes too late.
    expect(await oauthErrorOf(await exchange(clientId, code, verifier))).toBe('invalid_grant');

    const good = await codeFor(clientId);
    const ok = await exchange(clientId, good.code, good.verifier);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('refuses a missing verifier as invalid_request, leaving the code usable', async () => {
    const clientId = await newClient();
    const { code, verifier } = await codeFor(clientId);
    const res = await tokenRequest({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT });
    expect(res.status).toBe(400);
    expect(await oauthErrorOf(res)).toBe('invalid_request');
    expect((await exchange(clientId, code, verifier)).status).toBe(200);
  });

  it("refuses a redirect URI other than the authorization request's", async () => {
    const clientId = await newClient();
    const { code, verifier } = await codeFor(clientId);
    const res = await exchange(clientId, code, verifier, OTHER_REDIRECT);
    expect(res.status).toBe(400);
    expect(await oauthErrorOf(res)).toBe('invalid_grant');
  });

  it('refuses a replayed code and revokes the tokens issued from it', async () => {
    const clientId = await newClient();
    const { code, verifier } = await codeFor(clientId);
    const first = await exchange(clientId, code, verifier);
    expect(first.status).toBe(200);
    const { access_token: access, refresh_token: refresh } = (await first.json()) as { access_token: string; refresh_token: string };
    expect((await favorites(access)).status).toBe(200);
    const replay = await exchange(clientId, code, verifier);
    expect(replay.status).toBe(400);
    expect(await oauthErrorOf(replay)).toBe('invalid_grant');
    expect((await favorites(access)).status).toBe(401);
    expect(await oauthErrorOf(await tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }))).toBe('invalid_grant');
  });

  it('refuses a code at another client', async () => {
    const clientId = await newClient();
    const other = await newClient();
    const { code, verifier } = await codeFor(clientId);
    expect(await oauthErrorOf(await exchange(other, code, verifier))).toBe('invalid_grant');
  });

  it('refuses an expired code', async () => {
    const clientId = await newClient();
    const { verifier, challenge } = pkcePair();
    const code = await stack.oauth.tokens.saveCode(
      { sub: 'mallory', clientId, scopes: ['memory:read'], resource: stack.auth.audience, redirectUri: REDIRECT, codeChallenge: challenge },
      0,
    );
    const res = await exchange(clientId, code, verifier);
    expect(res.status).toBe(400);
    expect(await oauthErrorOf(res)).toBe('invalid_grant');
  });

  it('refuses another resource (invalid_target) and an unknown client (401 invalid_client)', async () => {
    const clientId = await newClient();
    const { code, verifier } = await codeFor(clientId);
    const target = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: 'https://elsewhere.example/mcp',
    });
    expect(target.status).toBe(400);
    expect(await oauthErrorOf(target)).toBe('invalid_target');
    const unknown = await exchange('mcpc_nobody', code, verifier);
    expect(unknown.status).toBe(401);
    expect(await oauthErrorOf(unknown)).toBe('invalid_client');
    // Neither spent the code.
    expect((await exchange(clientId, code, verifier)).status).toBe(200);
  });

  it.each<[string, string, string | undefined, string]>([
    ['a JSON body', JSON.stringify({ grant_type: 'authorization_code' }), 'application/json', 'invalid_request'],
    ['no grant_type', 'code=x', undefined, 'invalid_request'],
    ['an unsupported grant', 'grant_type=password&username=a&password=b', undefined, 'unsupported_grant_type'],
    ['a repeated parameter', 'grant_type=authorization_code&code=a&code=b', undefined, 'invalid_request'],
  ])('refuses %s', async (_what, body, contentType, error) => {
    const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': contentType ?? 'application/x-www-form-urlencoded' }, body });
    expect(res.status).toBe(400);
    expect(await oauthErrorOf(res)).toBe(error);
  });

  it('rotates refresh tokens; reusing an old one is invalid_grant and revokes the whole family', async () => {
    const clientId = await newClient();
    const t0 = await tokensFor(clientId);
    const r1 = await tokenRequest({ grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: clientId });
    expect(r1.status).toBe(200);
    const t1 = (await r1.json()) as { access_token: string; refresh_token: string };
    expect((await favorites(t1.access_token)).status).toBe(200);

    const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: t0.refresh_token, client_id: clientId });
    expect(reuse.status).toBe(400);
    expect(await oauthErrorOf(reuse)).toBe('invalid_grant');
    // The newest tokens of the family die with it.
    expect((await favorites(t1.access_token)).status).toBe(401);
    expect(await oauthErrorOf(await tokenRequest({ grant_type: 'refresh_token', refresh_token: t1.refresh_token, client_id: clientId }))).toBe('invalid_grant');
  });

  it('refuses a refresh token at another client', async () => {
    const t = await tokensFor(await newClient());
    expect(await oauthErrorOf(await tokenRequest({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: await newClient() }))).toBe(
      'invalid_grant',
    );
  });
});

describe('revocation (RFC 7009)', () => {
  it('revokes an access token (then 401 at favorites), ignores unknown tokens, refuses a request without a token', async () => {
    const clientId = await newClient();
    const t = await tokensFor(clientId);
    expect((await favorites(t.access_token)).status).toBe(200);
    const revoke = (fields: Record<string, string>) =>
      fetch(`${base}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    const res = await revoke({ token: t.access_token, token_type_hint: 'access_token', client_id: clientId });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect((await favorites(t.access_token)).status).toBe(401);
    expect((await revoke({ token: 'not-a-token-of-ours' })).status).toBe(200);
    const missing = await revoke({ client_id: clientId });
    expect(missing.status).toBe(400);
    expect(await oauthErrorOf(missing)).toBe('invalid_request');

    // Revoking the refresh token ends the grant: its access tokens too.
    const t2 = await tokensFor(clientId);
    expect((await revoke({ token: t2.refresh_token, client_id: clientId })).status).toBe(200);
    expect((await favorites(t2.access_token)).status).toBe(401);
  });
});

describe('Client ID Metadata Documents', () => {
  const doc = (path: string, body: Record<string, unknown>) => documents.set(path, { body: JSON.stringify(body) });

  it('signs in a client known only by its document URL, end to end', async () => {
    const clientId = `${docsUrl}/good/client.json`;
    doc('/good/client.json', { client_id: clientId, client_name: 'Doc client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const { code, verifier } = await codeFor(clientId);
    const res = await exchange(clientId, code, verifier);
    expect(res.status).toBe(200);
    const { access_token: access } = (await res.json()) as { access_token: string };
    expect((await stack.verifier.verify(`Bearer ${access}`)).clientId).toBe(clientId);
  });

  it.each<[string, string, () => void]>([
    ['names another client_id', '/mismatch.json', () => doc('/mismatch.json', { client_id: `${docsUrl}/other.json`, redirect_uris: [REDIRECT] })],
    ['is missing (404)', '/absent.json', () => undefined],
    ['is not JSON', '/garbage.json', () => documents.set('/garbage.json', { body: '<html>' })],
    ['is too large', '/huge.json', () => doc('/huge.json', { client_id: `${docsUrl}/huge.json`, redirect_uris: [REDIRECT], pad: 'x'.repeat(20000) })],
    ['redirects elsewhere', '/moved.json', () => documents.set('/moved.json', { status: 302, body: '', headers: { location: `${docsUrl}/good/client.json` } })],
    [
      'has an invalid redirect URI',
      '/badredirect.json',
      () => doc('/badredirect.json', { client_id: `${docsUrl}/badredirect.json`, redirect_uris: ['http://evil.example/cb'] }),
    ],
  ])('refuses a document that %s with an error page', async (_what, path, setup) => {
    setup();
    const { challenge } = pkcePair();
    const res = await fetch(authorizeUrl(goodParams(`${docsUrl}${path}`, challenge)), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });
});
