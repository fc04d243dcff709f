import { request } from 'node:http';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';
import { startTestCatalog, type TestCatalog } from '../support/catalog-harness';
import { loadFixture } from './catalog-fixture';

/** The spec's anonymous tier (30 rps, burst 60, per IP) through the HTTP server, with its defaults. */
const SPEC = { anonymous: { rate: 30, burst: 60 } };
let a: TestCatalog;
let b: TestCatalog;

// Both instances' limiters read one clock held still (started at the real time: DynamoDB Local
// deletes bucket items past their TTL). With the wall clock, the bucket refills 30 tokens a second,
// and on a loaded machine the requests no longer outpace the refill: the burst is never exhausted.
const frozen = Date.now();
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const frozenLimiter = (c: TestCatalog) => {
  const clock = () => frozen;
  return new LeasingRateLimiter(new DynamoTokenBuckets(ddb, c.config.rateLimitTable, clock), { ...c.config.rateLimiter, clock });
};

beforeAll(async () => {
  a = await startTestCatalog({ config: SPEC });
  await loadFixture(a);
  // A second "Lambda instance": its own server and handler, the same rate-limit table.
  b = await startTestCatalog({
    config: { ...SPEC, rateLimitTable: a.config.rateLimitTable, catalogTable: a.config.catalogTable, iconsBucket: a.config.iconsBucket },
  });
  a.deps.limiter = frozenLimiter(a);
  b.deps.limiter = frozenLimiter(b);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  ddb.destroy();
});

it('sends X-RateLimit-* on every /api response, then 429 RATE_LIMITED with Retry-After past the burst, across instances; icons stay exempt', async () => {
  const first = await a.get('/api/categories');
  expect(first.headers.get('x-ratelimit-limit')).toBe('60');
  expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
  expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  const notFound = await a.get('/api/nope');
  expect(notFound.headers.get('x-ratelimit-limit')).toBe('60');

  // Alternate between the two instances until the shared bucket refuses (the clock stands still).
  const statuses: number[] = [];
  let limitedRes: Response | undefined;
  for (let i = 0; i < 400 && !limitedRes; i++) {
    const res = await (i % 2 ? a : b).get('/api/facets');
    statuses.push(res.status);
    if (res.status === 429) limitedRes = res;
    else await res.arrayBuffer();
  }
  const ok = statuses.filter((s) => s === 200).length;
  expect(limitedRes).toBeDefined();
  // 58 tokens were left and nothing refills; an instance may hold one lease (6) unspent, and each may
  // admit its one provisional token (RATE_PROVISIONAL_TOKENS) before the table answers.
  expect(ok).toBeGreaterThanOrEqual(58 - 6);
  expect(ok).toBeLessThanOrEqual(58 + 2);
  const limited = [limitedRes as Response];
  const r = limited[0];
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(r.headers.get('access-control-allow-origin')).toBe('*');
  expect(await r.json()).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });

  const icon = await a.get('/api/icons/alpha-db');
  expect(icon.status).toBe(200);
  expect(icon.headers.get('x-ratelimit-limit')).toBeNull();
});

/** A request from loopback address `ip` (the IP tier keys on the connection's source; all of 127.0.0.0/8 reaches the server). */
function from(ip: string, base: string, method: string, path: string, body?: string): Promise<{ status: number; retryAfter?: string; text: string }> {
  const url = new URL(base);
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers, localAddress: ip }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

it('/api/mcp spends from the bucket the JSON API spends from, across instances: a caller cannot double its limit by mixing the two or two instances', async () => {
  const ip = '127.0.0.21';
  // One token per JSON-RPC request of a batch.
  const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })));
  // 60 tokens spent four ways: MCP on a, JSON on b, MCP on b, JSON on a.
  expect((await from(ip, a.url, 'POST', '/api/mcp', batch(15))).status).toBe(200);
  for (let i = 0; i < 15; i++) expect((await from(ip, b.url, 'GET', '/api/categories')).status).toBe(200);
  expect((await from(ip, b.url, 'POST', '/api/mcp', batch(15))).status).toBe(200);
  // Then JSON from both until refused: 45 spent, the rest of the 60 less what the two instances hold
  // unspent (a lease of 6 each at most) and plus what each admits on its provisional token.
  let ok = 0;
  for (let i = 0; i < 40; i++) {
    const status = (await from(ip, i % 2 ? a.url : b.url, 'GET', '/api/categories')).status;
    if (status === 429) break;
    expect(status).toBe(200);
    ok++;
  }
  expect(45 + ok).toBeGreaterThanOrEqual(60 - 12);
  expect(45 + ok).toBeLessThanOrEqual(60 + 2);
  // The bucket is empty whichever instance and face asks next (past the slack of the two leases).
  const mcp = await from(ip, a.url, 'POST', '/api/mcp', batch(14));
  expect(mcp.status).toBe(429);
  expect(mcp.retryAfter).toMatch(/^\d+$/);
  expect(JSON.parse(mcp.text)).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'rate_limited' } } });
  expect((await from(ip, b.url, 'POST', '/api/mcp', batch(14))).status).toBe(429);
});
