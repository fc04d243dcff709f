/**
 * "Origins answer only CloudFront": with an origin secret configured (in AWS, ORIGIN_VERIFY_SECRET_ARN;
 * here the literal ORIGIN_VERIFY_SECRET the local stack reads), every API refuses a request that
 * lacks CloudFront's `x-origin-verify` header with 403 in its own envelope, before routing, CORS,
 * auth or the limiter; with the header, each answers as usual. Run over HTTP against the whole
 * local stack (npm start's code), as CloudFront would reach the origins.
 */
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';

const SECRET = 'origin-verify-value-0123456789abcdefghijklmnop';
const VIA_CLOUDFRONT = { 'x-origin-verify': SECRET };

let scratch: ScratchStack;
let url: string;

beforeAll(async () => {
  scratch = await startScratchStack('origin-guard', { ORIGIN_VERIFY_SECRET: SECRET }, { host: '127.0.0.1' });
  url = scratch.stack.url;
}, 120_000);

afterAll(async () => {
  await scratch?.close();
});

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${url}${path}`, { redirect: 'manual', ...init });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

const MCP_INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('a request without the origin header is 403 in the API envelope of its path', () => {
  it('catalog: FORBIDDEN in { success: false, error }', async () => {
    const r = await call('/api/mcps?limit=1');
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    // A CORS preflight and an unknown path are refused the same way: nothing is routed first.
    expect((await call('/api/mcps', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })).status).toBe(403);
    expect((await call('/api/nowhere')).status).toBe(403);
  });

  it('favorites: FORBIDDEN before the bearer is even looked at', async () => {
    const r = await call('/api/favorites', { headers: { authorization: 'Bearer not-a-token' } });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
  });

  it('/v1: FORBIDDEN in { error: { code, message } }', async () => {
    const r = await call('/v1/memories');
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.any(String) } });
  });

  it('OAuth front: access_denied (RFC 6749 error JSON)', async () => {
    const r = await call('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ error: 'access_denied' });
    expect((await call('/.well-known/oauth-authorization-server')).status).toBe(403);
  });

  it('/mcp: a JSON-RPC error, before the token and the Origin screen', async () => {
    const r = await call('/mcp', { method: 'POST', headers: MCP_HEADERS, body: MCP_INIT });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it("site pages: the site's 403 page (FORBIDDEN), the git remote: 403 before its credentials", async () => {
    for (const path of ['/', '/servers', '/search?q=time', '/sitemap.xml']) {
      const r = await call(path);
      expect(r.status).toBe(403);
      expect(r.json).toEqual(expect.stringContaining('<code data-error-code>FORBIDDEN</code>'));
    }
    const git = await call('/v1/memories/default.git/info/refs?service=git-upload-pack', { headers: { authorization: 'Basic eDp5' } });
    expect(git.status).toBe(403);
  });

  it('a wrong value, a prefix of the secret or an empty header is no better than none', async () => {
    for (const value of ['guess', SECRET.slice(0, -1), `${SECRET}x`, '']) {
      expect((await call('/api/mcps?limit=1', { headers: { 'x-origin-verify': value } })).status).toBe(403);
    }
  });
});

describe('with the header, every API answers as it does without a secret configured', () => {
  it('catalog 200, favorites 401 without a token, /v1 401, OAuth metadata 200, /mcp 401 with its challenge', async () => {
    expect((await call('/api/mcps?limit=1', { headers: VIA_CLOUDFRONT })).status).toBe(200);
    expect((await call('/api/favorites', { headers: VIA_CLOUDFRONT })).json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect((await call('/v1/memories', { headers: VIA_CLOUDFRONT })).json).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect((await call('/.well-known/oauth-authorization-server', { headers: VIA_CLOUDFRONT })).status).toBe(200);
    const mcp = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...VIA_CLOUDFRONT }, body: MCP_INIT });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    expect((await call('/servers', { headers: VIA_CLOUDFRONT })).status).toBe(200);
    expect((await call('/v1/memories/default.git/info/refs?service=git-upload-pack', { headers: VIA_CLOUDFRONT })).status).toBe(401);
  });

  it('a signed-in caller is served end to end (a token from the local issuer, /v1 and /mcp)', async () => {
    const token = scratch.stack.issuer.signAccessToken({
      sub: 'origin-user',
      scope: 'memory:read memory:write',
      ttlSeconds: 600,
      audience: scratch.stack.auth.audience,
    });
    const auth = { authorization: `Bearer ${token}`, ...VIA_CLOUDFRONT };
    const created = await call('/v1/memories', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"behind-cdn"}' });
    expect(created.status).toBe(201);
    const mcp = await call('/mcp', { method: 'POST', headers: { ...MCP_HEADERS, ...auth }, body: MCP_INIT });
    expect(mcp.status).toBe(200);
    expect(mcp.json).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
