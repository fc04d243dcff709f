/**
 * The embedded engine in AWS (the small-catalog mode, `searchEngine: 'embedded'`): no OpenSearch
 * domain; the whole index is one gzipped snapshot object in S3 (the same format as the local
 * snapshot file), written whole by the crawler's finalize and by `npm run reindex`, and read whole
 * by every catalog instance.
 *
 * - The writer (`S3SnapshotWriter`) builds the index in memory from every document DynamoDB holds
 *   (the source of truth) and replaces the object with one PUT: readers see the old or the new
 *   snapshot, never a mix. Upserts and removals of single servers are no-ops: the crawler's units
 *   write DynamoDB, and finalize rebuilds the snapshot from it once per crawl.
 * - The reader (`S3SnapshotIndex`) loads the object when its instance starts, then at most every
 *   `refreshMs` asks S3 whether it changed (a GET with `If-None-Match`: a 304 costs no body) and,
 *   when it did, loads the new generation and swaps it in whole. The request that finds a new
 *   generation pays its load; a generation that cannot be loaded is logged and counted, and the
 *   instance keeps serving the one it has. Lambda freezes an instance between requests, so the
 *   check runs on the request path rather than in the background.
 */
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { logger } from '../../shared/logger';
import { EVENT_METRICS } from '../../shared/observability/metric-names';
import { countMetric } from '../../shared/observability/metrics';
import type { ListQuery, PageResult, RegistryQuery, SearchIndex, TextQuery } from '../domain/ports';
import type { CatalogRecord, Facets, SearchDocument, SlugEntry } from '../domain/types';
import { EmbeddedSearchIndex } from './embedded';
import { decodeSnapshot } from './snapshot-file';

type S3Module = typeof import('@aws-sdk/client-s3');

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** Where the snapshot lives: `SEARCH_SNAPSHOT_BUCKET` and `SEARCH_SNAPSHOT_KEY` (set by CDK). */
export const DEFAULT_SNAPSHOT_KEY = 'search/catalog-index.json.gz';

export interface SnapshotVersion {
  /** The object's ETag: a new one for every PUT. */
  etag: string;
  /** The snapshot's JSON text. */
  json: string;
  /** Servers in it (object metadata), when the writer recorded it. */
  servers?: number;
}

/** One snapshot object in S3: read conditionally by ETag, replaced whole. */
export class S3SnapshotStore {
  private sdk?: Promise<{ mod: S3Module; client: S3Client }>;

  constructor(
    private readonly makeClient: (mod: S3Module) => S3Client,
    readonly bucket: string,
    readonly key: string = DEFAULT_SNAPSHOT_KEY,
  ) {}

  get location(): string {
    return `s3://${this.bucket}/${this.key}`;
  }

  private load(): Promise<{ mod: S3Module; client: S3Client }> {
    this.sdk ??= import('@aws-sdk/client-s3').then((mod) => ({ mod, client: this.makeClient(mod) }));
    return this.sdk;
  }

  /** Replaces the snapshot; returns the new ETag and the compressed size. */
  async put(json: string, servers: number): Promise<{ etag?: string; bytes: number }> {
    const { mod, client } = await this.load();
    const body = await gzipAsync(Buffer.from(json, 'utf8'));
    const out = await client.send(
      new mod.PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key,
        Body: body,
        ContentType: 'application/gzip',
        Metadata: { servers: String(servers) },
      }),
    );
    return { ...(out.ETag !== undefined && { etag: out.ETag }), bytes: body.length };
  }

  /**
   * The current snapshot, `'unchanged'` when its ETag is still `ifNoneMatch`, or `undefined` when
   * no snapshot has been written yet.
   */
  async get(ifNoneMatch?: string): Promise<SnapshotVersion | 'unchanged' | undefined> {
    const { mod, client } = await this.load();
    try {
      const out = await client.send(
        new mod.GetObjectCommand({ Bucket: this.bucket, Key: this.key, ...(ifNoneMatch !== undefined && { IfNoneMatch: ifNoneMatch }) }),
      );
      const gz = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
      const json = (await gunzipAsync(gz)).toString('utf8');
      const servers = Number(out.Metadata?.servers);
      return { etag: out.ETag ?? `"unknown-${Date.now()}"`, json, ...(Number.isInteger(servers) && { servers }) };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const name = (err as { name?: string }).name;
      if (status === 304 || name === 'NotModified') return 'unchanged';
      if (status === 404 || name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  /** Whether a snapshot exists (a HEAD). */
  async exists(): Promise<boolean> {
    const { mod, client } = await this.load();
    try {
      await client.send(new mod.HeadObjectCommand({ Bucket: this.bucket, Key: this.key }));
      return true;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (err as { name?: string }).name === 'NotFound') return false;
      throw err;
    }
  }
}

const READ_ONLY = 'the S3 snapshot index is read-only in the catalog function: the crawler and `npm run reindex` write it';
const WRITE_ONLY = 'the S3 snapshot writer is the write side only: the catalog function reads through S3SnapshotIndex';

export interface S3SnapshotIndexOptions {
  /** How often an instance asks S3 for a new generation (SEARCH_SNAPSHOT_REFRESH_SECONDS). @default 60 s */
  refreshMs?: number;
  /** Milliseconds since the epoch (tests). */
  clock?: () => number;
}

/** The catalog function's read side: the embedded engine over the S3 snapshot's current generation. */
export class S3SnapshotIndex implements SearchIndex {
  private current = new EmbeddedSearchIndex();
  private etag: string | undefined;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;
  private readonly refreshMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly store: S3SnapshotStore,
    options: S3SnapshotIndexOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * The first load, at the instance's start: an unreachable bucket fails it (the function answers
   * 503 and the next request tries again); a missing snapshot is an empty catalog until the first
   * crawl writes one.
   */
  async start(): Promise<void> {
    await this.check(true);
  }

  /** The ETag of the generation being served (undefined before any snapshot exists). */
  get generationTag(): string | undefined {
    return this.etag;
  }

  private fresh(): Promise<void> {
    if (this.clock() - this.checkedAt < this.refreshMs) return Promise.resolve();
    this.pending ??= this.check(false).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async check(first: boolean): Promise<void> {
    const started = performance.now();
    let got: Awaited<ReturnType<S3SnapshotStore['get']>>;
    try {
      got = await this.store.get(this.etag);
    } catch (err) {
      // Checked again after another interval, not on every request.
      this.checkedAt = this.clock();
      if (first) throw err;
      countMetric(EVENT_METRICS.snapshotLoadFailures);
      logger.warn('search snapshot check failed; serving the generation loaded before', { location: this.store.location, err: describe(err) });
      return;
    }
    this.checkedAt = this.clock();
    if (got === 'unchanged') return;
    if (got === undefined) {
      if (first) logger.warn('no search snapshot yet: the catalog is empty until a crawl or `npm run reindex` writes one', { location: this.store.location });
      return;
    }
    try {
      const loaded = decodeSnapshot(got.json, this.store.location, got.etag);
      this.current = new EmbeddedSearchIndex({ loaded });
      this.etag = got.etag;
      countMetric(EVENT_METRICS.snapshotLoads);
      logger.info('search snapshot loaded', {
        location: this.store.location,
        etag: got.etag,
        servers: loaded.entries.size,
        ms: Math.round(performance.now() - started),
      });
    } catch (err) {
      // A snapshot this code cannot read (a newer format mid-deploy, a truncated object): keep
      // serving what we have and do not retry until the object changes again.
      this.etag = got.etag;
      countMetric(EVENT_METRICS.snapshotLoadFailures);
      logger.error('search snapshot could not be loaded; serving the generation loaded before', { location: this.store.location, err: describe(err) });
    }
  }

  async generation(): Promise<object> {
    await this.fresh();
    return this.current.generation();
  }

  async list(q: ListQuery): Promise<PageResult> {
    await this.fresh();
    return this.current.list(q);
  }

  async search(q: TextQuery): Promise<PageResult> {
    await this.fresh();
    return this.current.search(q);
  }

  async autocomplete(prefix: string, limit: number): Promise<CatalogRecord[]> {
    await this.fresh();
    return this.current.autocomplete(prefix, limit);
  }

  async facets(): Promise<Facets> {
    await this.fresh();
    return this.current.facets();
  }

  async slugs(): Promise<SlugEntry[]> {
    await this.fresh();
    return this.current.slugs();
  }

  async registryPage(q: RegistryQuery): Promise<CatalogRecord[]> {
    await this.fresh();
    return this.current.registryPage(q);
  }

  async upsert(): Promise<void> {
    throw new Error(READ_ONLY);
  }

  async remove(): Promise<void> {
    throw new Error(READ_ONLY);
  }

  async replaceAll(): Promise<void> {
    throw new Error(READ_ONLY);
  }
}

/**
 * The write side for the crawler and `npm run reindex`: `replaceAll` builds the whole index and
 * writes it as the new generation; single upserts and removals are left to the next rebuild.
 */
export class S3SnapshotWriter implements SearchIndex {
  constructor(private readonly store: S3SnapshotStore) {}

  /** Nothing to do per server: DynamoDB has the change, and the next rebuild takes it. */
  async upsert(_docs: SearchDocument[]): Promise<void> {}

  async remove(_slugs: string[]): Promise<void> {}

  async replaceAll(docs: SearchDocument[]): Promise<void> {
    const index = new EmbeddedSearchIndex();
    await index.replaceAll(docs);
    const started = performance.now();
    const written = await this.store.put(index.encodeSnapshot(), docs.length);
    logger.info('search snapshot written', {
      location: this.store.location,
      servers: docs.length,
      bytes: written.bytes,
      ms: Math.round(performance.now() - started),
    });
  }

  /** Whether any snapshot has been written yet (a crawl with no change still writes the first one). */
  exists(): Promise<boolean> {
    return this.store.exists();
  }

  list(): Promise<PageResult> {
    return Promise.reject(new Error(WRITE_ONLY));
  }

  search(): Promise<PageResult> {
    return Promise.reject(new Error(WRITE_ONLY));
  }

  autocomplete(): Promise<CatalogRecord[]> {
    return Promise.reject(new Error(WRITE_ONLY));
  }

  facets(): Promise<Facets> {
    return Promise.reject(new Error(WRITE_ONLY));
  }

  slugs(): Promise<SlugEntry[]> {
    return Promise.reject(new Error(WRITE_ONLY));
  }

  registryPage(): Promise<CatalogRecord[]> {
    return Promise.reject(new Error(WRITE_ONLY));
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
