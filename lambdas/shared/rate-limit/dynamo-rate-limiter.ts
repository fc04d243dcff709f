import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, type RateDecision, type RateLimiter, type RatePolicy } from './rate-limiter';

/**
 * GCRA in DynamoDB with one conditional UpdateItem in the common case:
 *  1. "bucket full" branch: TAT <= now (or no item) → SET tat = now + T.
 *  2. "bucket partly used" branch: now < TAT <= now + (B-1)·T → SET tat = tat + T.
 * A failed condition returns the stored item (ReturnValuesOnConditionCheckFailure), which tells
 * which branch to try next or that the caller is over the limit; so a request costs one round trip,
 * two when the bucket's state changed branch since, never a read-then-write race.
 */
export class DynamoRateLimiter implements RateLimiter {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async consume(key: string, policy: RatePolicy): Promise<RateDecision> {
    const pk = `${policy.name}#${key}`;
    const t = 1000 / policy.ratePerSecond;
    let assumeFull = true;
    for (let attempt = 0; attempt < 4; attempt++) {
      const now = this.clock();
      const limit = now + (policy.burst - 1) * t;
      try {
        const out = await this.client.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: { pk: { S: pk } },
            UpdateExpression: assumeFull ? 'SET tat = :first, expiresAt = :exp' : 'SET tat = tat + :t, expiresAt = :exp',
            ConditionExpression: assumeFull
              ? 'attribute_not_exists(tat) OR tat <= :now'
              : 'tat > :now AND tat <= :limit',
            ExpressionAttributeValues: assumeFull
              ? { ':first': { N: String(now + t) }, ':now': { N: String(now) }, ':exp': { N: String(expiry(now + t)) } }
              : {
                  ':t': { N: String(t) },
                  ':now': { N: String(now) },
                  ':limit': { N: String(limit) },
                  ':exp': { N: String(expiry(limit + t)) },
                },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        const tat = Number(out.Attributes?.tat?.N ?? now + t);
        return describe(tat, now, policy, true);
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        const stored = err.Item?.tat?.N;
        const tat = stored === undefined ? undefined : Number(stored);
        if (tat === undefined || tat <= now) {
          assumeFull = true;
        } else if (tat <= limit) {
          assumeFull = false;
        } else {
          return describe(tat, now, policy, false);
        }
      }
    }
    // Heavy contention on one key: refuse this request rather than spin (the client retries).
    const now = this.clock();
    return describe(now + policy.burst * t, now, policy, false);
  }
}

/** TTL (epoch seconds) a little after the bucket would be full again, so idle buckets disappear. */
function expiry(tatMs: number): number {
  return Math.ceil(tatMs / 1000) + 60;
}
