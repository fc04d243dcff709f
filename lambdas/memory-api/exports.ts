import { randomUUID } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { type ExportStream, StorageError } from '../memory';
import { json, type HandlerResponse } from '../shared/http/types';
import { logger } from '../shared/logger';
import { EXPORT_PREFIX, type MemoryApiConfig } from './config';

/**
 * Where an export that is not streamed to its reader goes: an object under `exports/` in the memory
 * bucket (a lifecycle rule expires it after a day) and a short-lived presigned GET URL to it.
 */
export interface ExportStore {
  /**
   * Stores the file as `body` makes it and returns a URL that downloads it, valid for
   * `expiresInSeconds`. A body that fails (or a store that does) leaves nothing under the key.
   */
  publish(file: ExportFile, expiresInSeconds: number): Promise<string>;
}

export interface ExportFile {
  key: string;
  body: AsyncIterable<Uint8Array>;
  contentType: string;
  /** Stored with the object, so the download keeps the attachment file name. */
  contentDisposition: string;
}

/**
 * How the `/v1` transport answers an export (`MEMORY_EXPORT_DELIVERY`):
 *
 * - `stream` (the local server; in AWS the git remote's function URL in RESPONSE_STREAM mode, where
 *   CloudFront sends the export paths): 200 with the file made while it is sent, when its bound fits
 *   `exportStreamMaxBytes` (190 MiB, under Lambda's 200 MB streamed answer); else as a large export.
 * - `buffered` (the `/v1` function behind API Gateway, whose answer is at most 6 MB): inline up to
 *   `exportInlineBytes`, found out by reading that much of it; else as a large export.
 *
 * A large export is written to S3 as it is made (multipart, a part at a time) and answered with a
 * 302 to a presigned URL (DECISIONS). Either way the file passes through a bounded buffer.
 */
export async function deliverExport(
  file: ExportStream & { contentType: string },
  store: ExportStore,
  config: Pick<MemoryApiConfig, 'exportDelivery' | 'exportStreamMaxBytes' | 'exportInlineBytes' | 'exportUrlSeconds'>,
): Promise<HandlerResponse> {
  const disposition = `attachment; filename="${file.filename}"`;
  const headers = { 'content-disposition': disposition, 'cache-control': 'no-store' };
  let body = file.body;
  if (config.exportDelivery === 'stream') {
    const limit = config.exportStreamMaxBytes;
    if (file.maxBytes <= limit || (await file.tighten()) <= limit) return { kind: 'stream', body, contentType: file.contentType, headers };
  } else {
    const start = await readUpTo(body, config.exportInlineBytes);
    if ('bytes' in start) return { kind: 'binary', body: start.bytes, contentType: file.contentType, headers };
    body = start.rest;
  }
  const seconds = config.exportUrlSeconds;
  const url = await store.publish(
    { key: `${EXPORT_PREFIX}${randomUUID()}/${file.filename}`, body, contentType: file.contentType, contentDisposition: disposition },
    seconds,
  );
  return json({ url, expiresAt: new Date(Date.now() + seconds * 1000).toISOString() }, { location: url }, 302);
}

/** The whole body when it is at most `limit` bytes; else what was read followed by the rest, unread. */
async function readUpTo(body: AsyncIterable<Uint8Array>, limit: number): Promise<{ bytes: Buffer } | { rest: AsyncIterable<Uint8Array> }> {
  const it = body[Symbol.asyncIterator]();
  const read: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await it.next();
    if (next.done) return { bytes: Buffer.concat(read) };
    read.push(next.value);
    size += next.value.length;
    if (size > limit) {
      return {
        rest: (async function* () {
          yield* read.splice(0);
          yield* { [Symbol.asyncIterator]: () => it };
        })(),
      };
    }
  }
}

/**
 * The S3 adapter. The file is stored as it is made: one PUT when it is a single part, else a
 * multipart upload of 8 MiB parts, each part sent while the next is made (two parts held at most).
 * Parts are invisible until the upload completes, so an export that fails midway is aborted and
 * leaves no object (and the bucket's lifecycle rule aborts an upload whose function died first).
 * The URL is presigned (SigV4, query string) with the function's own credentials by
 * `@aws-sdk/s3-request-presigner`, against the same client (so the local stack's path-style
 * endpoint is honoured as it is for every other call). The presigner is bundled with the function
 * (as `presigner.js` beside it, lib/memory-api.ts) rather than taken from the Lambda runtime, and
 * loaded on the first large export only, so neither the bundle nor module init pays for a path most
 * requests never take.
 */
type Presigner = typeof import('./presigner');
let presignerModule: Presigner | undefined;

function presigner(): Presigner {
  // A computed specifier, so esbuild leaves the module out of index.js: in AWS it finds presigner.js
  // beside it, from source (tests, the local stack) presigner.ts.
  presignerModule ??= require(['.', 'presigner'].join('/')) as Presigner;
  return presignerModule;
}

/** S3's smallest part but the last is 5 MiB; 8 MiB parts reach 80 GB within its 10,000 parts. */
export const EXPORT_PART_BYTES = 8 * 1024 * 1024;

export class S3ExportStore implements ExportStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly partBytes = EXPORT_PART_BYTES,
  ) {}

  /** An S3 call whose failure is a `StorageError` (503 with Retry-After, as the core's). */
  private async send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw new StorageError(`s3.${operation}`, err);
    }
  }

  async publish(file: ExportFile, expiresInSeconds: number): Promise<string> {
    const parts = inParts(file.body, this.partBytes);
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    const object = { Bucket: this.bucket, Key: file.key };
    if (second.done) {
      await this.s3.send(
        new PutObjectCommand({
          ...object,
          Body: first.done ? Buffer.alloc(0) : first.value,
          ContentType: file.contentType,
          ContentDisposition: file.contentDisposition,
        }),
      );
      return this.presign(file.key, expiresInSeconds);
    }
    const { UploadId } = await this.s3.send(
      new CreateMultipartUploadCommand({ ...object, ContentType: file.contentType, ContentDisposition: file.contentDisposition }),
    );
    const etags: string[] = [];
    const upload = async (n: number, bytes: Buffer): Promise<void> => {
      const out = await this.send('UploadPart', () => this.s3.send(new UploadPartCommand({ ...object, UploadId, PartNumber: n, Body: bytes })));
      etags[n - 1] = out.ETag as string;
    };
    let sending = upload(1, first.value as Buffer);
    sending.catch(() => undefined);
    try {
      let next: IteratorResult<Buffer> = second;
      for (let n = 2; !next.done; n++) {
        await sending;
        sending = upload(n, next.value);
        sending.catch(() => undefined);
        next = await parts.next();
      }
      await sending;
      const done = { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) };
      await this.send('CompleteMultipartUpload', () => this.s3.send(new CompleteMultipartUploadCommand({ ...object, UploadId, MultipartUpload: done })));
    } catch (err) {
      await parts.return(undefined);
      // A part still on its way would outlive the abort.
      await sending.catch(() => undefined);
      await this.s3.send(new AbortMultipartUploadCommand({ ...object, UploadId })).catch((abortErr: unknown) => {
        // Nothing is visible under the key either way; the lifecycle rule removes the parts.
        logger.warn('could not abort the upload of a failed export', { key: file.key, err: abortErr instanceof Error ? abortErr.message : String(abortErr) });
      });
      throw err;
    }
    return this.presign(file.key, expiresInSeconds);
  }

  async presign(key: string, expiresInSeconds: number): Promise<string> {
    const { getSignedUrl } = presigner();
    return getSignedUrl(this.s3, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: Math.floor(expiresInSeconds) });
  }
}

/** The body in parts of at least `size` bytes (the last one may be smaller), each made when asked for. */
async function* inParts(body: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= size) {
      yield Buffer.concat(chunks);
      chunks = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(chunks);
}
