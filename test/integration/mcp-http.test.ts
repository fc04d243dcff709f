import { generateKeyPairSync } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { signJwt } from '../../lambdas/identity/local-issuer';
import { toolList } from '../../lambdas/mcp/server';
import { ok, startMcpHarness, toolError, type McpHarness } from './mcp-harness';

/**
 * `/mcp` at the HTTP level on the local stack: verbs, Origin, protocol versions, the 401 challenge
 * for every kind of bad token, scopes and grants (tool errors), and the per-user rate limit at its
 * default. The allow-list holds one browser origin so both sides of the Origin rule are exercised.
 */
const APP_ORIGIN = 'https://app.example.com';
let h: McpHarness;

beforeAll(async () => {
  h = await startMcpHarness({ MCP_ALLOWED_ORIGINS: APP_ORIGIN });
}, 180000);
afterAll(() => h?.close());

let seq = 0;
const user = (): string => `http-${process.pid}-${++seq}`;

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(h.mcpUrl, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The challenge of spec and DECISIONS, built from this deployment's audience (`<PUBLIC_URL>/mcp`). */
function prmUrl(): string {
  const audience = new URL(h.stack.auth.audience);
  return `${audience.origin}/.well-known/oauth-protected-resource${audience.pathname}`;
}

describe('verbs', () => {
  it.each(['GET', 'DELETE'])('answers %s with 405 and Allow: POST (stateless: no stream, no session)', async (method) => {
    const res = await fetch(h.mcpUrl, { method, headers: { accept: 'text/event-stream', ...bearer(h.token({ sub: user() })) } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('answers a POST without a session id header, in JSON', async () => {
    const res = await post(ping, bearer(h.token({ sub: user() })));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});

describe('tools/list on the wire', () => {
  it('is exactly the frozen list (test/fixtures/contracts/mcp-tools.json via test/unit/mcp-contract.test.ts)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, bearer(h.token({ sub: user() })));
    expect(((await res.json()) as { result: { tools: unknown } }).result.tools).toEqual(JSON.parse(JSON.stringify(toolList())));
  });
});

describe('Origin', () => {
  it('refuses a browser Origin that is not allowed with 403, before looking at the token', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://app.example.com']) {
      const res = await post(ping, { origin, ...bearer(h.token({ sub: user() })) });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    const preflight = await fetch(h.mcpUrl, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(403);
  });

  it('lets the deployment’s own origin through by default (a page of the same site, the conformance suite)', async () => {
    const own = new URL(h.stack.auth.audience).origin;
    const res = await post(ping, { origin: own, ...bearer(h.token({ sub: user() })) });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(own);
  });

  it('lets an allowed Origin through with CORS headers, and answers its preflight', async () => {
    const preflight = await fetch(h.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    for (const name of ['Authorization', 'Content-Type', 'MCP-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID']) {
      expect(preflight.headers.get('access-control-allow-headers')).toContain(name);
    }

    const res = await post(ping, { origin: APP_ORIGIN, ...bearer(h.token({ sub: user() })) });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate.*Mcp-Session-Id/);
    // So that a browser client can read the challenge and start the OAuth flow.
    const unauthenticated = await post(ping, { origin: APP_ORIGIN });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it('lets requests without Origin (native clients) through', async () => {
    const res = await post(ping, bearer(h.token({ sub: user() })));
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('protocol versions', () => {
  const initialize = (protocolVersion: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

  it.each([LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05'])('negotiates %s', async (version) => {
    const res = await post(initialize(version), bearer(h.token({ sub: user() })));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { protocolVersion: string; capabilities: { tools?: unknown } } };
    expect(body.result.protocolVersion).toBe(version);
    expect(body.result.capabilities.tools).toBeDefined();
  });

  it('offers the newest version to a client asking for one it does not know', async () => {
    const res = await post(initialize('2099-01-01'), bearer(h.token({ sub: user() })));
    expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('answers 400 to an unsupported MCP-Protocol-Version header and accepts the supported ones', async () => {
    const token = h.token({ sub: user() });
    const bad = await post(ping, { 'mcp-protocol-version': '1999-01-01', ...bearer(token) });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/unsupported MCP-Protocol-Version/);
    expect((await post(ping, { 'mcp-protocol-version': '2025-06-18', ...bearer(token) })).status).toBe(200);
    expect((await post(ping, { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, ...bearer(token) })).status).toBe(200);
  });
});

describe('authentication', () => {
  it('answers 401 without a token, with the challenge that leads to the OAuth metadata', async () => {
    const res = await post(ping);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prmUrl()}", scope="memory:read memory:write"`);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/Unauthorized/) } });
    // The metadata the challenge names is served by the OAuth front and describes this resource.
    const prm = await fetch(`${h.url}${new URL(prmUrl()).pathname}`);
    expect(prm.status).toBe(200);
    expect(await prm.json()).toMatchObject({ resource: h.stack.auth.audience, scopes_supported: ['memory:read', 'memory:write'] });
  });

  it('answers 401 without an error code to another scheme (RFC 6750 §3.1: no bearer token was presented)', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNzd29yZA==', 'Digest username="x"']) {
      const res = await post(ping, { authorization });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prmUrl()}", scope="memory:read memory:write"`);
    }
  });

  const now = () => Math.floor(Date.now() / 1000);
  it.each<[string, () => string]>([
    [
      'expired',
      () =>
        h.stack.issuer.signAccessToken({
          sub: 'x',
          scope: 'memory:read memory:write',
          ttlSeconds: 60,
          audience: h.stack.auth.audience,
          issuedAt: now() - 7200,
        }),
    ],
    [
      'forged (signed with another key)',
      () => {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const iat = now();
        const payload = {
          iss: h.stack.issuer.issuer,
          sub: 'x',
          aud: h.stack.auth.audience,
          token_use: 'access',
          client_id: 'local-cli',
          scope: 'memory:read',
          iat,
          nbf: iat,
          exp: iat + 600,
        };
        return signJwt({ alg: 'RS256', typ: 'JWT', kid: h.stack.issuer.kid }, payload, privateKey);
      },
    ],
    ['for another audience', () => h.token({ sub: 'x', audience: 'http://localhost:1/elsewhere' })],
    ['garbage', () => 'not.a.token'],
    ['an unknown opaque token', () => 'mcpat_0000000000000000000000000000000000000000000'],
  ])('answers 401 with error="invalid_token" to a token that is %s', async (_what, make) => {
    const res = await post(ping, bearer(make()));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${prmUrl()}", scope="memory:read memory:write", error="invalid_token"`);
  });

  it('makes the SDK client fail to connect without a valid token', async () => {
    await expect(h.connect('not-a-token')).rejects.toThrow(/Unauthorized: a valid bearer token for this MCP endpoint is required/);
  });
});

describe('scopes and grants are tool errors', () => {
  it('refuses the write tools to a read-only token and the read tools to a write-only one', async () => {
    const sub = user();
    const writer = await h.connect(h.token({ sub, scope: 'memory:write' }));
    const reader = await h.connect(h.token({ sub, scope: 'memory:read' }));
    expect(await ok(writer, 'memory__write', { path: 'a.md', body: 'x' })).toMatchObject({ path: 'a.md' });
    for (const [tool, args] of [
      ['memory__write', { path: 'b.md', body: 'x' }],
      ['memory__edit', { path: 'a.md', body: 'y' }],
      ['memory__delete', { path: 'a.md' }],
    ] as const) {
      expect(await toolError(reader, tool, args)).toEqual({ code: 'forbidden', message: `${tool} needs the memory:write scope; this token has memory:read` });
    }
    for (const [tool, args] of [
      ['memory__read', { path: 'a.md' }],
      ['memory__list', {}],
      ['memory__search', { query: 'x' }],
    ] as const) {
      expect((await toolError(writer, tool, args)).code).toBe('forbidden');
    }
    expect(await ok(reader, 'memory__read', { path: 'a.md' })).toMatchObject({ body: 'x' });
    // The scope is checked before the arguments: a forbidden call learns nothing about them.
    expect((await toolError(reader, 'memory__write', { path: 5 })).code).toBe('forbidden');
    const none = await h.connect(h.token({ sub, scope: '' }));
    expect((await toolError(none, 'memory__read', { path: 'a.md' })).message).toMatch(/no memory scope/);
  });

  it('limits a token granted one vault to it: the default memory and other vaults are forbidden', async () => {
    const sub = user();
    const c: Client = await h.connect(h.token({ sub, memories: ['work'] }));
    expect(await ok(c, 'memory__write', { path: '@work/a.md', body: 'x' })).toEqual({
      path: '@work/a.md',
      updated: expect.any(String),
      rev: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(await toolError(c, 'memory__write', { path: 'a.md', body: 'x' })).toEqual({
      code: 'forbidden',
      message: 'the default memory is not granted to this token',
    });
    expect(await toolError(c, 'memory__read', { path: '@home/a.md' })).toEqual({ code: 'forbidden', message: 'vault "@home" is not granted to this token' });
    expect((await toolError(c, 'memory__search', { query: 'x' })).code).toBe('forbidden');
    expect((await toolError(c, 'memory__list', { folder: 'a' })).code).toBe('forbidden');
    // The unscoped list shows what the token may see: its vault, not the default memory.
    const full = await h.connect(h.token({ sub }));
    await ok(full, 'memory__write', { path: 'private.md', body: 'not for the vault token' });
    await ok(full, 'memory__write', { path: '@home/a.md', body: 'x' });
    const listing = await ok<{ entries: Array<{ path: string }> }>(c, 'memory__list', {});
    expect(listing.entries.map((e) => e.path)).toEqual(['@work/']);
    expect((await ok<{ entries: Array<{ path: string }> }>(full, 'memory__list', {})).entries.map((e) => e.path)).toEqual(['@home/', '@work/', 'private.md']);
  });

  it('shows a granted vault that does not exist yet as an empty folder', async () => {
    const c = await h.connect(h.token({ sub: user(), memories: ['default', 'later'] }));
    expect(await ok(c, 'memory__list', {})).toEqual({
      folder: '',
      truncated: false,
      files: 0,
      entries: [{ type: 'folder', path: '@later/', files: 0, entries: [] }],
    });
  });
});

describe('rate limit', () => {
  it(`answers 429 with Retry-After once a user has made the default ${120} calls in a burst; other users are unaffected`, async () => {
    expect(h.stack.mcp.config.ratePerMinute).toBe(120);
    const token = h.token({ sub: user() });
    let allowed = 0;
    let limited: Response | undefined;
    // The bucket refills at 2 calls a second while this runs, so a few more than 120 may pass.
    for (let i = 0; i < 400 && !limited; i++) {
      const res = await post({ ...ping, id: i }, bearer(token));
      if (res.status === 429) limited = res;
      else {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        allowed++;
      }
    }
    expect(limited).toBeDefined();
    expect(allowed).toBeGreaterThanOrEqual(120);
    const retryAfter = Number(limited?.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
    expect(await limited?.json()).toMatchObject({ error: { data: { code: 'rate_limited', retryAfterSeconds: retryAfter } } });

    expect((await post(ping, bearer(h.token({ sub: user() })))).status).toBe(200);
  });
});
