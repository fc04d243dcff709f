import { randomBytes } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTables, tableDefinitions } from '../../bin/local-stack/provision';
import { dynamoClient } from '../../lambdas/shared/aws/clients';
import { DynamoTokenBuckets } from '../../lambdas/shared/rate-limit/dynamo-rate-limiter';
import { describe as describeBucket, gcraTake, LeasingRateLimiter, type RatePolicy, type TokenBuckets } from '../../lambdas/shared/rate-limit/rate-limiter';

const SPEC_ANON: RatePolicy = { name: 'catalog-anon', ratePerSecond: 30, burst: 60 };

/**
 * Buckets whose takes wait until `release()` (a table that has not answered yet), counting the
 * takes started and those still unanswered (reported as the backlog).
 */
function gated(inner: TokenBuckets): {
  slow: TokenBuckets;
  release: () => void;
  calls: () => number;
  outstanding: () => number;
  /** Resolves once every take made so far has been answered. */
  drained: () => Promise<void>;
} {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  let outstanding = 0;
  const idle: Array<() => void> = [];
  const slow: TokenBuckets = {
    take: async (key, p, n) => {
      calls++;
      outstanding++;
      try {
        await gate;
        return await inner.take(key, p, n);
      } finally {
        outstanding--;
        if (outstanding === 0) for (const r of idle.splice(0)) r();
      }
    },
    backlog: () => outstanding,
  };
  const drained = () => (outstanding === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r)));
  return { slow, release: () => release(), calls: () => calls, outstanding: () => outstanding, drained };
}

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
    const { slow, release, calls } = gated(buckets);
    const policy: RatePolicy = { name: 'prov', ratePerSecond: 0.001, burst: 10 };
    const limiter = new LeasingRateLimiter(slow, { leaseFraction: 0.2, provisionalTokens: 1, clock });
    // The table has not answered: the first request is admitted at once, and describes the bucket as this instance has seen it.
    expect(await limiter.consume(k('new'), policy)).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 1000, retryAfterSeconds: 0 });
    // Nothing of the take ran on the admitted request's path: it starts once this turn of the event loop is over.
    expect(calls()).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(calls()).toBe(1);
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

  it('past its backlog bound (RATE_MAX_BACKLOG), a new caller waits for its own take: unanswered takes never pile up without bound', async () => {
    const { slow, release, outstanding, drained } = gated(buckets);
    const policy: RatePolicy = { name: 'backlog', ratePerSecond: 30, burst: 60 };
    const limiter = new LeasingRateLimiter(slow, { leaseFraction: 0.1, provisionalTokens: 1, maxBacklog: 3, clock });
    // Three new callers while the table is slow: admitted at once, their takes outstanding.
    for (const c of ['a', 'b', 'c']) expect((await limiter.consume(k(`bl-${c}`), policy)).allowed).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(outstanding()).toBe(3);
    // The fourth finds three takes unanswered: it waits for its own, as with no allowance.
    let answered = false;
    const fourth = limiter.consume(k('bl-d'), policy).then((d) => {
      answered = true;
      return d;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    expect(outstanding()).toBe(4);
    release();
    expect(await fourth).toMatchObject({ allowed: true, remaining: 59 });
    // The table caught up: the next new caller is admitted without waiting again.
    await drained();
    expect(outstanding()).toBe(0);
    expect((await limiter.consume(k('bl-e'), policy)).allowed).toBe(true);
  });

  it('the backlog bound counts takes admitted in this turn and not started yet: the fourth of four new callers at once waits', async () => {
    const { slow, release } = gated(buckets);
    const policy: RatePolicy = { name: 'backlog-turn', ratePerSecond: 30, burst: 60 };
    const limiter = new LeasingRateLimiter(slow, { leaseFraction: 0.1, provisionalTokens: 1, maxBacklog: 3, clock });
    const answered: string[] = [];
    const all = ['a', 'b', 'c', 'd'].map((c) => limiter.consume(k(`bt-${c}`), policy).then(() => answered.push(c)));
    // Wait for the three admissions themselves (a loaded machine can stall past any fixed sleep),
    // then give the fourth the same time again: it must still be waiting for its take.
    const started = Date.now();
    while (answered.length < 3 && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 5));
    const admittedAfter = Date.now() - started;
    await new Promise((r) => setTimeout(r, Math.max(50, admittedAfter)));
    expect(answered).toEqual(['a', 'b', 'c']);
    release();
    await Promise.all(all);
    expect(answered).toEqual(['a', 'b', 'c', 'd']);
  });

  it('the DynamoDB buckets report their unanswered takes as the backlog, batched or not', async () => {
    const policy: RatePolicy = { name: 'backlog-count', ratePerSecond: 30, burst: 60 };
    for (const batch of [false, true]) {
      const b = new DynamoTokenBuckets(ddb, table, clock, { batch });
      const takes = Array.from({ length: 30 }, (_, i) => b.take(k(`bc-${batch}-${i}`), policy, 6));
      expect(b.backlog()).toBe(30);
      expect((await Promise.all(takes)).every((t) => t.granted)).toBe(true);
      expect(b.backlog()).toBe(0);
    }
  });

  it('batched takes (RATE_BATCH_TAKES) decide exactly as one call per take, in a few calls for many new callers', async () => {
    const sent: string[] = [];
    const counting = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
    counting.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize' },
    );
    try {
      const batched = new DynamoTokenBuckets(counting, table, clock, { batch: true });
      const policy: RatePolicy = { name: 'batch-new', ratePerSecond: 30, burst: 60 };
      // 100 callers seen for the first time, at once: all granted, every bucket written as one take would.
      const fresh = await Promise.all(Array.from({ length: 100 }, (_, i) => batched.take(k(`new-${i}`), policy, 6)));
      expect(fresh.every((t) => t.granted && t.tatMs === now + 6 * (1000 / 30) && t.nowMs === now)).toBe(true);
      const stored = await ddb.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `${k('new-7')}` } } }));
      expect(Number(stored.Item?.tat?.N)).toBeCloseTo(now + 200, 6);
      expect(Number(stored.Item?.expiresAt?.N)).toBe(Math.ceil((now + 6 * (1000 / 30)) / 1000) + 60);
      expect(sent.filter((c) => c === 'UpdateItemCommand')).toHaveLength(0);
      expect(sent.filter((c) => c === 'BatchExecuteStatementCommand').length).toBeLessThanOrEqual(8);

      // Buckets in every state, taken at once by the batch and, on twins, one call each: the same answers.
      const exact = new DynamoTokenBuckets(ddb, table, clock);
      const cases: Array<[string, number, number]> = [
        ['partly-used', 10, 6], // a bucket in use: the batch's "full" statement fails, the one-item path decides
        ['nearly-empty', 57, 6], // 3 tokens left: refused
        ['exactly-left', 54, 6], // 6 left: granted
        ['absent', 0, 6],
        ['whole-burst', 0, 60],
        ['over-burst', 0, 61], // more than the burst: never granted
      ];
      for (const [name, used] of cases) {
        for (const twin of ['a', 'b']) if (used > 0) await exact.take(k(`${name}-${twin}`), policy, used);
      }
      const viaBatch = await Promise.all(cases.map(([name, , n]) => batched.take(k(`${name}-a`), policy, n)));
      const oneByOne = [];
      for (const [name, , n] of cases) oneByOne.push(await exact.take(k(`${name}-b`), policy, n));
      expect(viaBatch).toEqual(oneByOne);
      expect(viaBatch.map((t) => t.granted)).toEqual([true, false, true, true, true, false]);

      // A caller this instance has seen, whose bucket is full again: the batch's UPDATE branch.
      now += 10_000;
      const again = await Promise.all([batched.take(k('new-1'), policy, 1), batched.take(k('new-2'), policy, 1)]);
      expect(again.every((t) => t.granted && t.tatMs === now + 1000 / 30)).toBe(true);
    } finally {
      counting.destroy();
    }
  });

  it('with batched takes across several instances, the limit holds within one provisional token per instance', async () => {
    const shared: RatePolicy = { name: 'batch-shared', ratePerSecond: 0.001, burst: 20 };
    const instances = [0, 1, 2, 3].map(
      () => new LeasingRateLimiter(new DynamoTokenBuckets(ddb, table, clock, { batch: true }), { leaseFraction: 0.1, provisionalTokens: 1, clock }),
    );
    // One flooding caller among many new ones, every instance at once.
    const requests = Array.from({ length: 200 }, (_, i) =>
      i % 2 ? instances[i % 4].consume(k('crowd'), shared) : instances[i % 4].consume(k(`one-${i}`), shared),
    );
    const results = await Promise.all(requests);
    const crowd = results.filter((_, i) => i % 2 === 1);
    const admitted = crowd.filter((r) => r.allowed).length;
    expect(admitted).toBeGreaterThanOrEqual(14);
    expect(admitted).toBeLessThanOrEqual(20 + 4);
    expect(results.filter((_, i) => i % 2 === 0).every((r) => r.allowed && r.remaining === 19)).toBe(true);
    // The denials are remembered: a refused instance answers from memory without the table.
    const denied = crowd.find((r) => !r.allowed);
    expect(denied?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
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
