import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type DeleteObjectsCommandOutput,
  type ListObjectsV2CommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { jitteredBackoffMs, sleep } from '../../shared/concurrency';
import { StorageError } from '../errors';
import type { BlobItem, BlobKind, BlobStore, StoredItem } from '../ports';
import { objectKey, packPrefix, parseObjectKey } from '../tables';

/** Immutable content-addressed bytes: cacheable forever by anyone who may read them. */
const IMMUTABLE = 'private, max-age=31536000, immutable';

const CONTENT_TYPES: Record<BlobKind, string> = {
  object: 'application/x-git-loose-object',
  index: 'application/gzip',
  lineage: 'application/octet-stream',
  segment: 'application/gzip',
  pack: 'application/x-git-packed-objects',
  'pack-index': 'application/x-git-packed-objects-toc',
};

/**
 * Git objects and indexes in S3 (key layout in `tables.ts`). Objects are immutable and named by
 * their hash, so writes need no condition and a repeated write is harmless; the only mutable state
 * of a memory is its rev-lock item.
 */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly concurrency = 32,
  ) {}

  async get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined> {
    // The SDK retries a request that fails; a body cut off while it streams ("aborted") is not
    // retried by it, so it is here, twice.
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(memoryId, kind, sha) }));
        return out.Body ? await out.Body.transformToByteArray() : undefined;
      } catch (err) {
        if (isMissing(err)) return undefined;
        if (attempt >= 3 || !isCutOff(err)) throw new StorageError('s3.GetObject', err);
        await sleep(jitteredBackoffMs(attempt, 20, 200));
      }
    }
  }

  async list(memoryId: string, _kind: 'pack-index'): Promise<string[]> {
    const prefix = packPrefix(memoryId);
    const out: string[] = [];
    let token: string | undefined;
    do {
      let page: { Contents?: Array<{ Key?: string }>; NextContinuationToken?: string };
      try {
        page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      } catch (err) {
        throw new StorageError('s3.ListObjectsV2', err);
      }
      for (const o of page.Contents ?? []) {
        const m = PACK_INDEX_NAME.exec((o.Key ?? '').slice(prefix.length));
        if (m) out.push(m[1]);
      }
      token = page.NextContinuationToken;
    } while (token);
    return out;
  }

  async putMany(memoryId: string, items: readonly BlobItem[]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) {
        const item = items[next++];
        try {
          await this.s3.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: objectKey(memoryId, item.kind, item.sha),
              Body: item.body,
              // No Content-Encoding on indexes and segments: no HTTP layer may transparently inflate them.
              ContentType: CONTENT_TYPES[item.kind],
              CacheControl: IMMUTABLE,
            }),
          );
        } catch (err) {
          throw new StorageError('s3.PutObject', err);
        }
      }
    };
    const results = await Promise.allSettled(Array.from({ length: Math.min(this.concurrency, items.length) }, worker));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Every item under the memory's prefix (the sweep, `sweep.ts`). */
  async *listStored(memoryId: string): AsyncIterable<StoredItem> {
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `m/${memoryId}/`, ContinuationToken: token }));
      } catch (err) {
        throw new StorageError('s3.ListObjectsV2', err);
      }
      for (const o of page.Contents ?? []) {
        const parsed = o.Key ? parseObjectKey(memoryId, o.Key) : undefined;
        if (parsed) yield { ...parsed, modifiedMs: o.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
    } while (token);
  }

  /**
   * The sweep's deletes, run by an operator: the functions that serve memories may not delete (an
   * explicit Deny). In a deployment's versioned bucket this leaves delete markers: the versions
   * stay for the bucket's noncurrent-version retention (the restore window), then expire.
   */
  async deleteMany(memoryId: string, items: readonly StoredItem[]): Promise<void> {
    for (let i = 0; i < items.length; i += 1000) {
      const chunk = items.slice(i, i + 1000);
      let out: DeleteObjectsCommandOutput;
      try {
        out = await this.s3.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: chunk.map((it) => ({ Key: objectKey(memoryId, it.kind, it.sha) })), Quiet: true },
          }),
        );
      } catch (err) {
        throw new StorageError('s3.DeleteObjects', err);
      }
      const failed = out.Errors ?? [];
      if (failed.length > 0) throw new StorageError('s3.DeleteObjects', new Error(`${failed.length} not deleted, e.g. ${failed[0].Key}: ${failed[0].Message}`));
    }
  }
}

export const PACK_INDEX_NAME = /^pack-([0-9a-f]{40})\.idx$/;

function isCutOff(err: unknown): boolean {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  return (
    e?.$metadata?.httpStatusCode === undefined &&
    (e?.message === 'aborted' || e?.code === 'ECONNRESET' || e?.name === 'AbortError' || e?.code === 'ERR_STREAM_PREMATURE_CLOSE')
  );
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
