import { randomBytes } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTables, tableDefinitions } from '../../bin/local-stack/provision';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { describe as describeBucket, gcraTake, LeasingRateLimiter, type RatePolicy, type TokenBuckets } from '../../lambdas/shared/rate-limit/rate-limiter';

const SPEC_ANON: RatePolicy = { name: 'catalog-anon', ratePerSecond: 30, burst: 60 };

describe('GCRA token bucket (pure)', () => {
  it('allows the burst at once, then one request per emission interval', () => {
    let tat: number | undefined;
    const now = 1_000_000;
    const allowed: boolean[] = [];
    for (let i = 0; i < 61; i++) {
      const d = gcraTake(tat, now, SPEC_ANON);
      if (d.allowed) tat = d.tatMs;
      allowed.push(d.allowed);
    }
    expect(allowed.filter(Boolean)).toHaveLength(60);
    expect(allowed[60]).toBe(false);
    expect(describeBucket(tat as number, now, SPEC_ANON, false)).toEqual({ allowed: false, limit: 60, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 });
    expect(describeBucket(now + 1000 / 30, now, SPEC_ANON, true)).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 1, retryAfterSeconds: 0 });
    // Half a second later 15 tokens are back; taking 16 at once is refused, 15 is not.
    expect(gcraTake(tat, now + 500, SPEC_ANON, 16).allowed).toBe(false);
    expect(gcraTake(tat, now + 500, SPEC_ANON, 15).allowed).toBe(true);
  });
});

// Each test stands alone: its own keys (a fresh prefix) and its own clock, started at the real time
// because DynamoDB Local deletes bucket items whose TTL (taken from this clock) has passed. A test
// that ran in another order, alone, or after a slow one sees the same buckets.
describe('on DynamoDB Local', () => {
  const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
  const table = `rl-${randomBytes(4).toString('hex')}`;
  let now = Date.now();
  let prefix = '';
  const clock = () => now;
  const buckets = new DynamoTokenBuckets(ddb, table, clock);
  /** This test's name for a caller key. */
  const k = (key: string) => `${prefix}${key}`;

  beforeAll(async () => {
    await ensureTables(ddb, tableDefinitions({ catalog: `unused-${table}`, rateLimits: table }).slice(1));
  });
  beforeEach(() => {
    now = Date.now();
    prefix = `${randomBytes(4).toString('hex')}:`;
  });
  afterAll(() => ddb.destroy());

  it('exact mode (lease 0): burst, deny with Retry-After, refill', async () => {
    const limiter = new LeasingRateLimiter(buckets, { leaseFraction: 0, clock });
    const results = [];
    for (let i = 0; i < 61; i++) results.push(await limiter.consume(k('ip:1.2.3.4'), SPEC_ANON));
    expect(results.filter((r) => r.allowed)).toHaveLength(60);
    expect(results[0]).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 1, retryAfterSeconds: 0 });
    expect(results[59]).toMatchObject({ allowed: true, remaining: 0 });
    expect(results[60]).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    now += 1000;
    const after = [];
    for (let i = 0; i < 31; i++) after.push(await limiter.consume(k('ip:1.2.3.4'), SPEC_ANON));
    expect(after.filter((r) => r.allowed)).toHaveLength(30);
  });

  it('leasing mode admits exactly the burst with a tenth of the table calls', async () => {
    let calls = 0;
    const counting: TokenBuckets = {
      take: (k, p, n) => {
        calls += 1;
        return buckets.take(k, p, n);
      },
    };
    const limiter = new LeasingRateLimiter(counting, { leaseFraction: 0.1, clock });
    const results = [];
    for (let i = 0; i < 70; i++) results.push(await limiter.consume(k('ip:9.9.9.9'), SPEC_ANON));
    expect(results.filter((r) => r.allowed)).toHaveLength(60);
    expect(results[0].remaining).toBe(59);
    expect(results[59].remaining).toBe(0);
    // 10 leases of 6, one refused lease of 6 and one refused single token; then the denial is remembered.
    expect(calls).toBe(12);
    expect(results[69]).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    // The remembered denial reports the same reset as the table's answer: when the bucket is full, not the retry.
    expect(results[61]).toMatchObject({ allowed: false, resetSeconds: 2 });
    expect(results[69]).toMatchObject({ allowed: false, resetSeconds: 2 });
  });

  it('a remembered denial of a per-minute policy still says the bucket refills over the minute', async () => {
    const perMinute: RatePolicy = { name: 'memory-ip', ratePerSecond: 1, burst: 60 };
    const limiter = new LeasingRateLimiter(buckets, { leaseFraction: 0.1, clock });
    const results = [];
    for (let i = 0; i < 63; i++) results.push(await limiter.consume(k('ip:7.7.7.7'), perMinute));
    const denied = results.filter((r) => !r.allowed);
    expect(denied.length).toBeGreaterThanOrEqual(2);
    for (const d of denied) expect(d).toMatchObject({ remaining: 0, retryAfterSeconds: 1, resetSeconds: 60 });
  });

  it('keeps separate buckets per key and per policy', async () => {
    const limiter = new LeasingRateLimiter(buckets, { leaseFraction: 0, clock });
    const tiny: RatePolicy = { name: 'tiny', ratePerSecond: 1, burst: 2 };
    expect((await limiter.consume(k('a'), tiny)).allowed).toBe(true);
    expect((await limiter.consume(k('a'), tiny)).allowed).toBe(true);
    expect((await limiter.consume(k('a'), tiny)).allowed).toBe(false);
    expect((await limiter.consume(k('b'), tiny)).allowed).toBe(true);
    expect((await limiter.consume(k('a'), { ...tiny, name: 'other' })).allowed).toBe(true);
  });

  it('never over-admits when several instances share one bucket concurrently', async () => {
    const policy: RatePolicy = { name: 'conc', ratePerSecond: 1, burst: 40 };
    const instances = [0, 1, 2, 3].map(() => new LeasingRateLimiter(buckets, { leaseFraction: 0.1, clock }));
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => instances[i % 4].consume(k('shared'), policy)));
    const admitted = results.filter((r) => r.allowed).length;
    expect(admitted).toBeLessThanOrEqual(40);
    expect(admitted).toBeGreaterThanOrEqual(28);
  });

  it('takes a cost all at once or not at all: a refused batch spends nothing', async () => {
    for (const leaseFraction of [0, 0.5]) {
      const limiter = new LeasingRateLimiter(buckets, { leaseFraction, clock });
      const small: RatePolicy = { name: `batch-${leaseFraction}`, ratePerSecond: 0.001, burst: 5 };
      expect(await limiter.consume(k('b'), small, 3)).toMatchObject({ allowed: true, remaining: 2 });
      expect((await limiter.consume(k('b'), small, 3)).allowed).toBe(false);
      // Remembered denials are per caller: a fresh instance asks the table, which still holds the 2 tokens.
      const other = new LeasingRateLimiter(buckets, { leaseFraction: 0, clock });
      expect(await other.consume(k('b'), small, 2)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await other.consume(k('b'), small, 1)).allowed).toBe(false);
    }
  });

  it('reports reset as what callers spent, not the unspent part of a lease (draft-7 reset=1 after one request)', async () => {
    const perMinute: RatePolicy = { name: 'reset-check', ratePerSecond: 1, burst: 60 };
    const limiter = new LeasingRateLimiter(buckets, { leaseFraction: 0.1, clock });
    expect(await limiter.consume(k('r'), perMinute)).toMatchObject({ allowed: true, remaining: 59, resetSeconds: 1 });
    expect(await limiter.consume(k('r'), perMinute)).toMatchObject({ allowed: true, remaining: 58, resetSeconds: 2 });
  });

  it('with a provisional allowance, a new caller never waits for the table, and the limit holds within the documented tolerance', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slow: TokenBuckets = {
      take: async (k, p, n) => {
        calls += 1;
        await gate;
        return buckets.take(k, p, n);
      },
    };
    const policy: RatePolicy = { name: 'prov', ratePerSecond: 0.001, burst: 10 };
    const limiter = new LeasingRateLimiter(slow, { leaseFraction: 0.2, provisionalTokens: 1, clock });
    // The table has not answered: the first request is admitted at once, and describes the bucket as this instance has seen it.
    expect(await limiter.consume(k('new'), policy)).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 1000, retryAfterSeconds: 0 });
    expect(calls).toBe(1);
    const second = limiter.consume(k('new'), policy);
    release();
    // The second waits for the lease the first started, which was charged for the provisional token.
    expect(await second).toMatchObject({ allowed: true, remaining: 8 });

    // Several instances, each admitting one provisional token per caller: at most burst + instances.
    const shared: RatePolicy = { name: 'prov-shared', ratePerSecond: 0.001, burst: 20 };
    const instances = [0, 1, 2, 3].map(() => new LeasingRateLimiter(buckets, { leaseFraction: 0.1, provisionalTokens: 1, clock }));
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => instances[i % 4].consume(k('crowd'), shared)));
    const admitted = results.filter((r) => r.allowed).length;
    expect(admitted).toBeGreaterThanOrEqual(14);
    expect(admitted).toBeLessThanOrEqual(20 + 4);
  });

  it('sets a TTL so idle buckets expire', async () => {
    const limiter = new LeasingRateLimiter(buckets, { leaseFraction: 0, clock });
    const tiny: RatePolicy = { name: 'tiny', ratePerSecond: 1, burst: 2 };
    expect((await limiter.consume(k('b'), tiny)).allowed).toBe(true);
    const out = await ddb.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `tiny#${k('b')}` } } }));
    const exp = Number(out.Item?.expiresAt?.N);
    expect(exp).toBeGreaterThan(now / 1000);
    expect(exp).toBeLessThan(now / 1000 + 120);
  });
});
