/**
 * A token bucket shared by every Lambda instance. The port is small so the catalog (per second,
 * X-RateLimit-*), the memory REST API (per minute, IETF draft-7 headers) and the MCP endpoint can
 * all use the one DynamoDB implementation with their own policies.
 */
export interface RatePolicy {
  /** Policy name, part of the bucket key (different policies never share a bucket). */
  name: string;
  /** Tokens added per second. */
  ratePerSecond: number;
  /** Bucket size (the burst). */
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The bucket size (X-RateLimit-Limit). */
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed (only meaningful when denied). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  consume(key: string, policy: RatePolicy): Promise<RateDecision>;
}

/**
 * GCRA (the generic cell rate algorithm) is a token bucket stored as one number: the theoretical
 * arrival time (TAT) at which the bucket would be full again. With emission interval T = 1/rate and
 * burst B, taking n tokens at `now` is allowed when max(TAT, now) + n·T - now <= B·T, and then
 * TAT' = max(TAT, now) + n·T.
 */
export function gcraTake(tatMs: number | undefined, nowMs: number, policy: RatePolicy, n = 1): { allowed: boolean; tatMs: number } {
  const t = 1000 / policy.ratePerSecond;
  const tat = tatMs === undefined ? nowMs : Math.max(tatMs, nowMs);
  const allowed = tat + n * t - nowMs <= policy.burst * t + 1e-6;
  return { allowed, tatMs: allowed ? tat + n * t : tat };
}

/** The headers' view of a bucket whose TAT is `tatMs`. */
export function describe(tatMs: number, nowMs: number, policy: RatePolicy, allowed: boolean): RateDecision {
  const t = 1000 / policy.ratePerSecond;
  const backlog = Math.max(0, tatMs - nowMs);
  const remaining = Math.max(0, Math.floor((policy.burst * t - backlog) / t + 1e-9));
  const resetSeconds = Math.ceil(backlog / 1000 - 1e-9);
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((backlog - (policy.burst - 1) * t) / 1000 - 1e-9));
  return { allowed, limit: policy.burst, remaining, resetSeconds, retryAfterSeconds };
}

/** The shared store of buckets: takes `n` tokens at once, or none. */
export interface TokenBuckets {
  take(key: string, policy: RatePolicy, n: number): Promise<{ granted: boolean; tatMs: number; nowMs: number }>;
}

interface Lease {
  tokens: number;
  /** The bucket's TAT as of the lease (the leased tokens already counted in it). */
  tatMs: number;
  expiresMs: number;
}

/**
 * The limiter every API uses. A request costs a DynamoDB round trip only now and then: an instance
 * takes a small lease of tokens (a tenth of the burst by default) from the shared bucket in one
 * conditional write and spends it locally, and remembers a denial until its Retry-After, so a
 * flood costs the table nothing. Leased tokens are consumed for everyone, so the limit holds across
 * all instances; the cost is that an instance's unspent lease is lost when it expires (at most one
 * lease per instance and caller), which can only make the limit stricter, never looser. With a lease
 * fraction of 0 every request goes to the table.
 */
export class LeasingRateLimiter implements RateLimiter {
  private readonly leases = new Map<string, Lease>();
  /** A remembered denial: when a retry can succeed, and when the bucket is full again (the `reset`). */
  private readonly denied = new Map<string, { retryAt: number; fullAt: number }>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly buckets: TokenBuckets,
    private readonly opts: { leaseFraction: number; clock?: () => number; maxEntries?: number } = { leaseFraction: 0.1 },
  ) {}

  async consume(key: string, policy: RatePolicy): Promise<RateDecision> {
    const clock = this.opts.clock ?? Date.now;
    const id = `${policy.name}#${key}`;
    for (;;) {
      const now = clock();
      const denial = this.denied.get(id);
      if (denial !== undefined && now < denial.retryAt) {
        const wait = Math.max(1, Math.ceil((denial.retryAt - now) / 1000));
        const reset = Math.max(wait, Math.ceil((denial.fullAt - now) / 1000 - 1e-9));
        return { allowed: false, limit: policy.burst, remaining: 0, resetSeconds: reset, retryAfterSeconds: wait };
      }
      const lease = this.leases.get(id);
      if (lease && lease.tokens > 0 && now < lease.expiresMs) {
        lease.tokens--;
        return { ...describe(lease.tatMs, now, policy, true), remaining: this.remainingWith(lease, now, policy) };
      }
      // One take per caller and instance at a time: concurrent requests wait for it and share the lease.
      const inflight = this.pending.get(id);
      if (inflight) {
        await inflight;
        continue;
      }
      const take = this.refill(id, policy);
      this.pending.set(id, take.then(() => undefined, () => undefined));
      try {
        const d = await take;
        if (d) return d;
      } finally {
        this.pending.delete(id);
      }
    }
  }

  /** Takes a lease from the shared bucket; returns the decision for the request that took it. */
  private async refill(id: string, policy: RatePolicy): Promise<RateDecision | undefined> {
    const size = Math.max(1, Math.min(policy.burst, Math.floor(policy.burst * this.opts.leaseFraction)));
    let got = await this.buckets.take(id, policy, size);
    let n = size;
    if (!got.granted && size > 1) {
      got = await this.buckets.take(id, policy, 1);
      n = 1;
    }
    if (!got.granted) {
      const d = describe(got.tatMs, got.nowMs, policy, false);
      this.remember(this.denied, id, { retryAt: got.nowMs + d.retryAfterSeconds * 1000, fullAt: got.nowMs + d.resetSeconds * 1000 });
      this.leases.delete(id);
      return d;
    }
    this.denied.delete(id);
    const t = 1000 / policy.ratePerSecond;
    // A lease lives as long as its tokens take to refill, so an idle instance's lease does not linger.
    const fresh: Lease = { tokens: n - 1, tatMs: got.tatMs, expiresMs: got.nowMs + Math.max(1000, n * t) };
    this.remember(this.leases, id, fresh);
    return { ...describe(got.tatMs, got.nowMs, policy, true), remaining: this.remainingWith(fresh, got.nowMs, policy) };
  }

  /** Tokens left in the bucket as of the lease, counting this instance's unspent lease as available. */
  private remainingWith(lease: Lease, now: number, policy: RatePolicy): number {
    return Math.min(policy.burst - 1, describe(lease.tatMs, now, policy, true).remaining + lease.tokens);
  }

  private remember<V>(map: Map<string, V>, id: string, value: V): void {
    const max = this.opts.maxEntries ?? 10000;
    if (map.size >= max && !map.has(id)) map.delete(map.keys().next().value as string);
    map.set(id, value);
  }
}
