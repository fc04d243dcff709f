import { createHash, randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';

/**
 * Idempotent retries of writes (`Idempotency-Key` on /v1, `idempotencyKey` on the MCP write tools):
 * the first request with a key claims it with a conditional put; a retry finds the stored answer
 * and gets it again instead of applying the write twice. Records live a day (`ttlSeconds`).
 *
 * A claim is `in_progress` with a lease and a token of its own: the SDK's retry of a claim whose
 * answer was lost finds its own token and knows the claim is its own; a writer that dies leaves a
 * claim that lapses after `leaseSeconds`. Of two concurrent first requests one runs, the other is
 * told the request is in progress.
 *
 * Exactly once across a crash: a write that moves a memory's head records its key in the same
 * DynamoDB transaction (`Receipt`, written by the rev lock), as `committed` with the write's result.
 * A retry at any later time, even after the instance died between its commit and its answer, finds
 * that record and answers from it: the write is never made twice. The transport then stores its
 * full answer (`done`), which later retries get as they are.
 */

/** What a retry gets back: the first answer, as the transport stored it. */
export interface StoredAnswer {
  status: number;
  body: string;
  /** The headers that describe the result (content type, ETag, Location), not per-response ones. */
  headers: Record<string, string>;
}

export type Claim =
  | { kind: 'claimed'; token: string }
  /** The same request was answered before: send this again. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The same request's write landed (recorded with its commit) but its answer was not stored. */
  | { kind: 'committed'; result: unknown }
  /** The key was used with a different request. */
  | { kind: 'mismatch' }
  /** The first request with this key is still running (or died less than a lease ago). */
  | { kind: 'in_progress' };

/**
 * A claimed key, as a keyed write carries it to the commit that records it. `committed` is set when
 * the write already landed: the commit loop then returns that result instead of writing.
 */
export interface KeyedWrite {
  key: string;
  token: string;
  fingerprint: string;
  committed?: unknown;
  /**
   * Set by the core once the write's result was recorded with its commit: the record then answers
   * every retry (`committed`) and the transport stores nothing more.
   */
  recorded?: boolean;
}

/** What the rev lock records with a head move for a keyed write: the claim and the write's result. */
export interface Receipt {
  key: string;
  token: string;
  fingerprint: string;
  result: unknown;
}

/** The key's record could not be read or written (DynamoDB failed): the request may be retried. */
export class IdempotencyUnavailable extends Error {
  constructor(
    readonly operation: string,
    override readonly cause: unknown,
  ) {
    super(`idempotency record ${operation} failed: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`);
    this.name = 'IdempotencyUnavailable';
  }
}

export interface IdempotencyStore {
  claim(key: string, fingerprint: string): Promise<Claim>;
  complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void>;
  /** Gives the claim up (the write failed): a retry runs again. Only the claim's own token can. */
  release(key: string, token: string): Promise<void>;
}

export interface IdempotencyOptions {
  ttlSeconds: number;
  leaseSeconds: number;
  clock?: () => number;
}

/**
 * A claim's lease is a liveness bound only: a write records its key on condition that the claim is
 * still its own, so one whose claim lapsed and was taken over can no longer land. 30 s covers a
 * write's time budget and its last head move.
 */
export const DEFAULT_IDEMPOTENCY: IdempotencyOptions = { ttlSeconds: 86_400, leaseSeconds: 30 };

type Item = Record<string, AttributeValue>;

/** A claim's outcome from the record that is there (or was there when the put's condition failed). */
function fromRecord(item: Item, fingerprint: string, token: string): Claim {
  // Our own claim: the SDK retried a put whose answer was lost.
  if (item.owner?.S === token) return { kind: 'claimed', token };
  if (item.fingerprint?.S !== fingerprint) return { kind: 'mismatch' };
  if (item.state?.S === 'committed') return { kind: 'committed', result: JSON.parse(item.result?.S ?? 'null') as unknown };
  if (item.state?.S !== 'done') return { kind: 'in_progress' };
  return {
    kind: 'replay',
    answer: { status: Number(item.status?.N ?? 200), body: item.body?.S ?? '', headers: JSON.parse(item.headers?.S ?? '{}') as Record<string, string> },
  };
}

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

  private pk(key: string): Item {
    return { pk: { S: `idem:${key}` } };
  }

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const token = randomUUID();
    // A record that vanished between the failed put and the read (its TTL deletion) is claimed again.
    for (let attempt = 0; ; attempt++) {
      const now = this.now();
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.table,
            Item: {
              ...this.pk(key),
              state: { S: 'in_progress' },
              owner: { S: token },
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
        return { kind: 'claimed', token };
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) {
          // The put may have landed without an answer: give it up, so the client's retry is not
          // told "in progress" for a whole lease. Best effort: DynamoDB is failing.
          await this.release(key, token).catch(() => undefined);
          throw new IdempotencyUnavailable('claim', err);
        }
        const item = (err.Item as Item | undefined) ?? (await this.read(key));
        if (item) return fromRecord(item, fingerprint, token);
        if (attempt >= 2) return { kind: 'in_progress' };
      }
    }
  }

  private async read(key: string): Promise<Item | undefined> {
    try {
      return (await this.client.send(new GetItemCommand({ TableName: this.table, Key: this.pk(key), ConsistentRead: true }))).Item;
    } catch (err) {
      throw new IdempotencyUnavailable('read', err);
    }
  }

  async complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    try {
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
            expiresAt: { N: String(this.now() + this.opts.ttlSeconds) },
          },
        }),
      );
    } catch (err) {
      throw new IdempotencyUnavailable('complete', err);
    }
  }

  async release(key: string, token: string): Promise<void> {
    // The lease lapses at once (no DeleteItem: the functions may not delete from this table).
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.pk(key),
          UpdateExpression: 'SET leaseUntil = :zero',
          ConditionExpression: '#state = :progress AND #owner = :token',
          ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
          ExpressionAttributeValues: { ':zero': { N: '0' }, ':progress': { S: 'in_progress' }, ':token': { S: token } },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw new IdempotencyUnavailable('release', err);
    }
  }

  /**
   * The receipt of a keyed write as an item of the rev lock's transaction: the claim becomes
   * `committed` with the write's result, on condition that it is still this claim (same token, not
   * answered): so the head moves with the record of its key, or neither happens.
   */
  receiptItem(receipt: Receipt): TransactWriteItem {
    return {
      Update: {
        TableName: this.table,
        Key: this.pk(receipt.key),
        UpdateExpression: 'SET #state = :committed, #result = :result, expiresAt = :exp REMOVE leaseUntil',
        ConditionExpression: '#state = :progress AND #owner = :token AND fingerprint = :fp',
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner', '#result': 'result' },
        ExpressionAttributeValues: {
          ':committed': { S: 'committed' },
          ':progress': { S: 'in_progress' },
          ':result': { S: JSON.stringify(receipt.result) },
          ':token': { S: receipt.token },
          ':fp': { S: receipt.fingerprint },
          ':exp': { N: String(this.now() + this.opts.ttlSeconds) },
        },
      },
    };
  }
}

/** Keys a client may send: 1-255 printable ASCII characters (the IETF draft's sf-string, without quotes). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** The stored key of a client's key: per transport and user, so that keys of different users never meet. */
export const scopedKey = (transport: string, sub: string, key: string): string => `${transport}:${sha256(sub)}:${key}`;

/** A request's fingerprint from its parts (what must be equal for a retry to be the same request). */
export const fingerprintOf = (parts: ReadonlyArray<string | Buffer>): string => sha256(parts.map((p) => sha256(p)).join('\n'));

/** `replayed`: the write had landed before (a retry after a lost answer); `value` is rebuilt from its record. */
export type Once<T> = { kind: 'ran'; value: T; replayed: boolean } | Exclude<Claim, { kind: 'claimed' } | { kind: 'committed' }>;

/**
 * The protocol both transports follow: claim the key; if it is new, run with the claim (a write
 * that moves a head records it with its commit), then store what `remember` keeps of the result
 * (nothing: the claim is given up, so a retry runs again), and give the claim up when the run
 * throws. A key whose write landed without a stored answer runs again with the recorded result,
 * which the commit loop returns instead of writing. Otherwise the claim says what the caller
 * answers. Storing the answer is best effort: the write stands whether or not it is stored.
 */
export async function runOnce<T>(
  store: IdempotencyStore,
  key: string,
  fingerprint: string,
  run: (held: KeyedWrite) => Promise<T>,
  remember: (value: T) => StoredAnswer | undefined,
): Promise<Once<T>> {
  const claim = await store.claim(key, fingerprint);
  if (claim.kind !== 'claimed' && claim.kind !== 'committed') return claim;
  const held: KeyedWrite = claim.kind === 'claimed' ? { key, token: claim.token, fingerprint } : { key, token: '', fingerprint, committed: claim.result };
  let value: T;
  try {
    value = await run(held);
  } catch (err) {
    if (claim.kind === 'claimed') await store.release(key, claim.token).catch(() => undefined);
    throw err;
  }
  const answer = remember(value);
  // A write recorded with its commit needs nothing more: every retry is answered from that record.
  // Otherwise the answer is stored, best effort: the write stands whether or not DynamoDB takes it
  // (the claim then lapses after its lease, and a retry runs again).
  if (held.recorded) return { kind: 'ran', value, replayed: claim.kind === 'committed' };
  if (answer) await store.complete(key, fingerprint, answer).catch(() => undefined);
  else if (claim.kind === 'claimed') await store.release(key, claim.token).catch(() => undefined);
  return { kind: 'ran', value, replayed: claim.kind === 'committed' };
}

type KeyRecord = { state: 'in_progress' | 'committed' | 'done'; fingerprint: string; owner?: string; answer?: StoredAnswer; result?: unknown };

/** The same protocol in process memory: for tests and for transports' tests that need no backends. */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, KeyRecord>();

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const r = this.records.get(key);
    if (!r) {
      const token = randomUUID();
      this.records.set(key, { state: 'in_progress', fingerprint, owner: token });
      return { kind: 'claimed', token };
    }
    if (r.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (r.state === 'committed') return { kind: 'committed', result: r.result };
    return r.state === 'done' && r.answer ? { kind: 'replay', answer: r.answer } : { kind: 'in_progress' };
  }

  async complete(key: string, fingerprint: string, answer: StoredAnswer): Promise<void> {
    this.records.set(key, { state: 'done', fingerprint, answer });
  }

  async release(key: string, token: string): Promise<void> {
    const r = this.records.get(key);
    if (r?.state === 'in_progress' && r.owner === token) this.records.delete(key);
  }

  /** Whether the receipt may be recorded (its claim is still held); the in-memory rev lock checks all first. */
  holds(receipt: Receipt): boolean {
    const r = this.records.get(receipt.key);
    return r?.state === 'in_progress' && r.owner === receipt.token && r.fingerprint === receipt.fingerprint;
  }

  record(receipt: Receipt): void {
    this.records.set(receipt.key, { state: 'committed', fingerprint: receipt.fingerprint, result: receipt.result });
  }
}
