import { ErrorSchema } from '../../lambdas/memory-api/response-schemas';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { LeasingRateLimiter } from '../../lambdas/shared/rate-limit/rate-limiter';
import { startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * The `/v1` rate limit at its default (spec 2: 60 requests per minute per IP) through the shared
 * DynamoDB limiter, over HTTP: IETF draft-7 headers on every response, then 429 RATE_LIMITED with
 * Retry-After. The limiter (the stack's own, on its table) reads a clock the test holds still: the
 * bucket refills one request per second of wall time, which a loaded machine spends between two
 * requests, and then a request meant to be refused passes. Frozen, the counts are exact.
 */
let s: MemoryStack;

beforeAll(async () => {
  delete process.env.MEMORY_RATE_LIMIT;
  delete process.env.MEMORY_RATE_WINDOW_SECONDS;
  s = await startMemoryStack();
  const deps = s.stack.memoryApi;
  // Held at the real start time: DynamoDB Local expires bucket items by their TTL, taken from this clock.
  const frozen = Date.now();
  const clock = () => frozen;
  deps.limiter = new LeasingRateLimiter(new DynamoTokenBuckets(s.stack.memory.dynamodb, deps.config.rateLimitTable, clock), {
    ...deps.config.rateLimiter,
    clock,
  });
}, 120000);
afterAll(() => s?.close());

it('allows 60 requests a minute per IP with draft-7 headers, then answers 429 with Retry-After on every path', async () => {
  const headers = s.bearer('limited');
  const first = await s.fetch('/v1/memories', { headers });
  expect(first.status).toBe(200);
  expect(first.headers.get('ratelimit')).toMatch(/^limit=60, remaining=59, reset=\d+$/);
  expect(first.headers.get('ratelimit-policy')).toBe('60;w=60');
  expect(first.headers.get('x-ratelimit-limit')).toBeNull();

  let allowed = 1;
  let limited: Response | undefined;
  const remaining: number[] = [];
  while (!limited && allowed < 200) {
    // Unknown paths and unauthenticated requests count against the same per-IP bucket.
    const res = await s.fetch(allowed % 3 === 0 ? '/v1/nowhere' : '/v1/memories', { headers: allowed % 5 === 0 ? {} : headers });
    expect(res.headers.get('ratelimit-policy')).toBe('60;w=60');
    if (res.status === 429) limited = res;
    else {
      allowed++;
      remaining.push(Number(/remaining=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]));
      await res.arrayBuffer();
    }
  }
  // The spec's 60, plus the provisional tokens an instance may admit before its first lease comes back.
  expect(allowed).toBeGreaterThanOrEqual(60);
  expect(allowed).toBeLessThanOrEqual(60 + (s.stack.memoryApi.config.rateLimiter.provisionalTokens ?? 0));
  expect(Math.min(...remaining)).toBe(0);
  if (!limited) throw new Error('never limited');
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(limited.headers.get('ratelimit')).toMatch(/^limit=60, remaining=0, reset=\d+$/);
  expect(ErrorSchema.parse(await limited.json()).error.code).toBe('RATE_LIMITED');

  // While limited: a write, a request without a token, a spoofed viewer address and the alias are all 429.
  for (const res of [
    await s.fetch('/v1/memories', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"x"}' }),
    await s.fetch('/v1/memories'),
    await s.fetch('/v1/memories', { headers: { ...headers, 'x-viewer-address': '203.0.113.9' } }),
    await s.fetch('/v1/vaults', { headers }),
  ]) {
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(ErrorSchema.parse(await res.json()).error.code).toBe('RATE_LIMITED');
  }
  const alias = await s.fetch('/v1/vaults', { headers });
  expect(alias.headers.get('deprecation')).toBe('true');
  expect(alias.headers.get('sunset')).toBe('Sun, 08 Feb 2027 00:00:00 GMT');

  // Preflights are not counted (a browser sends one per request shape, without credentials).
  const pre = await s.fetch('/v1/memories', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  expect(pre.status).toBe(204);
});
