import { createHash, randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parseAllowList, type AllowList } from './allow-list';

/**
 * The allow-list file in S3 (one object; local: the S3 server under `DATA_DIR`), and the writes of
 * the admin API made safe between instances.
 *
 * The file is the truth: an operator may also upload it with any S3 client, and every reader sees
 * that. Its ETag is the object's own. A replace is conditional on the ETag the editor read
 * (If-Match) or on there being none (If-None-Match: *); the check and the write happen while the
 * writer holds a short lease in DynamoDB (a conditional item in the rate-limits table), so two
 * instances that replace it at once are serialised and the second one, whose ETag is now stale,
 * gets a conflict: no edit is lost. A lease, not S3's own conditional PUT: the S3-protocol server
 * the local stack and the tests run on does not honour If-Match on PUT, and one mechanism
 * everywhere is the one that is tested. A writer that dies holding the lease blocks the next one for
 * `leaseMs` at most; a writer that outlives its lease before the PUT gives up instead of writing.
 */
export interface StoredAllowList {
  /** The file as the operator wrote it. */
  text: string;
  /** `application/json` or `application/yaml`, as it was stored. */
  contentType: string;
  /** The object's ETag, quoted (an HTTP entity tag). */
  etag: string;
}

/** What a replace is conditional on: the ETag read (`*`: any file), or that no file exists yet. */
export type ReplaceCondition = { ifMatch: string } | { ifNoneMatch: '*' };

/** The replace lost: the file is not (or no longer) the one the condition names. */
export class AllowListConflict extends Error {
  constructor(readonly current: string | undefined) {
    super(
      current
        ? 'The allow-list changed since it was read: read it again and reapply the edit'
        : 'There is no allow-list to match; create it with If-None-Match: *',
    );
    this.name = 'AllowListConflict';
  }
}

/** Another writer held the lease for longer than this writer could wait, or a read kept meeting a replace half made: retry shortly. */
export class AllowListBusy extends Error {
  constructor() {
    super('Another edit of the allow-list is in progress; retry shortly');
    this.name = 'AllowListBusy';
  }
}

export interface AllowListLocation {
  bucket: string;
  key: string;
}

/** What a writer needs besides the file: the lease. Readers (the site, the catalog) go without. */
export interface AllowListLeaseOptions {
  doc: DynamoDBDocumentClient;
  /** The table holding the writers' lease (`pk`, TTL on `expiresAt`: the rate-limits table). */
  table: string;
  /** How long a lease lasts (longer than a whole S3 PUT with its retries). */
  leaseMs?: number;
  /** How long a writer waits for the lease before it answers busy. */
  waitMs?: number;
  clock?: () => number;
}

type S3Module = typeof import('@aws-sdk/client-s3');

export class S3AllowListStore {
  private sdk?: Promise<{ mod: S3Module; client: S3Client }>;
  private readonly leaseMs: number;
  private readonly waitMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly makeClient: (mod: S3Module) => S3Client,
    private readonly opts: AllowListLocation,
    private readonly lease?: AllowListLeaseOptions,
  ) {
    this.leaseMs = lease?.leaseMs ?? 30_000;
    this.waitMs = lease?.waitMs ?? 5_000;
    this.clock = lease?.clock ?? Date.now;
  }

  private lockOptions(): AllowListLeaseOptions {
    if (!this.lease) throw new Error('this allow-list store reads only: it was built without a lease table');
    return this.lease;
  }

  private load(): Promise<{ mod: S3Module; client: S3Client }> {
    // Loaded on first use: the site and the catalog read the file rarely (a cache in front of this).
    this.sdk ??= import('@aws-sdk/client-s3').then((mod) => ({ mod, client: this.makeClient(mod) }));
    return this.sdk;
  }

  /** The file, or undefined when there is none; `unchanged` when its ETag is still `known`. */
  async read(known?: string): Promise<StoredAllowList | undefined | 'unchanged'> {
    const { mod, client } = await this.load();
    // A body that does not hash to its ETag (a single-part upload's is the MD5 of its bytes) is read
    // again: the loopback S3 server writes an object in place, and a read racing a replace there got
    // half a file, or an error. S3 itself never serves a partial object; the check costs one MD5.
    // Only where the ETag is the MD5: unencrypted or SSE-S3 (the settings bucket's); under SSE-KMS
    // or SSE-C it is not, and the body is taken as S3 serves it.
    // Each read again waits a little longer (20, 40, … ms: about 1.4 s in all), so that a replace
    // slowed by a loaded machine can finish; a body that still does not match is never answered.
    const READS = 8;
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await client.send(new mod.GetObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.key, ...(known && { IfNoneMatch: known }) }));
        const bytes = out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
        const etag = out.ETag ?? '""';
        if (bodyMatches(bytes, etag, out.SSECustomerAlgorithm === undefined && (out.ServerSideEncryption ?? 'AES256') === 'AES256')) {
          return { text: bytes.toString('utf8'), contentType: out.ContentType ?? 'application/yaml', etag };
        }
        if (attempt >= READS) throw new AllowListBusy();
      } catch (err) {
        if (err instanceof AllowListBusy) throw err;
        if (status(err) === 304) return 'unchanged';
        if (isMissing(err)) return undefined;
        // The same race there can fail the read outright (a body cut off mid-stream): read again.
        if (attempt >= READS) throw err;
      }
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }

  /** The current ETag, or undefined when there is no file. */
  private async etag(): Promise<string | undefined> {
    const { mod, client } = await this.load();
    try {
      return (await client.send(new mod.HeadObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.key }))).ETag;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /**
   * Replaces the file when `condition` holds, and returns the new ETag. `text` must already be a
   * valid allow-list (the caller parsed it: its errors are the caller's to word).
   */
  async replace(text: string, contentType: string, condition: ReplaceCondition): Promise<string> {
    const lease = await this.acquire();
    try {
      const current = await this.etag();
      const holds =
        'ifMatch' in condition ? current !== undefined && (condition.ifMatch === '*' || sameTag(condition.ifMatch, current)) : current === undefined;
      if (!holds) throw new AllowListConflict(current);
      // The PUT may take the S3 client's whole budget: start it only with most of the lease left.
      if (this.clock() > lease.until - this.leaseMs / 2) throw new AllowListBusy();
      const { mod, client } = await this.load();
      const out = await client.send(
        new mod.PutObjectCommand({ Bucket: this.opts.bucket, Key: this.opts.key, Body: text, ContentType: contentType, CacheControl: 'no-store' }),
      );
      return out.ETag ?? (await this.etag()) ?? '""';
    } finally {
      await this.release(lease.owner);
    }
  }

  private lockKey(): string {
    return `org-allow-list#${this.opts.bucket}/${this.opts.key}`;
  }

  private async acquire(): Promise<{ owner: string; until: number }> {
    const owner = randomUUID();
    const deadline = this.clock() + this.waitMs;
    let pause = 20;
    for (;;) {
      const now = this.clock();
      const until = now + this.leaseMs;
      try {
        await this.lockOptions().doc.send(
          new UpdateCommand({
            TableName: this.lockOptions().table,
            Key: { pk: this.lockKey() },
            UpdateExpression: 'SET #owner = :owner, #until = :until, expiresAt = :expires',
            ConditionExpression: 'attribute_not_exists(pk) OR #until < :now',
            ExpressionAttributeNames: { '#owner': 'owner', '#until': 'until' },
            ExpressionAttributeValues: { ':owner': owner, ':until': until, ':now': now, ':expires': Math.ceil(until / 1000) + 60 },
          }),
        );
        return { owner, until };
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
      if (this.clock() + pause > deadline) throw new AllowListBusy();
      await new Promise((r) => setTimeout(r, pause + Math.floor(Math.random() * pause)));
      pause = Math.min(pause * 2, 200);
    }
  }

  private async release(owner: string): Promise<void> {
    try {
      await this.lockOptions().doc.send(
        new DeleteCommand({
          TableName: this.lockOptions().table,
          Key: { pk: this.lockKey() },
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':owner': owner },
        }),
      );
    } catch (err) {
      // Someone took it over after our lease ran out: theirs now, nothing of ours to release.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async destroy(): Promise<void> {
    if (this.sdk) (await this.sdk).client.destroy();
  }
}

/** Entity tags compared strongly, quotes optional (some clients drop them), `W/` refused. */
export function sameTag(given: string, current: string): boolean {
  const bare = (t: string) => t.trim().replace(/^"(.*)"$/, '$1');
  return !given.trim().startsWith('W/') && bare(given) === bare(current);
}

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || status(err) === 404;
}

/**
 * The allow-list as one instance serves it: read once, then asked of S3 again (a conditional GET,
 * 304 when unchanged) at most every `refreshMs`. A file that does not parse (an upload around the
 * admin API) keeps the last good list, or none; `undefined`: the organisation has no allow-list.
 */
export class CachedAllowList {
  private state?: { at: number; etag?: string; list?: AllowList };
  private pending?: Promise<AllowList | undefined>;

  constructor(
    private readonly store: Pick<S3AllowListStore, 'read'>,
    private readonly refreshMs: number,
    private readonly onInvalid: (err: unknown) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  async current(): Promise<AllowList | undefined> {
    if (this.state && this.clock() - this.state.at < this.refreshMs) return this.state.list;
    this.pending ??= this.refresh().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** After a replace through this instance: serve the new file at once, not after the refresh. */
  remember(etag: string, list: AllowList): void {
    this.state = { at: this.clock(), etag, list };
  }

  private async refresh(): Promise<AllowList | undefined> {
    const got = await this.store.read(this.state?.etag);
    const at = this.clock();
    if (got === 'unchanged') {
      this.state = { ...(this.state as { etag?: string; list?: AllowList }), at };
    } else if (got === undefined) {
      this.state = { at };
    } else {
      try {
        this.state = { at, etag: got.etag, list: parseAllowList(got.text) };
      } catch (err) {
        this.onInvalid(err);
        this.state = { at, etag: got.etag, list: this.state?.list };
      }
    }
    return this.state.list;
  }
}

/**
 * Whether a read body is the object its ETag names. Unencrypted or under SSE-S3 an ETag is the MD5
 * of a single-part upload's bytes or, for a multipart upload, `<hex>-<parts>` (no MD5 of the body:
 * taken as served); anything else there is no ETag S3 gives, but what the loopback S3 server
 * answers while it rewrites the object's checksum file (`""`): read again. Under SSE-KMS or SSE-C
 * the ETag is no MD5 and the body is taken as S3 serves it (S3 never serves part of an object).
 */
export function bodyMatches(bytes: Uint8Array, etag: string, etagIsMd5: boolean): boolean {
  if (!etagIsMd5) return true;
  const m = /^"([0-9a-f]{32})(-\d+)?"$/.exec(etag);
  if (m === null) return false;
  return m[2] !== undefined || createHash('md5').update(bytes).digest('hex') === m[1];
}
