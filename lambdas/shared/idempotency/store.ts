import { createHash } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

/**
 * Idempotent retries of writes (`Idempotency-Key` on /v1, `idempotencyKey` on the MCP write tools):
 * the first request with a key claims it with a conditional put; a retry finds the stored answer
 * and gets it again instead of applying the write twice. Records live a day (`ttlSeconds`).
 *
 * The record is claimed `in_progress` with a lease: a writer that dies (a Lambda timeout) leaves a
 * claim that lapses after `leaseSeconds`, so the retry runs the write rather than waiting forever.
 * The conditional put makes the claim safe across instances: of two concurrent first requests,
 * one runs, the other is told the request is in progress.
 */

/** What a retry gets back: the first answer, as the transport stored it. */
export interface StoredAnswer {
  status: number;
  body: string;
  /** The headers that describe the result (content type, ETag, Location), not per-response ones. */
  headers: Record<string, string>;
}

export type Claim =
  | { kind: 'claimed' }
  /** The same request was answered before: send this again. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The key was used with a different request. */
  | { kind: 'mismatch' }
  /** The first request with this key is still running (or died less than a lease ago). */
  | { kind: 'in_progress' };

export interface IdempotencyStore {
  claim(key: string, fingerprint: string): Promise<Claim>;
  complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void>;
  /** Gives the key up (the write failed): a retry runs again. */
  release(key: string): Promise<void>;
}

export interface IdempotencyOptions {
  ttlSeconds: number;
  leaseSeconds: number;
  clock?: () => number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencyOptions = { ttlSeconds: 86_400, leaseSeconds: 60 };

/**
 * The store on a DynamoDB table keyed by `pk` with TTL on `expiresAt`: the shared short-lived state
 * table (the rate limiter's), under keys `idem:<…>` that no bucket uses.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  private readonly clock: () => number;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly table: string,
    private readonly opts: IdempotencyOptions = DEFAULT_IDEMPOTENCY,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  private pk(key: string): Record<string, AttributeValue> {
    return { pk: { S: `idem:${key}` } };
  }

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const now = Math.floor(this.clock() / 1000);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: {
            ...this.pk(key),
            state: { S: 'in_progress' },
            fingerprint: { S: fingerprint },
            leaseUntil: { N: String(now + this.opts.leaseSeconds) },
            expiresAt: { N: String(now + this.opts.ttlSeconds) },
          },
          // New, expired (TTL deletes lazily), or a claim whose holder died.
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR (#state = :progress AND leaseUntil < :now)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':now': { N: String(now) }, ':progress': { S: 'in_progress' } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { kind: 'claimed' };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const item = err.Item ?? (await this.client.send(new GetItemCommand({ TableName: this.table, Key: this.pk(key), ConsistentRead: true }))).Item;
      if (!item) return this.claim(key, fingerprint);
      if (item.fingerprint?.S !== fingerprint) return { kind: 'mismatch' };
      if (item.state?.S !== 'done') return { kind: 'in_progress' };
      return {
        kind: 'replay',
        answer: { status: Number(item.status?.N ?? 200), body: item.body?.S ?? '', headers: JSON.parse(item.headers?.S ?? '{}') as Record<string, string> },
      };
    }
  }

  async complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    const now = Math.floor(this.clock() / 1000);
    await this.client.send(
      new PutItemCommand({
        TableName: this.table,
        Item: {
          ...this.pk(key),
          state: { S: 'done' },
          fingerprint: { S: fingerprint },
          status: { N: String(answer.status) },
          body: { S: answer.body },
          headers: { S: JSON.stringify(answer.headers) },
          expiresAt: { N: String(now + this.opts.ttlSeconds) },
        },
      }),
    );
  }

  async release(key: string): Promise<void> {
    // The lease lapses at once (no DeleteItem: the functions may not delete from this table).
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.pk(key),
          UpdateExpression: 'SET leaseUntil = :zero',
          ConditionExpression: '#state = :progress',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':zero': { N: '0' }, ':progress': { S: 'in_progress' } },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
}

/** Keys a client may send: 1-255 printable ASCII characters (the IETF draft's sf-string, without quotes). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** The stored key of a client's key: per transport and user, so that keys of different users never meet. */
export const scopedKey = (transport: string, sub: string, key: string): string => `${transport}:${sha256(sub)}:${key}`;

/** A request's fingerprint from its parts (what must be equal for a retry to be the same request). */
export const fingerprintOf = (parts: ReadonlyArray<string | Buffer>): string => sha256(parts.map((p) => sha256(p)).join('\n'));

export type Once<T> = { kind: 'ran'; value: T } | Exclude<Claim, { kind: 'claimed' }>;

/**
 * The protocol both transports follow: claim the key; if it is new, run, then remember what
 * `remember` keeps of the result (nothing: the key is given up, so a retry runs again), and give the
 * key up when the run throws. Otherwise the claim says what the caller answers instead of running.
 */
export async function runOnce<T>(
  store: IdempotencyStore,
  key: string,
  fingerprint: string,
  run: () => Promise<T>,
  remember: (value: T) => StoredAnswer | undefined,
): Promise<Once<T>> {
  const claim = await store.claim(key, fingerprint);
  if (claim.kind !== 'claimed') return claim;
  let value: T;
  try {
    value = await run();
  } catch (err) {
    await store.release(key).catch(() => undefined);
    throw err;
  }
  const answer = remember(value);
  if (answer) await store.complete(key, fingerprint, answer);
  else await store.release(key).catch(() => undefined);
  return { kind: 'ran', value };
}

/** The same protocol in process memory: for tests and for transports' tests that need no backends. */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, { state: 'in_progress' | 'done'; fingerprint: string; answer?: StoredAnswer }>();

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const r = this.records.get(key);
    if (!r) {
      this.records.set(key, { state: 'in_progress', fingerprint });
      return { kind: 'claimed' };
    }
    if (r.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return r.state === 'done' && r.answer ? { kind: 'replay', answer: r.answer } : { kind: 'in_progress' };
  }

  async complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    this.records.set(key, { state: 'done', fingerprint, answer });
  }

  async release(key: string): Promise<void> {
    if (this.records.get(key)?.state === 'in_progress') this.records.delete(key);
  }
}
