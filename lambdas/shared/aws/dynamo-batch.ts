import {
  BatchGetCommand,
  BatchWriteCommand,
  QueryCommand,
  ScanCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { chunk, jitteredBackoffMs, mapLimit, sleep } from '../concurrency';

/**
 * DynamoDB's paged and batch calls, each looped once here. The batch calls may answer part of a request and hand the rest back as "unprocessed"
 * (throttling, the 16 MB response cap). These loops retry the rest with jittered backoff, a bounded
 * number of times, so every adapter gets the same policy instead of its own copy of it.
 */

type Item = Record<string, unknown>;
export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

export interface BatchOptions {
  /** Calls per chunk before giving up (the first call included). */
  attempts?: number;
  /** Chunks in flight at once. */
  concurrency?: number;
}

const DEFAULT_ATTEMPTS = 9;
const backoff = (attempt: number) => sleep(jitteredBackoffMs(attempt, 25, 1000));

/** Every item of `keys` that exists, in no particular order; 100 keys per call. */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  table: string,
  keys: readonly Item[],
  opts: BatchOptions & { consistent?: boolean; exhausted?: string } = {},
): Promise<Item[]> {
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  const found = await mapLimit(chunk(keys, 100), opts.concurrency ?? 1, async (part) => {
    const out: Item[] = [];
    let pending: Item[] = part;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === attempts) throw new Error(opts.exhausted ?? 'DynamoDB kept returning unprocessed keys');
      if (attempt > 0) await backoff(attempt);
      const res = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: opts.consistent } } }));
      out.push(...(res.Responses?.[table] ?? []));
      pending = res.UnprocessedKeys?.[table]?.Keys ?? [];
    }
    return out;
  });
  return found.flat();
}

/** Applies every request; 25 per call. Not atomic: a failure leaves earlier chunks applied. */
export async function batchWriteAll(doc: DynamoDBDocumentClient, table: string, requests: readonly WriteRequest[], opts: BatchOptions = {}): Promise<void> {
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  await mapLimit(chunk(requests, 25), opts.concurrency ?? 1, async (part) => {
    let pending: WriteRequest[] = part;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === attempts) throw new Error('DynamoDB kept returning unprocessed items');
      if (attempt > 0) await backoff(attempt);
      const res = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (res.UnprocessedItems?.[table] as WriteRequest[] | undefined) ?? [];
    }
  });
}

/** Every item a Query matches, page after page (`ExclusiveStartKey` is managed here). */
export async function* queryItems(doc: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): AsyncIterable<Item> {
  let start: Item | undefined;
  do {
    const page = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Every item a Scan returns, page after page. */
export async function* scanItems(doc: DynamoDBDocumentClient, input: Omit<ScanCommandInput, 'ExclusiveStartKey'>): AsyncIterable<Item> {
  let start: Item | undefined;
  do {
    const page = await doc.send(new ScanCommand({ ...input, ExclusiveStartKey: start }));
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}
