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
  /** Takes `cost` tokens (default 1) at once, or none: a denied batch spends nothing. */
  consume(key: string, policy: RatePolicy, cost?: number): Promise<RateDecision>;
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
  /** Takes started and not answered yet (how far the store is behind), where the store can tell. */
  backlog?(): number;
}

interface Lease {
  tokens: number;
  /** The bucket's TAT as of the lease (the leased tokens already counted in it). */
  tatMs: number;
  expiresMs: number;
}

const DEFAULT_MAX_BACKLOG = 256;

/** Tokens admitted before the shared bucket answered (see `provisionalTokens`). */
interface Provisional {
  used: number;
}

export interface LeasingOptions {
  /** Share of the burst an instance leases from the shared bucket per call (0: one call per request). */
  leaseFraction: number;
  /**
   * Tokens a caller this instance holds no lease for may spend at once, while the lease is taken in
   * the background (0: the first request of a caller waits for the table). Those tokens are charged
   * to the lease when it comes; if the bucket refuses, they were over the limit: the tolerance is
   * at most this many tokens per instance and caller, once per denial. Denials are remembered as
   * always, so a refused caller is refused locally without waiting either.
   */
  provisionalTokens?: number;
  /**
   * Takes not answered yet past which no caller is admitted provisionally: its request waits for
   * its take, as with no allowance. Without it, new callers arriving faster than the table answers
   * (a flood of new addresses) would be admitted while takes pile up without bound, in memory and
   * in how late the limit is applied; with it, that load waits for the table instead (256 by default).
   */
  maxBacklog?: number;
  clock?: () => number;
  maxEntries?: number;
}

/**
 * The limiter every API uses. A request costs a DynamoDB round trip only now and then: an instance
 * takes a small lease of tokens (a tenth of the burst by default) from the shared bucket in one
 * conditional write and spends it locally, and remembers a denial until its Retry-After, so a
 * flood costs the table nothing. Leased tokens are consumed for everyone, so the limit holds across
 * all instances; the cost is that an instance's unspent lease is lost when it expires (at most one
 * lease per instance and caller), which can only make the limit stricter, never looser. With a lease
 * fraction of 0 every request goes to the table. With `provisionalTokens`, no request waits for the
 * table at all (see there).
 *
 * Headers stay truthful: `remaining` and `reset` count what callers spent, never the unspent part of
 * a lease. A provisional answer, given before this instance knows anything of the shared bucket,
 * describes the bucket as this instance has seen it spent (full, less its own provisional tokens):
 * the next answer, from the lease, corrects it if other instances spent more.
 */
export class LeasingRateLimiter implements RateLimiter {
  private readonly leases = new Map<string, Lease>();
  /** A remembered denial: when a retry can succeed, and when the bucket is full again (the `reset`). */
  private readonly denied = new Map<string, { retryAt: number; fullAt: number }>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly provisional = new Map<string, Provisional>();
  /** Provisional takes admitted this turn and not yet started (see `provisionally`). */
  private deferred = 0;

  constructor(
    private readonly buckets: TokenBuckets,
    private readonly opts: LeasingOptions = { leaseFraction: 0.1 },
  ) {}

  async consume(key: string, policy: RatePolicy, cost = 1): Promise<RateDecision> {
    const clock = this.opts.clock ?? Date.now;
    const id = `${policy.name}#${key}`;
    const n = Math.max(1, Math.ceil(cost));
    for (;;) {
      const now = clock();
      const denial = this.denied.get(id);
      if (denial !== undefined && now < denial.retryAt) {
        const wait = Math.max(1, Math.ceil((denial.retryAt - now) / 1000));
        const reset = Math.max(wait, Math.ceil((denial.fullAt - now) / 1000 - 1e-9));
        return { allowed: false, limit: policy.burst, remaining: 0, resetSeconds: reset, retryAfterSeconds: wait };
      }
      const lease = this.leases.get(id);
      if (lease && lease.tokens >= n && now < lease.expiresMs) {
        lease.tokens -= n;
        return this.allowedBy(lease, now, policy);
      }
      const inflight = this.pending.get(id);
      const granted = this.provisionally(id, n, now, policy, inflight === undefined);
      if (granted) return granted;
      // One take per caller and instance at a time: concurrent requests wait for it and share the lease.
      if (inflight) {
        await inflight;
        continue;
      }
      const take = this.refill(id, policy, n);
      this.pending.set(
        id,
        take.then(
          () => undefined,
          () => undefined,
        ),
      );
      try {
        const d = await take;
        if (d) return d;
      } finally {
        this.pending.delete(id);
      }
    }
  }

  /**
   * Admits `n` tokens before the shared bucket answers, and starts the take that will settle them.
   * Only for a caller this instance holds no live lease for: one that is spending a lease right now
   * waits for the table, since the bucket is then known to be low.
   */
  private provisionally(id: string, n: number, now: number, policy: RatePolicy, start: boolean): RateDecision | undefined {
    const allowance = this.opts.provisionalTokens ?? 0;
    const lease = this.leases.get(id);
    if (allowance === 0 || (lease && now < lease.expiresMs)) return undefined;
    if ((this.buckets.backlog?.() ?? 0) + this.deferred >= (this.opts.maxBacklog ?? DEFAULT_MAX_BACKLOG)) return undefined;
    const p = this.provisional.get(id) ?? { used: 0 };
    if (p.used + n > allowance) return undefined;
    p.used += n;
    this.provisional.set(id, p);
    if (start) {
      // Started once this turn of the event loop is over, so the request admitted here is answered
      // before any of the take's work (building, signing and sending the table call) runs: a new
      // caller's request costs what a known caller's does. Counted in the backlog meanwhile.
      this.deferred += 1;
      const take = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => {
          this.deferred -= 1;
          return this.refill(id, policy, 0);
        })
        .then(
          () => undefined,
          () => {
            // The table failed: forget the provisional tokens (the next take fails open, logged by the caller).
            this.provisional.delete(id);
          },
        );
      this.pending.set(id, take);
      void take.finally(() => {
        if (this.pending.get(id) === take) this.pending.delete(id);
      });
    }
    // The bucket as this instance last saw it (an expired lease, or a full bucket), less what it admitted since.
    const t = 1000 / policy.ratePerSecond;
    const seen = lease ? Math.max(now, lease.tatMs - lease.tokens * t) : now;
    return describe(seen + p.used * t, now, policy, true);
  }

  /**
   * Takes a lease from the shared bucket for `n` tokens of the request that takes it (0 when it
   * settles provisional tokens); returns that request's decision.
   */
  private async refill(id: string, policy: RatePolicy, n: number): Promise<RateDecision | undefined> {
    const owed = () => this.provisional.get(id)?.used ?? 0;
    const size = Math.max(1, Math.min(policy.burst, Math.floor(policy.burst * this.opts.leaseFraction)));
    const want = Math.max(size, n + owed());
    let got = await this.buckets.take(id, policy, want);
    let taken = want;
    if (!got.granted && want > n + owed() && n + owed() > 0) {
      taken = n + owed();
      got = await this.buckets.take(id, policy, taken);
    }
    const spent = owed();
    this.provisional.delete(id);
    if (!got.granted) {
      const d = describe(got.tatMs, got.nowMs, policy, false);
      this.remember(this.denied, id, { retryAt: got.nowMs + d.retryAfterSeconds * 1000, fullAt: got.nowMs + d.resetSeconds * 1000 });
      this.leases.delete(id);
      return n > 0 ? d : undefined;
    }
    this.denied.delete(id);
    const t = 1000 / policy.ratePerSecond;
    // A lease lives as long as its tokens take to refill, so an idle instance's lease does not linger.
    const old = this.leases.get(id);
    const carried = old && got.nowMs < old.expiresMs ? old.tokens : 0;
    const fresh: Lease = { tokens: Math.max(0, carried + taken - n - spent), tatMs: got.tatMs, expiresMs: got.nowMs + Math.max(1000, taken * t) };
    this.remember(this.leases, id, fresh);
    return n > 0 ? this.allowedBy(fresh, got.nowMs, policy) : undefined;
  }

  /** The decision of a request admitted from `lease`: the bucket as if its unspent tokens were still in it. */
  private allowedBy(lease: Lease, now: number, policy: RatePolicy): RateDecision {
    const t = 1000 / policy.ratePerSecond;
    return describe(Math.max(now, lease.tatMs - lease.tokens * t), now, policy, true);
  }

  private remember<V>(map: Map<string, V>, id: string, value: V): void {
    const max = this.opts.maxEntries ?? 10000;
    if (map.size >= max && !map.has(id)) map.delete(map.keys().next().value as string);
    map.set(id, value);
  }
}
