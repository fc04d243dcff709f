import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { dynamoClient, s3Client } from '../shared/aws/clients';
import { CursorCodec, type KeyRing } from '../shared/cursor';
import { DynamoIdempotencyStore } from '../shared/idempotency/store';
import { DynamoRevLock } from './adapters/dynamo-rev-lock';
import { S3BlobStore } from './adapters/s3-blob-store';
import { ImmutableCache } from './cache';
import type { MemoryConfig } from './config';
import { MemoryService, type MemoryServiceDeps } from './service';

// One cache per process (per Lambda instance): every service built here shares what it has read.
let sharedCache: ImmutableCache | undefined;

export interface MemoryRuntime {
  service: MemoryService;
  s3: S3Client;
  dynamodb: DynamoDBClient;
  /**
   * The `Idempotency-Key` records: the transports claim keys in it, the rev lock records a keyed
   * write's key in it with the head move. One store for both, so both name the same table.
   */
  idempotency: DynamoIdempotencyStore;
}

/**
 * Builds the memory core from configuration and the cursor key ring (loaded by the transport from
 * `CURSOR_KEYS_FILE` or Secrets Manager, as the catalog does). Clients may be passed in, e.g. with
 * call counters attached.
 */
export function createMemoryRuntime(
  config: MemoryConfig,
  /** A ring, or a codec that re-reads its ring on an unknown key (`cursorCodec` of shared/secrets). */
  keys: KeyRing | CursorCodec,
  opts: { s3?: S3Client; dynamodb?: DynamoDBClient; overrides?: Partial<MemoryServiceDeps> } = {},
): MemoryRuntime {
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const dynamodb = opts.dynamodb ?? dynamoClient(clientOpts);
  const s3 = opts.s3 ?? s3Client(clientOpts);
  sharedCache ??= new ImmutableCache(config.cacheMegabytes * 1024 * 1024);
  // The claims of new requests go through a client (a call pool) of their own: under a burst they
  // queue behind each other, not in front of the head moves of writes already admitted.
  const idempotency = new DynamoIdempotencyStore(opts.dynamodb ?? dynamoClient(clientOpts), config.idempotencyTable);
  const service = new MemoryService({
    blobs: new S3BlobStore(s3, config.memoryBucket),
    lock: new DynamoRevLock(dynamodb, config.memoryTable, idempotency),
    cursors: keys instanceof CursorCodec ? keys : new CursorCodec(keys),
    cache: sharedCache,
    limits: config.limits,
    ...opts.overrides,
  });
  return { service, s3, dynamodb, idempotency };
}
