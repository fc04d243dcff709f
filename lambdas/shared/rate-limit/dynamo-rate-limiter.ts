import { BatchExecuteStatementCommand, ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
  private readonly batcher: TakeBatcher | undefined;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly clock: () => number = Date.now,
    opts: { batch?: boolean } = {},
  ) {
    this.batcher = opts.batch ? new TakeBatcher(client, table, clock, (pk, policy, n) => this.takeOne(pk, policy, n)) : undefined;
  }

  /** Takes started and not yet answered (queued for a batch, or in flight). */
  private outstanding = 0;

  backlog(): number {
    return this.outstanding;
  }

  async take(pk: string, policy: RatePolicy, n: number): Promise<Taken> {
    this.outstanding++;
    try {
      // A take larger than the burst is refused by the one-item path's conditions; batches only carry the common case.
      if (this.batcher !== undefined && n <= policy.burst) return await this.batcher.take(pk, policy, n);
      return await this.takeOne(pk, policy, n);
    } finally {
      this.outstanding--;
    }
  }

  /** The one-item path: one conditional UpdateItem, two when the bucket changed branch since. */
  async takeOne(pk: string, policy: RatePolicy, n: number): Promise<Taken> {
    const t = 1000 / policy.ratePerSecond;
    // More than the burst never fits, not even in a full bucket (the "full" branch below would grant it).
    if (n > policy.burst) {
      const now = this.clock();
      return { granted: false, tatMs: now, nowMs: now };
    }
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

type Taken = { granted: boolean; tatMs: number; nowMs: number };

interface Queued {
  pk: string;
  policy: RatePolicy;
  n: number;
  resolve: (t: Taken) => void;
  reject: (err: unknown) => void;
}

/** BatchExecuteStatement's limit of statements per call. */
const BATCH_MAX = 25;
/**
 * Full batches in flight at most. A partial batch leaves only when none is in flight, so under load
 * takes gather into full batches (one call and one request's overhead in DynamoDB for 25 callers)
 * instead of many small ones, and when idle a take leaves at once.
 */
const BATCH_INFLIGHT = 8;

/**
 * Many callers seen for the first time (a catalog read by thousands of readers) cost one table call
 * each: one conditional UpdateItem per caller, which on a busy instance is most of a request's
 * CPU. The batcher sends the first attempt of up to 25 concurrent takes in one
 * BatchExecuteStatement, each statement conditional on its own:
 *  - a caller this instance has not seen: `INSERT` of a full bucket less n tokens, which DynamoDB
 *    refuses when the item exists;
 *  - one it has seen: the "bucket full" branch as an `UPDATE ... WHERE tat <= now`.
 * Either way a granted statement leaves TAT = now + n·T, as the one-item path would. A statement
 * that fails (the bucket is in use, or exists when it was thought new) and a batch that fails as a
 * whole fall back to the one-item path for those takes, which decides them exactly as before; so
 * the batch only saves calls, it never decides differently. No batch waits for a timer: takes that
 * arrive while a batch is in flight join the next one, which leaves when it is full or when nothing
 * is in flight.
 */
class TakeBatcher {
  private queue: Queued[] = [];
  private inflight = 0;
  private scheduled = false;
  /** Keys this instance has written (bounded): their item likely exists, so UPDATE rather than INSERT. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly clock: () => number,
    private readonly fallback: (pk: string, policy: RatePolicy, n: number) => Promise<Taken>,
  ) {}

  take(pk: string, policy: RatePolicy, n: number): Promise<Taken> {
    return new Promise((resolve, reject) => {
      this.queue.push({ pk, policy, n, resolve, reject });
      this.schedule();
    });
  }

  /** Whether the next batch may leave now: any batch when none is in flight, else a full one up to the cap. */
  private mayFlush(): boolean {
    return this.queue.length > 0 && (this.inflight === 0 || (this.queue.length >= BATCH_MAX && this.inflight < BATCH_INFLIGHT));
  }

  private schedule(): void {
    if (this.scheduled || !this.mayFlush()) return;
    this.scheduled = true;
    // The takes of this turn of the event loop go together.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.mayFlush()) {
      // One statement per key in a batch (DynamoDB refuses duplicates): a repeated key waits for the next.
      // One pass over the head of the queue (not a splice per take: under load the queue is long).
      const batch: Queued[] = [];
      const later: Queued[] = [];
      const keys = new Set<string>();
      let i = 0;
      for (; i < this.queue.length && batch.length < BATCH_MAX; i++) {
        const q = this.queue[i];
        if (keys.has(q.pk)) later.push(q);
        else {
          keys.add(q.pk);
          batch.push(q);
        }
      }
      this.queue = later.length > 0 ? [...later, ...this.queue.slice(i)] : this.queue.slice(i);
      this.inflight += 1;
      this.send(batch).finally(() => {
        this.inflight -= 1;
        this.schedule();
      });
    }
  }

  private async send(batch: Queued[]): Promise<void> {
    if (batch.length === 1) {
      const [q] = batch;
      await this.fallback(q.pk, q.policy, q.n).then(q.resolve, q.reject);
      return;
    }
    const now = this.clock();
    const quoted = `"${this.table}"`;
    const statements = batch.map((q) => {
      const tat = now + q.n * (1000 / q.policy.ratePerSecond); // as the one-item path computes it, to the last bit
      const exp = { N: String(expiry(tat)) };
      return this.seen.has(q.pk)
        ? {
            Statement: `UPDATE ${quoted} SET tat = ? SET expiresAt = ? WHERE pk = ? AND tat <= ?`,
            Parameters: [{ N: String(tat) }, exp, { S: q.pk }, { N: String(now) }],
          }
        : { Statement: `INSERT INTO ${quoted} VALUE {'pk': ?, 'tat': ?, 'expiresAt': ?}`, Parameters: [{ S: q.pk }, { N: String(tat) }, exp] };
    });
    let responses: Array<{ Error?: unknown }> | undefined;
    try {
      responses = (await this.client.send(new BatchExecuteStatementCommand({ Statements: statements }))).Responses;
    } catch {
      responses = undefined; // decided one by one below
    }
    await Promise.all(
      batch.map(async (q, i) => {
        this.remember(q.pk);
        const r = responses?.[i];
        if (r !== undefined && r.Error === undefined) {
          q.resolve({ granted: true, tatMs: now + q.n * (1000 / q.policy.ratePerSecond), nowMs: now });
          return;
        }
        await this.fallback(q.pk, q.policy, q.n).then(q.resolve, q.reject);
      }),
    );
  }

  private remember(pk: string): void {
    if (this.seen.size >= 10_000 && !this.seen.has(pk)) this.seen.delete(this.seen.values().next().value as string);
    this.seen.add(pk);
  }
}

/** TTL (epoch seconds) a minute after the bucket would be full again, so idle buckets disappear. */
function expiry(tatMs: number): number {
  return Math.ceil(tatMs / 1000) + 60;
}
