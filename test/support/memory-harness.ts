import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { ensureBuckets, ensureTables } from '../../bin/local-stack/provision';
import { DynamoRevLock } from '../../lambdas/memory/adapters/dynamo-rev-lock';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { S3BlobStore } from '../../lambdas/memory/adapters/s3-blob-store';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { countStorageCalls, type CallCounter } from '../../lambdas/memory/call-counter';
import { MemoryService, type MemoryServiceDeps } from '../../lambdas/memory/service';
import { memoryTableDefinitions } from '../../lambdas/memory/tables';
import type { Caller } from '../../lambdas/memory/types';
import { dynamoClient, loadSdkBudget, s3Client } from '../../lambdas/shared/aws/clients';
import { CursorCodec, type KeyRing } from '../../lambdas/shared/cursor';

/**
 * The memory core against the test run's DynamoDB Local and S3 server, on a table and a bucket of
 * its own. `service()` builds a service with a fresh cache each time: a separate Lambda instance.
 */
export interface MemoryHarness {
  s3: S3Client;
  dynamodb: DynamoDBClient;
  table: string;
  bucket: string;
  keys: KeyRing;
  counter: CallCounter;
  service(overrides?: Partial<MemoryServiceDeps>): MemoryService;
  close(): Promise<void>;
}

let counter = 0;

/** See `service()`: 50 instances' writes to one memory took more than the production 5 s here at a load of 15. */
export const TEST_WRITE_BUDGET_MS = 120_000;

export async function startMemoryHarness(): Promise<MemoryHarness> {
  const ddbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  const s3Endpoint = process.env.TEST_S3_ENDPOINT;
  if (!ddbEndpoint || !s3Endpoint) throw new Error('test backends are not running (jest globalSetup)');
  const id = `${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
  const table = `memories-${id}`;
  const bucket = `memory-${id}`.toLowerCase();
  const opts = { region: 'us-east-1', dynamoEndpoint: ddbEndpoint, s3Endpoint };
  // Budgets a loaded test machine stays within (50 instances' PUT waves at once kept s3rver from
  // accepting connections within the production second). The budgets themselves are tested in
  // aws-clients.test.ts and by the fault tests of the local stack. The harness's "instances" share
  // one client and so one call pool: a wave of 50 instances' writes waits its turn for a slot,
  // which on a loaded machine took longer than the production 2 s (CallQueueTimeout).
  const budget = { ...loadSdkBudget(), connectTimeoutMs: 10_000, dynamoRequestTimeoutMs: 20_000, s3RequestTimeoutMs: 30_000, queueTimeoutMs: 30_000 };
  const dynamodb = dynamoClient(opts, budget);
  const s3 = s3Client(opts, budget);
  await ensureTables(dynamodb, memoryTableDefinitions({ memories: table }));
  await ensureBuckets(s3, [bucket]);
  const keys: KeyRing = { current: { id: 1, secret: randomBytes(32) } };
  const calls = countStorageCalls({ s3, dynamodb });
  return {
    s3,
    dynamodb,
    table,
    bucket,
    keys,
    counter: calls,
    service: (overrides = {}) =>
      new MemoryService({
        blobs: new S3BlobStore(s3, bucket),
        lock: new DynamoRevLock(dynamodb, table),
        cursors: new CursorCodec(keys),
        cache: new ImmutableCache(64 * 1024 * 1024),
        ...overrides,
        // A write's time budget a loaded test machine stays within (the SDK budgets above, likewise);
        // tests of the budget give their own.
        limits: { writeBudgetMs: TEST_WRITE_BUDGET_MS, ...overrides.limits },
      }),
    close: async () => {
      calls.detach();
      s3.destroy();
      dynamodb.destroy();
    },
  };
}

let accounts = 0;

/** A caller of a fresh account (accounts never collide across tests). */
/** A memory core on the in-process adapters (no backends), with a cursor key of its own. */
export function inMemoryService(over: Partial<MemoryServiceDeps> = {}): MemoryService {
  return new MemoryService({
    blobs: new InMemoryBlobStore(),
    lock: new InMemoryRevLock(),
    cursors: new CursorCodec({ current: { id: 1, secret: randomBytes(32) } }),
    ...over,
  });
}

export function newCaller(grants?: readonly string[]): Caller {
  const account = `acct-${process.pid}-${++accounts}-${randomBytes(3).toString('hex')}`;
  return { account, grants, author: { name: `Tester ${accounts}`, email: `tester${accounts}@example.com` } };
}

/** Expects a promise to reject with a MemoryError of this code (and reason, when given). */
export async function expectMemoryError(p: Promise<unknown>, code: string, reason?: string): Promise<Error & { code: string; reason: string }> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  if (!caught) throw new Error(`expected ${code}${reason ? `/${reason}` : ''}, but the call succeeded`);
  const e = caught as Error & { code?: string; reason?: string };
  if (e.code !== code || (reason !== undefined && e.reason !== reason)) {
    throw new Error(`expected ${code}${reason ? `/${reason}` : ''}, got ${e.code ?? e.name}/${e.reason ?? ''}: ${e.message}`);
  }
  return e as Error & { code: string; reason: string };
}
