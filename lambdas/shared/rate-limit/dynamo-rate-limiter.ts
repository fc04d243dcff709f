import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RatePolicy, TokenBuckets } from './rate-limiter';

/**
 * GCRA buckets in DynamoDB, one item per key, taken with one conditional UpdateItem in the common case:
 *  1. "bucket full" branch: TAT <= now (or no item) → SET tat = now + n·T.
 *  2. "bucket partly used" branch: now < TAT <= now + (B-n)·T → SET tat = tat + n·T.
 * A failed condition returns the stored item (ReturnValuesOnConditionCheckFailure), which tells
 * which branch to try next or that there are not n tokens; so a take costs one round trip, two when
 * the bucket changed branch since, and never a read-then-write race.
 */
export class DynamoTokenBuckets implements TokenBuckets {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async take(pk: string, policy: RatePolicy, n: number): Promise<{ granted: boolean; tatMs: number; nowMs: number }> {
    const t = 1000 / policy.ratePerSecond;
    let assumeFull = true;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.clock();
      const limit = now + (policy.burst - n) * t;
      try {
        const out = await this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: pk } },
            UpdateExpression: assumeFull ? 'SET tat = :first, expiresAt = :exp' : 'SET tat = tat + :nt, expiresAt = :exp',
            ConditionExpression: assumeFull ? 'attribute_not_exists(tat) OR tat <= :now' : 'tat > :now AND tat <= :limit',
            ExpressionAttributeValues: assumeFull
              ? { ':first': { N: String(now + n * t) }, ':now': { N: String(now) }, ':exp': { N: String(expiry(now + n * t)) } }
              : {
                  ':nt': { N: String(n * t) },
                  ':now': { N: String(now) },
                  ':limit': { N: String(limit) },
                  ':exp': { N: String(expiry(limit + n * t)) },
                },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { granted: true, tatMs: Number(out.Attributes?.tat?.N ?? now + n * t), nowMs: now };
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        const stored = err.Item?.tat?.N;
        const tat = stored === undefined ? undefined : Number(stored);
        if (tat === undefined || tat <= now) assumeFull = true;
        else if (tat <= limit) assumeFull = false;
        else return { granted: false, tatMs: tat, nowMs: now };
      }
    }
    // Heavy contention on one key: refuse this take rather than spin (the client retries).
    const now = this.clock();
    return { granted: false, tatMs: now + policy.burst * t, nowMs: now };
  }
}

/** TTL (epoch seconds) a minute after the bucket would be full again, so idle buckets disappear. */
function expiry(tatMs: number): number {
  return Math.ceil(tatMs / 1000) + 60;
}
