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
 * arrival time (TAT) of the next request. With emission interval T = 1/rate and burst B, a request
 * at `now` is allowed when TAT - now <= (B - 1)·T, and then TAT' = max(TAT, now) + T.
 */
export function gcraDecide(tatMs: number | undefined, nowMs: number, policy: RatePolicy): { allowed: boolean; newTatMs: number; decision: RateDecision } {
  const t = 1000 / policy.ratePerSecond;
  const tat = tatMs === undefined ? nowMs : Math.max(tatMs, nowMs);
  const allowed = tat - nowMs <= (policy.burst - 1) * t + 1e-6;
  const newTat = allowed ? tat + t : tat;
  return { allowed, newTatMs: newTat, decision: describe(newTat, nowMs, policy, allowed) };
}

export function describe(tatMs: number, nowMs: number, policy: RatePolicy, allowed: boolean): RateDecision {
  const t = 1000 / policy.ratePerSecond;
  const backlog = Math.max(0, tatMs - nowMs);
  const remaining = Math.max(0, Math.floor((policy.burst * t - backlog) / t + 1e-9));
  const resetSeconds = Math.ceil(backlog / 1000 - 1e-9);
  const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((backlog - (policy.burst - 1) * t) / 1000 - 1e-9));
  return { allowed, limit: policy.burst, remaining, resetSeconds, retryAfterSeconds };
}
