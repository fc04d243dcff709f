import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter, type RateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { freePort } from '../../bin/local-stack/backends';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * The rate limit as the handlers apply it, over HTTP on the local stack, at the spec's limits
 * (catalog: burst 60 per client; /v1: 60 per minute per client):
 *
 * - Behind CloudFront the client is the viewer address the distribution forwards, trusted only with
 *   the secret origin header (ORIGIN_VERIFY_SECRET set): each viewer has its own bucket with it, and
 *   without it (or with a wrong one) a forged viewer address buys nothing: the origin refuses the
 *   request (403) before the limiter, so it is neither served nor counted against anyone.
 * - With the limiter's table unreachable, requests are served (fail open), not failed.
 *
 * The limiters read a clock held still, so counts are exact whatever the machine's load (a refill
 * between two requests would otherwise admit one more).
 */
jest.setTimeout(180_000);
const SECRET = 'origin-secret-for-tests';
let s: MemoryStack;
const frozen = Date.now();

/** The stack's own limiter, on its own table, reading the frozen clock. */
function frozenLimiter(table: string, endpoint?: string, provisionalTokens?: number): RateLimiter {
  const ddb = endpoint ? dynamoClient({ region: 'us-east-1', dynamoEndpoint: endpoint }) : s.stack.memory.dynamodb;
  const clock = () => frozen;
  const options = { ...s.stack.memoryApi.config.rateLimiter, clock, ...(provisionalTokens !== undefined && { provisionalTokens }) };
  return new LeasingRateLimiter(new DynamoTokenBuckets(ddb, table, clock), options);
}

beforeAll(async () => {
  for (const k of ['MEMORY_RATE_LIMIT', 'MEMORY_RATE_WINDOW_SECONDS', 'RATE_ANON_RPS', 'RATE_ANON_BURST']) delete process.env[k];
  s = await startMemoryStack({ ORIGIN_VERIFY_SECRET: SECRET });
  s.stack.catalog.limiter = frozenLimiter(s.stack.catalog.config.rateLimitTable);
  s.stack.memoryApi.limiter = frozenLimiter(s.stack.memoryApi.config.rateLimitTable);
}, 180_000);
afterAll(() => s?.close());

const viewer = (address: string, secret = SECRET) => ({ 'x-origin-verify': secret, 'x-viewer-address': address });

/** Requests until the first 429 (at most 200); how many were served before it. */
async function servedUntilLimited(send: (i: number) => Promise<Response>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const res = await send(i);
    await res.arrayBuffer();
    if (res.status === 429) return i;
    if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
  }
  throw new Error('never limited');
}

describe('viewer address trusted with the origin secret, through the handlers', () => {
  const tolerance = () => s.stack.memoryApi.config.rateLimiter.provisionalTokens ?? 0;

  it('catalog: each viewer has its own bucket of 60; a forged viewer address without the secret, or with a wrong one, is refused and spends nothing', async () => {
    expect(s.stack.catalog.config.anonymous.burst).toBe(60);
    const a = await servedUntilLimited(() => s.fetch('/api/categories', { headers: viewer('203.0.113.10') }));
    expect(a).toBeGreaterThanOrEqual(60);
    expect(a).toBeLessThanOrEqual(60 + tolerance());
    // Another viewer behind the same CloudFront connection is a caller of its own.
    const b = await s.fetch('/api/categories', { headers: viewer('203.0.113.11') });
    expect(b.status).toBe(200);
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(58);
    // No secret, or a guessed one: the origin answers only CloudFront, so a forged viewer address is
    // refused outright, and spends nothing from anyone's bucket.
    for (let i = 0; i < 10; i++) {
      const res = await s.fetch('/api/categories', { headers: i % 2 ? { 'x-viewer-address': `198.51.100.${i}` } : viewer(`198.51.100.${i}`, 'guess') });
      await res.arrayBuffer();
      expect(res.status).toBe(403);
    }
    expect(Number((await s.fetch('/api/categories', { headers: viewer('203.0.113.11') })).headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(57);
    // The trusted viewer that was limited is still limited.
    expect((await s.fetch('/api/categories', { headers: viewer('203.0.113.10') })).status).toBe(429);
  });

  it('/v1: the same keys, 60 requests a minute each', async () => {
    const auth = s.bearer('viewer-test');
    const a = await servedUntilLimited(() => s.fetch('/v1/memories', { headers: { ...auth, ...viewer('203.0.113.20') } }));
    expect(a).toBeGreaterThanOrEqual(60);
    expect(a).toBeLessThanOrEqual(60 + tolerance());
    expect((await s.fetch('/v1/memories', { headers: { ...auth, ...viewer('203.0.113.21') } })).status).toBe(200);
    expect((await s.fetch('/v1/memories', { headers: { ...auth, ...viewer('198.51.100.1', 'guess') } })).status).toBe(403);
    expect((await s.fetch('/v1/memories', { headers: { ...auth, 'x-viewer-address': '198.51.100.2' } })).status).toBe(403);
  });
});

describe('fail open: the rate-limit table unreachable', () => {
  it('serves catalog, /v1 and MCP requests instead of failing them, and limits again once the table is back', async () => {
    const saved = { catalog: s.stack.catalog.limiter, memory: s.stack.memoryApi.limiter, mcp: s.stack.mcp.limiter };
    const dead = `http://127.0.0.1:${await freePort()}`;
    // No provisional tokens: every decision waits for the table, so its failure reaches the
    // pipeline (with them, a new caller is admitted before the table answers anyway).
    s.stack.catalog.limiter = frozenLimiter('rate-limits', dead, 0);
    s.stack.memoryApi.limiter = frozenLimiter('rate-limits', dead, 0);
    s.stack.mcp.limiter = frozenLimiter('rate-limits', dead, 0);
    try {
      for (let i = 0; i < 3; i++) {
        const list = await s.fetch('/api/mcps?limit=1', { headers: viewer('203.0.113.30') });
        expect(list.status).toBe(200);
        expect(((await list.json()) as { success: boolean }).success).toBe(true);
        const v1 = await s.fetch('/v1/memories', { headers: { ...s.bearer('fail-open'), ...viewer('203.0.113.31') } });
        expect(v1.status).toBe(200);
        expect(await v1.json()).toEqual({ memories: [] });
      }
      const mcp = await s.fetch('/mcp', {
        method: 'POST',
        headers: { ...s.bearer('fail-open'), ...viewer('203.0.113.33'), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(mcp.status).toBe(200);
      expect(((await mcp.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(6);
    } finally {
      Object.assign(s.stack.catalog, { limiter: saved.catalog });
      Object.assign(s.stack.memoryApi, { limiter: saved.memory });
      Object.assign(s.stack.mcp, { limiter: saved.mcp });
    }
    // The table back: limits hold again.
    const again = await servedUntilLimited(() => s.fetch('/api/categories', { headers: viewer('203.0.113.32') }));
    expect(again).toBeGreaterThanOrEqual(60);
    expect(again).toBeLessThanOrEqual(60 + (s.stack.memoryApi.config.rateLimiter.provisionalTokens ?? 0));
  });
});
