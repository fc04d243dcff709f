import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';
import { startFavoritesStack, type FavoritesStack } from '../support/auth-harness';

/**
 * `/api/mcp` at the HTTP level, on the catalog function with its bearer tier on (the spec's tiers:
 * 30 rps burst 60 per IP, 100 rps burst 200 per user): the catalog's limits, shared with the JSON
 * API and raised by a valid bearer; the verbs, the protocol version, the body cap, CORS.
 */
let s: FavoritesStack;
const frozen = Date.now();
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });

beforeAll(async () => {
  s = await startFavoritesStack({ slugs: ['one'] });
  // One clock held still (as in rate-limit-http.test.ts): nothing refills while the test spends.
  const clock = () => frozen;
  s.catalogDeps.limiter = new LeasingRateLimiter(new DynamoTokenBuckets(ddb, s.config.rateLimitTable, clock), { ...s.config.rateLimiter, clock });
}, 60000);
afterAll(async () => {
  await s?.close();
  ddb.destroy();
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json(): unknown;
}

/**
 * A request from loopback address `ip` (the local server keys the IP tier on the connection's
 * source, and all of 127.0.0.0/8 reaches it), so each test spends from a bucket of its own.
 */
function send(ip: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers, localAddress: ip }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST of `n` tools/list requests (a batch when n > 1: each request takes a token). */
function post(ip: string, n: number, headers: Record<string, string> = {}): Promise<Answer> {
  const messages = Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }));
  return send(ip, 'POST', '/api/mcp', { ...HEADERS, ...headers }, JSON.stringify(n === 1 ? messages[0] : messages));
}

describe('rate limits: the catalog tiers', () => {
  it('spends from the caller IP bucket the JSON API spends from, one token per JSON-RPC request, then 429 with Retry-After in the JSON-RPC shape', async () => {
    const ip = '127.0.0.7';
    // 40 of the 60 tokens on the JSON API, then 15 through one MCP batch: 5 are left (give or take a lease).
    for (let i = 0; i < 40; i++) expect((await send(ip, 'GET', '/api/categories')).status).toBe(200);
    const batch = await post(ip, 15);
    expect(batch.status).toBe(200);
    expect(batch.json() as unknown[]).toHaveLength(15);
    const refused = await post(ip, 12);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/^Too Many Requests/), data: { code: 'rate_limited', retryAfterSeconds: expect.any(Number) } },
      id: null,
    });
    // Another IP has its own bucket.
    expect((await post('127.0.0.8', 1)).status).toBe(200);
  });

  it('a valid bearer token raises the limit to the per-user tier; a bad one is anonymous, never a 401', async () => {
    const ip = '127.0.0.9';
    expect((await post(ip, 61)).status).toBe(429);
    const bearer = s.bearer('mcp-tier-user');
    // 150 requests on one IP, past its 60 (the SDK takes at most 100 in a batch).
    for (const n of [100, 50]) {
      const raised = await post(ip, n, { authorization: bearer });
      expect(raised.status).toBe(200);
      expect(raised.json() as unknown[]).toHaveLength(n);
    }
    const bad = await post(ip, 1, { authorization: 'Bearer not-a-token' });
    // The IP's tier, which refused the batch of 61 (a denial holds until its Retry-After): not a 401.
    expect(bad.status).toBe(429);
    // And the SDK client connects with a bearer as it would without one.
    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/api/mcp`), { requestInit: { headers: { authorization: bearer } } }));
    expect((await client.listTools()).tools).toHaveLength(4);
    await client.close();
  });
});

describe('HTTP', () => {
  it('answers GET and DELETE 405 with Allow: POST, in the JSON-RPC error shape', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await send('127.0.0.10', method, '/api/mcp');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect((res.json() as { error: { message: string } }).error.message).toMatch(/stateless and answers POST only/);
    }
  });

  it('answers CORS preflights and every answer for any origin, issues no session', async () => {
    const pre = await s.fetch('/api/mcp', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'mcp-protocol-version' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/MCP-Protocol-Version/);
    const res = await post('127.0.0.11', 1, { origin: 'https://app.example' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('refuses an unsupported MCP-Protocol-Version (400), malformed JSON (400, -32700) and a body over 64 KiB (413)', async () => {
    const version = await post('127.0.0.12', 1, { 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect((version.json() as { error: { message: string } }).error.message).toMatch(/unsupported MCP-Protocol-Version "1999-01-01"/);
    const malformed = await s.fetch('/api/mcp', { method: 'POST', headers: HEADERS, body: '{"jsonrpc":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const big = await s.fetch('/api/mcp', {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_servers', arguments: { query: 'x'.repeat(70000) } } }),
    });
    expect(big.status).toBe(413);
  });

  it('leaves the JSON API where it was: /api/mcps and a path under /api/mcp are the catalog envelope', async () => {
    expect(((await (await s.fetch('/api/mcps')).json()) as { success: boolean }).success).toBe(true);
    const under = await s.fetch('/api/mcp/tools');
    expect(under.status).toBe(404);
    expect(await under.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});
