/**
 * A crawler wired to the test run's DynamoDB Local and S3 server (tables and bucket of its own)
 * and to the loopback fakes, with every catalog write counted.
 */

import {
  DynamoCatalogStore,
  S3IconStore,
  type CatalogStore,
  type CatalogWrite,
  type IconStore,
  type SearchIndex,
  type CatalogDetail,
  type SearchDocument,
  embeddedSearchIndex,
  type EmbeddedSearchIndex,
} from '../../lambdas/catalog-core';
import { randomBytes } from 'node:crypto';
import { DynamoCrawlState, crawlerTableDefinitions } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import { loadCrawlerConfig, type CrawlerConfig } from '../../lambdas/crawler/config';
import type { Crawler } from '../../lambdas/crawler/crawler';
import type { CrawlerSettings } from '../../lambdas/crawler/settings';
import type { Clock, CrawlStateStore } from '../../lambdas/crawler/domain/ports';
import { MemoryCrawlState } from '../../lambdas/crawler/adapters/memory-crawl-state';
import type { HttpClient } from '../../lambdas/crawler/http/http-client';
import { createCrawler } from '../../lambdas/crawler/wiring';
import { documentClient, dynamoClient, s3Client, s3Config } from '../../lambdas/shared/aws/clients';
import { ensureBuckets, ensureTables, tableDefinitions } from '../../bin/local-stack/provision';
import { pointRowsAtFakes, startFakeRegistry, startFakeUpstreams, type FakeRegistry, type FakeUpstreams } from './crawler-fakes';

export interface WriteCounts {
  storePut: number;
  storeDelete: number;
  indexUpsert: number;
  indexRemove: number;
  iconsStored: number;
}

export class CountingStore implements CatalogStore {
  constructor(
    private readonly inner: CatalogStore,
    private readonly counts: WriteCounts,
    /** Throws (once per entry) before the n-th put call: fault injection. */
    public failOnPut: Set<number> = new Set(),
  ) {}
  private puts = 0;
  get(slug: string): Promise<CatalogDetail | undefined> {
    return this.inner.get(slug);
  }
  getRecord(slug: string) {
    return this.inner.getRecord(slug);
  }
  async put(entries: CatalogWrite[]): Promise<void> {
    this.puts++;
    if (this.failOnPut.delete(this.puts)) throw new Error(`injected store failure on put #${this.puts}`);
    this.counts.storePut += entries.length;
    await this.inner.put(entries);
  }
  async delete(slugs: string[]): Promise<void> {
    this.counts.storeDelete += slugs.length;
    await this.inner.delete(slugs);
  }
  scanAll(): AsyncIterable<CatalogDetail> {
    return this.inner.scanAll();
  }
  anyRecord() {
    return this.inner.anyRecord();
  }
}

export class CountingIndex implements SearchIndex {
  constructor(
    readonly inner: SearchIndex,
    private readonly counts: WriteCounts,
  ) {}
  async upsert(docs: SearchDocument[]) {
    this.counts.indexUpsert += docs.length;
    await this.inner.upsert(docs);
  }
  async remove(slugs: string[]) {
    this.counts.indexRemove += slugs.length;
    await this.inner.remove(slugs);
  }
  replaceAll(docs: SearchDocument[]) {
    return this.inner.replaceAll(docs);
  }
  list(q: Parameters<SearchIndex['list']>[0]) {
    return this.inner.list(q);
  }
  search(q: Parameters<SearchIndex['search']>[0]) {
    return this.inner.search(q);
  }
  autocomplete(prefix: string, limit: number) {
    return this.inner.autocomplete(prefix, limit);
  }
  facets() {
    return this.inner.facets();
  }
  slugs() {
    return this.inner.slugs();
  }
  registryPage(q: Parameters<SearchIndex['registryPage']>[0]) {
    return this.inner.registryPage(q);
  }
}

export class CountingIcons implements IconStore {
  constructor(
    readonly inner: IconStore,
    private readonly counts: WriteCounts,
  ) {}
  get(slug: string) {
    return this.inner.get(slug);
  }
  has(slug: string) {
    return this.inner.has(slug);
  }
  async putIfAbsent(slug: string, webp: Uint8Array) {
    const stored = await this.inner.putIfAbsent(slug, webp);
    if (stored) this.counts.iconsStored++;
    return stored;
  }
  remove(slugs: string[]) {
    return this.inner.remove(slugs);
  }
}

export class TestClock implements Clock {
  constructor(private t: number) {}
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface CrawlerEnv extends Omit<FakeUpstreams, 'close'> {
  registry: FakeRegistry;
  /** The rows as served (pointed at the fakes). */
  rows: unknown[];
  config: CrawlerConfig;
  clock: TestClock;
  counts: WriteCounts;
  store: CountingStore;
  rawStore: DynamoCatalogStore;
  index: EmbeddedSearchIndex;
  iconStore: S3IconStore;
  state: CrawlStateStore;
  /** A fresh crawler on the same backends (as a new process would build). */
  newCrawler(settings?: Partial<CrawlerSettings>): { crawler: Crawler; http: HttpClient };
  resetCounts(): void;
  close(): Promise<void>;
}

let counter = 0;

export async function startCrawlerEnv(
  sourceRows: unknown[],
  opts: {
    env?: Record<string, string>;
    settings?: Partial<CrawlerSettings>;
    now?: string;
    latestOnly?: boolean;
    memoryState?: boolean;
    /** `hang`: slow MCP remotes never answer and the crawler's health timeout ends them (the benchmark, with the production timeouts). */
    slowRemotes?: 'drop' | 'hang';
  } = {},
): Promise<CrawlerEnv> {
  const ddbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  const s3Endpoint = process.env.TEST_S3_ENDPOINT;
  if (!ddbEndpoint || !s3Endpoint) throw new Error('test backends are not running (jest globalSetup)');
  const id = `${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`;
  const region = 'us-east-1';
  const clientOpts = { region, dynamoEndpoint: ddbEndpoint, s3Endpoint };
  const ddb = dynamoClient(clientOpts);
  const s3 = s3Client(clientOpts);
  const names = { catalog: `catalog-${id}`, rateLimits: `rate-${id}`, state: `crawl-${id}`, bucket: `icons-${id}`.toLowerCase() };
  await ensureTables(ddb, [tableDefinitions({ catalog: names.catalog, rateLimits: names.rateLimits })[0], ...crawlerTableDefinitions(names.state)]);
  await ensureBuckets(s3, [names.bucket]);
  s3.destroy();

  const upstreams = await startFakeUpstreams(opts.slowRemotes === 'hang' ? {} : { slowDropAfterMs: 250 });
  const { icons, github, downloads, mcp } = upstreams;
  const rows = pointRowsAtFakes(sourceRows, mcp, icons);
  const registry = await startFakeRegistry(rows, { ...(opts.latestOnly !== undefined && { latestOnly: opts.latestOnly }) });

  const config = loadCrawlerConfig({
    REGISTRY_URL: registry.url,
    GITHUB_API_URL: github.url,
    NPM_DOWNLOADS_URL: downloads.url,
    PYPI_STATS_URL: downloads.url,
    CRAWL_STATE_TABLE: names.state,
    CRAWLER_ALLOW_PRIVATE_HOSTS: 'true',
    // Timeouts no fake reaches, however loaded the machine: every fake answers or fails of its own
    // accord (the slow MCP remotes drop their connection), so a crawl's outcome is the fakes', never
    // the clock's. With the production defaults (10 s, 5 s), one late answer among hundreds turned a
    // success into a failure (health.live, part of the content hash) and a re-crawl wrote. The
    // timeouts themselves are tested in crawler-http.test.ts and crawler-adapters.test.ts.
    CRAWLER_HTTP_TIMEOUT_MS: '120000',
    CRAWLER_HEALTH_TIMEOUT_MS: '120000',
    CRAWLER_RETRY_BASE_MS: '5',
    CRAWLER_HOST_CONCURRENCY: '8',
    GITHUB_TOKEN: 'test-token',
    ...opts.env,
  });
  const clock = new TestClock(Date.parse(opts.now ?? '2025-10-22T12:00:00.000Z'));
  const counts: WriteCounts = { storePut: 0, storeDelete: 0, indexUpsert: 0, indexRemove: 0, iconsStored: 0 };
  const doc = documentClient(ddb);
  const rawStore = new DynamoCatalogStore(doc, names.catalog);
  const store = new CountingStore(rawStore, counts);
  const index = embeddedSearchIndex({});
  const iconStore = new S3IconStore((mod) => new mod.S3Client(s3Config(clientOpts)), names.bucket);
  const state: CrawlStateStore = opts.memoryState
    ? new MemoryCrawlState()
    : new DynamoCrawlState(doc, names.state, () => Math.floor(clock.now().getTime() / 1000));
  const countingIndex = new CountingIndex(index, counts);
  const countingIcons = new CountingIcons(iconStore, counts);
  const newCrawler = (settings?: Partial<CrawlerSettings>) =>
    createCrawler(config, {
      store,
      index: countingIndex,
      icons: countingIcons,
      state,
      clock,
      region,
      settings: { ...opts.settings, ...settings },
    });
  return {
    registry,
    github,
    icons,
    downloads,
    mcp,
    rows,
    config,
    clock,
    counts,
    store,
    rawStore,
    index,
    iconStore,
    state,
    newCrawler,
    resetCounts: () => {
      for (const k of Object.keys(counts) as Array<keyof WriteCounts>) counts[k] = 0;
    },
    close: async () => {
      await Promise.all([registry.close(), upstreams.close()]);
      await iconStore.destroy();
      ddb.destroy();
    },
  };
}

/** Every record in the store, by name. */
export async function catalogByName(store: CatalogStore): Promise<Map<string, CatalogDetail>> {
  const out = new Map<string, CatalogDetail>();
  for await (const d of store.scanAll()) out.set(d.record.name, d);
  return out;
}
