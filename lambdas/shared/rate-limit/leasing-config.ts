import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { envInt, envNumber, type Env } from '../env';
import { DynamoTokenBuckets } from './dynamo-rate-limiter';
import { LeasingRateLimiter, type LeasingOptions } from './rate-limiter';

/**
 * How every API's limiter trades table calls for precision, from one pair of variables:
 * `RATE_LEASE_FRACTION` (0.1: an instance leases a tenth of a burst per call) and
 * `RATE_PROVISIONAL_TOKENS` (1: a caller an instance has no lease for is admitted at once while the
 * lease is taken; the limit may then be passed by that many tokens per instance and caller, once
 * per denial), and `RATE_MAX_BACKLOG` (256: unanswered takes past which new callers wait for theirs).
 */
export function loadLeasingOptions(env: Env = process.env): LeasingOptions {
  return {
    leaseFraction: envNumber(env, 'RATE_LEASE_FRACTION', 0.1, { min: 0, max: 1 }),
    provisionalTokens: envInt(env, 'RATE_PROVISIONAL_TOKENS', 1, { min: 0 }),
    maxBacklog: envInt(env, 'RATE_MAX_BACKLOG', 256, { min: 0 }),
  };
}

/** The shared limiter on the rate-limit table; `batch` sends concurrent takes together (it needs PartiQL insert and update on the table). */
export function sharedLimiter(client: DynamoDBClient, table: string, options: LeasingOptions, buckets: { batch?: boolean } = {}): LeasingRateLimiter {
  return new LeasingRateLimiter(new DynamoTokenBuckets(client, table, Date.now, buckets), options);
}
