import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { LocalStack } from '../../bin/local-stack/stack';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';
import { REDIRECT, TestProvider } from '../support/oauth-browser';

/**
 * The whole OAuth front on the local stack, driven by the MCP SDK's own client (`auth()`): RFC 9728
 * discovery from the MCP URL, RFC 8414 metadata, dynamic registration, PKCE, the local sign-in and
 * consent pages, the code exchange, a protected call, and a refresh.
 */
let scratch: ScratchStack | undefined;
let stack: LocalStack;

beforeAll(async () => {
  // Revocations must show at once: no positive cache of opaque tokens in these tests.
  process.env.AUTH_TOKEN_CACHE_SECONDS = '0';
  scratch = await startScratchStack('oauth-sdk');
  stack = scratch.stack;
}, 120_000);

afterAll(async () => {
  await scratch?.close();
});

const favorites = (token: string) => fetch(`${stack.url}/api/favorites`, { headers: { authorization: `Bearer ${token}` } });

describe('the MCP SDK client against the local front', () => {
  it('discovers, registers, signs in, consents, exchanges the code, calls a protected API and refreshes', async () => {
    const serverUrl = stack.auth.audience;
    const provider = new TestProvider({ username: 'alice' });

    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    expect(provider.info?.client_id).toMatch(/^mcpc_/);
    const cb = provider.callback as URL;
    expect(`${cb.origin}${cb.pathname}`).toBe(REDIRECT);
    expect(cb.searchParams.get('state')).toBe(provider.sentState);
    expect(cb.searchParams.get('iss')).toBe(stack.oauth.config.issuer);
    const code = cb.searchParams.get('code') as string;
    expect(code).toMatch(/^mcpac_/);

    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const first = provider.saved as OAuthTokens;
    expect(first).toMatchObject({ token_type: 'Bearer', scope: 'memory:read memory:write', expires_in: 3600 });
    expect(first.access_token).toMatch(/^mcpat_/);
    expect(first.refresh_token).toMatch(/^mcprt_/);

    const res = await favorites(first.access_token);
    expect(res.status).toBe(200);
    // The one verifier of every API takes it: this deployment's audience, the consented grant.
    const principal = await stack.verifier.verify(`Bearer ${first.access_token}`);
    expect(principal).toMatchObject({ sub: 'alice', scopes: ['memory:read', 'memory:write'], clientId: provider.info?.client_id, kind: 'opaque' });
    expect(principal.memories).toBeUndefined();

    // With tokens saved, auth() refreshes instead of redirecting; the refresh token rotates.
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED');
    const second = provider.saved as OAuthTokens;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await favorites(second.access_token)).status).toBe(200);
    expect((await stack.verifier.verify(`Bearer ${second.access_token}`)).sub).toBe('alice');
  });

  it('carries the consent choices (one scope, named memories) into the token', async () => {
    const provider = new TestProvider({ username: 'bob', scopes: ['memory:read'], memories: 'default, work' });
    expect(await auth(provider, { serverUrl: stack.auth.audience })).toBe('REDIRECT');
    const code = provider.callback?.searchParams.get('code') as string;
    expect(await auth(provider, { serverUrl: stack.auth.audience, authorizationCode: code })).toBe('AUTHORIZED');
    expect(provider.saved?.scope).toBe('memory:read');
    const principal = await stack.verifier.verify(`Bearer ${provider.saved?.access_token}`);
    expect(principal).toMatchObject({ sub: 'bob', scopes: ['memory:read'], memories: ['default', 'work'] });
  });

  it("sends the user's denial back to the client as access_denied", async () => {
    const provider = new TestProvider({ decision: 'deny' });
    expect(await auth(provider, { serverUrl: stack.auth.audience })).toBe('REDIRECT');
    expect(provider.callback?.searchParams.get('error')).toBe('access_denied');
    expect(provider.callback?.searchParams.get('state')).toBe(provider.sentState);
    expect(provider.callback?.searchParams.get('code')).toBeNull();
  });
});
