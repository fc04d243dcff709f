/**
 * The small-catalog mode (`searchEngine: 'embedded'`) on the test run's S3 server and DynamoDB
 * Local: the crawler's AWS entry (plan, units, finalize) writes the embedded index snapshot to S3,
 * catalog instances load it, pick up a new generation, and keep serving the one they have when a
 * generation cannot be read. Two reader instances stand for two Lambda instances.
 */
import { searchIndexForReads } from '../../lambdas/catalog-core';
import { EmbeddedSearchIndex } from '../../lambdas/catalog-core/search/embedded';
import { S3SnapshotIndex, S3SnapshotStore, S3SnapshotWriter } from '../../lambdas/catalog-core/search/s3-snapshot';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuckets, ensureTables, tableDefinitions } from '../../bin/local-stack/provision';
import { generateCatalog, toSearchDocument } from '../../bin/local-stack/synthetic';
import { handleCatalogRequest } from '../../lambdas/catalog/api';
import { loadCatalogConfig } from '../../lambdas/catalog/config';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { crawlerTableDefinitions } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import type * as CrawlerHandler from '../../lambdas/crawler/handler';
import { dynamoClient, s3Client, s3Config } from '../../lambdas/shared/aws/clients';
import type { HttpEvent } from '../../lambdas/shared/http/types';
import { CRAWL_METRICS, EVENT_METRICS } from '../../lambdas/shared/observability/metric-names';
import { type MetricsSink, useMetricsSink } from '../../lambdas/shared/observability/metrics';
import { loadFixtureRows, startFakeRegistry, type FakeRegistry } from '../support/crawler-fakes';
import { apiEvent } from '../support/auth-harness';

jest.setTimeout(120_000);

const S3_ENDPOINT = process.env.TEST_S3_ENDPOINT as string;
const DDB_ENDPOINT = process.env.TEST_DYNAMODB_ENDPOINT as string;
const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
const bucket = `snapshots-${id}`.toLowerCase();

function store(key = 'search/catalog-index.json.gz'): S3SnapshotStore {
  return new S3SnapshotStore((mod) => new mod.S3Client(s3Config({ region: 'us-east-1', s3Endpoint: S3_ENDPOINT })), bucket, key);
}

const docs = (n: number, seed = 1) => generateCatalog(n, { seed }).map(toSearchDocument);
const page = { offset: 0, limit: 100 };

const counted: string[] = [];
const sink: MetricsSink = {
  count: (name, value) => counted.push(...Array<string>(Math.max(1, Math.round(value))).fill(name)),
  request: () => undefined,
  flush: () => undefined,
};

beforeAll(async () => {
  if (!S3_ENDPOINT || !DDB_ENDPOINT) throw new Error('test backends are not running (jest globalSetup)');
  const s3 = s3Client({ region: 'us-east-1', s3Endpoint: S3_ENDPOINT });
  await ensureBuckets(s3, [bucket]);
  s3.destroy();
  useMetricsSink(sink);
});

afterAll(() => useMetricsSink(undefined));

describe('the snapshot object', () => {
  it('is read whole, answered "unchanged" for its own ETag, and absent before the first write', async () => {
    const s = store('search/object-test.json.gz');
    expect(await s.get()).toBeUndefined();
    expect(await s.exists()).toBe(false);
    const put = await s.put('{"hello":"world"}', 1);
    expect(put.bytes).toBeGreaterThan(0);
    const got = await s.get();
    if (got === undefined || got === 'unchanged') throw new Error('expected a snapshot');
    expect(got).toMatchObject({ json: '{"hello":"world"}', servers: 1 });
    expect(await s.get(got.etag)).toBe('unchanged');
    await s.put('{"hello":"again"}', 2);
    expect(await s.get(got.etag)).toMatchObject({ json: '{"hello":"again"}', servers: 2 });
    expect(await s.exists()).toBe(true);
  });
});

describe('readers (catalog instances) and the writer', () => {
  it('serve exactly what an in-memory engine over the same documents serves', async () => {
    const key = 'search/same-answers.json.gz';
    const all = docs(120);
    await new S3SnapshotWriter(store(key)).replaceAll(all);
    const reader = new S3SnapshotIndex(store(key));
    await reader.start();
    const reference = new EmbeddedSearchIndex();
    await reference.replaceAll(all);
    for (const sort of ['popularity', 'stars', 'updated', 'name'] as const) {
      expect((await reader.list({ filters: {}, sort, page })).items.map((r) => r.slug)).toEqual(
        (await reference.list({ filters: {}, sort, page })).items.map((r) => r.slug),
      );
    }
    const q = { q: all[3].record.name.split('/')[1] ?? 'server', filters: {}, page };
    expect((await reader.search(q)).items.map((r) => r.slug)).toEqual((await reference.search(q)).items.map((r) => r.slug));
    expect(await reader.facets()).toEqual(await reference.facets());
    expect(await reader.slugs()).toEqual(await reference.slugs());
  });

  it('two instances pick up a new generation after their refresh interval, not before, and say so in generation()', async () => {
    const key = 'search/generations.json.gz';
    const writer = new S3SnapshotWriter(store(key));
    await writer.replaceAll(docs(40));
    let now = 0;
    const readers = [
      new S3SnapshotIndex(store(key), { refreshMs: 60_000, clock: () => now }),
      new S3SnapshotIndex(store(key), { refreshMs: 60_000, clock: () => now }),
    ];
    for (const r of readers) await r.start();
    const before = await Promise.all(readers.map((r) => r.generation()));
    const loads = counted.filter((c) => c === EVENT_METRICS.snapshotLoads).length;

    await writer.replaceAll(docs(55, 2));
    now += 30_000;
    for (const r of readers) {
      expect((await r.list({ filters: {}, sort: 'name', page })).total).toBe(40);
    }
    now += 30_001;
    for (const [i, r] of readers.entries()) {
      expect((await r.list({ filters: {}, sort: 'name', page })).total).toBe(55);
      expect(await r.generation()).not.toBe(before[i]);
    }
    expect(counted.filter((c) => c === EVENT_METRICS.snapshotLoads).length).toBe(loads + 2);
    // Nothing new: the next check is a 304, the generation stays the same object.
    const same = await readers[0].generation();
    now += 60_001;
    expect(await readers[0].generation()).toBe(same);
  });

  it('keep serving the generation they have when a new one cannot be read, and load the next good one', async () => {
    const key = 'search/corrupt.json.gz';
    const s = store(key);
    await new S3SnapshotWriter(s).replaceAll(docs(30));
    let now = 0;
    const reader = new S3SnapshotIndex(store(key), { refreshMs: 1000, clock: () => now });
    await reader.start();
    const failures = counted.filter((c) => c === EVENT_METRICS.snapshotLoadFailures).length;
    await s.put('{"format":"something-else"}', 0);
    now += 1001;
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(30);
    expect(counted.filter((c) => c === EVENT_METRICS.snapshotLoadFailures).length).toBe(failures + 1);
    await new S3SnapshotWriter(s).replaceAll(docs(33, 3));
    now += 1001;
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(33);
  });

  it('start empty before the first snapshot exists, and fail to start (503, retried) when S3 cannot be reached', async () => {
    let now = 0;
    const key = 'search/not-yet.json.gz';
    const reader = new S3SnapshotIndex(store(key), { refreshMs: 1000, clock: () => now });
    await reader.start();
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(0);
    await new S3SnapshotWriter(store(key)).replaceAll(docs(12));
    now += 1001;
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(12);

    const unreachable = new S3SnapshotStore(
      (mod) => new mod.S3Client({ ...s3Config({ region: 'us-east-1', s3Endpoint: 'http://127.0.0.1:9' }), maxAttempts: 1 }),
      bucket,
      key,
    );
    await expect(new S3SnapshotIndex(unreachable).start()).rejects.toThrow(/ECONNREFUSED 127\.0\.0\.1:9/);
  });

  it('are read-only in the catalog function, and the writer is write-only', async () => {
    const reader = new S3SnapshotIndex(store('search/x.json.gz'));
    await expect(reader.upsert()).rejects.toThrow(/read-only/);
    await expect(new S3SnapshotWriter(store()).list()).rejects.toThrow(/write side/);
  });
});

describe("the crawler's AWS entry writes the snapshot; the catalog function serves it", () => {
  const tables = { catalog: `catalog-${id}`, rateLimits: `rate-${id}`, state: `crawl-${id}` };
  const icons = `icons-${id}`.toLowerCase();
  const key = 'search/catalog-index.json.gz';
  let registry: FakeRegistry;
  const saved: Record<string, string | undefined> = {};

  function setEnv(env: Record<string, string>): void {
    for (const [k, v] of Object.entries(env)) {
      if (!(k in saved)) saved[k] = process.env[k];
      process.env[k] = v;
    }
  }

  beforeAll(async () => {
    const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: DDB_ENDPOINT });
    await ensureTables(ddb, [...tableDefinitions({ catalog: tables.catalog, rateLimits: tables.rateLimits }), ...crawlerTableDefinitions(tables.state)]);
    ddb.destroy();
    const s3 = s3Client({ region: 'us-east-1', s3Endpoint: S3_ENDPOINT });
    await ensureBuckets(s3, [icons]);
    s3.destroy();
    registry = await startFakeRegistry(loadFixtureRows());
    setEnv({
      AWS_REGION: 'us-east-1',
      DYNAMODB_ENDPOINT: DDB_ENDPOINT,
      S3_ENDPOINT,
      CATALOG_TABLE: tables.catalog,
      RATE_LIMIT_TABLE: tables.rateLimits,
      CRAWL_STATE_TABLE: tables.state,
      ICONS_BUCKET: icons,
      REGISTRY_URL: registry.url,
      CRAWLER_STEPS: 'none',
      SEARCH_BACKEND: 'embedded',
      SEARCH_SNAPSHOT_BUCKET: bucket,
      SEARCH_SNAPSHOT_KEY: key,
    });
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await registry?.close();
  });

  /** A new Lambda instance of the crawler (its own module registry), whose metrics go to the recording sink. */
  function freshCrawler(): typeof CrawlerHandler {
    let crawler: typeof CrawlerHandler | undefined;
    jest.isolateModules(() => {
      (require('../../lambdas/shared/observability/metrics') as { useMetricsSink: typeof useMetricsSink }).useMetricsSink(sink);
      crawler = require('../../lambdas/crawler/handler') as typeof CrawlerHandler;
    });
    if (!crawler) throw new Error('crawler handler not loaded');
    return crawler;
  }

  /** One state-machine execution: Plan until planned, every unit, Finalize (as lib/crawler/state-machine.ts drives it). */
  async function execution(crawler: typeof CrawlerHandler, mode: 'full' | 'auto'): Promise<Awaited<ReturnType<typeof CrawlerHandler.finalizeHandler>>> {
    let plan = await crawler.handler({ action: 'plan', mode }, { awsRequestId: 'plan' });
    while (!('planned' in plan) || !plan.planned) plan = await crawler.handler({ action: 'plan', mode }, { awsRequestId: 'plan' });
    for (const unit of plan.units) await crawler.handler({ action: 'unit', runId: unit.runId, unitId: unit.unitId }, { awsRequestId: unit.unitId });
    return (await crawler.handler({ action: 'finalize', runId: plan.runId }, { awsRequestId: 'finalize' })) as Awaited<
      ReturnType<typeof CrawlerHandler.finalizeHandler>
    >;
  }

  it('a full crawl writes one snapshot generation with every server, and counts what it did', async () => {
    const crawler = freshCrawler();
    const before = counted.length;
    const report = await execution(crawler, 'full');
    expect(report.counts.added).toBeGreaterThan(0);

    const index = await searchIndexForReads(loadCatalogConfig());
    const listed = await index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 100 } });
    expect(listed.total).toBe(report.counts.added);
    const emitted = counted.slice(before);
    expect(emitted.filter((c) => c === CRAWL_METRICS.succeeded)).toHaveLength(1);
    expect(emitted.filter((c) => c === CRAWL_METRICS.snapshotsWritten)).toHaveLength(1);
    expect(emitted.filter((c) => c === CRAWL_METRICS.added)).toHaveLength(report.counts.added);

    // Through the catalog's own pipeline, as the catalog function serves it.
    const keys = join(process.env.TEST_TMP_DIR as string, `${id}-keys.json`);
    writeFileSync(keys, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
    const deps = await createCatalogDeps({ ...loadCatalogConfig(), cursorKeysFile: keys }, index);
    const res = await handleCatalogRequest(catalogEvent('/api/mcps', 'limit=1'), deps, 'snapshot');
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body as string)).toMatchObject({ success: true, meta: { pagination: { total: report.counts.added } } });
  });

  it('a crawl that removes servers writes a new generation that a running instance picks up; one that changes nothing writes none', async () => {
    const crawler = freshCrawler();
    let now = 0;
    const reader = new S3SnapshotIndex(store(key), { refreshMs: 1000, clock: () => now });
    await reader.start();
    const total = (await reader.list({ filters: {}, sort: 'name', page })).total;

    const rows = loadFixtureRows();
    registry.setRows(rows.slice(0, Math.floor(rows.length / 2)));
    const written = counted.filter((c) => c === CRAWL_METRICS.snapshotsWritten).length;
    const report = await execution(crawler, 'full');
    expect(report.counts.removed).toBeGreaterThan(0);
    expect(counted.filter((c) => c === CRAWL_METRICS.snapshotsWritten).length).toBe(written + 1);
    now += 1001;
    expect((await reader.list({ filters: {}, sort: 'name', page })).total).toBe(total - report.counts.removed);

    const again = await execution(crawler, 'full');
    expect(again.counts.added + again.counts.updated + again.counts.removed).toBe(0);
    expect(counted.filter((c) => c === CRAWL_METRICS.snapshotsWritten).length).toBe(written + 1);
  });
});

function catalogEvent(path: string, query: string): HttpEvent {
  return apiEvent('GET', path, { query, routeKey: `GET ${path}`, requestId: 'req' });
}
