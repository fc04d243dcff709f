import { embeddedSearchIndex, renderIcon, type ReadmeContent } from '../../lambdas/catalog-core';
import { randomBytes } from 'node:crypto';
import { ensureTables } from '../../bin/local-stack/provision';
import { crawlerTableDefinitions, DynamoCrawlState } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import { MemoryCrawlState } from '../../lambdas/crawler/adapters/memory-crawl-state';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { Crawler, runCrawl } from '../../lambdas/crawler/crawler';
import { computeHighWater } from '../../lambdas/crawler/finalize';
import type { CrawlerDeps, CrawlerSettings } from '../../lambdas/crawler/settings';
import { RuleCategoryClassifier } from '../../lambdas/crawler/domain/classify';
import type { CachedResponse, CrawlStateStore, GithubSource, RepoRef, RunMeta } from '../../lambdas/crawler/domain/ports';
import { isValidSlug } from '../../lambdas/crawler/domain/slug';
import { formatSummary } from '../../lambdas/crawler/domain/report';
import { generateCatalog, toSearchDocument } from '../../bin/local-stack/synthetic';
import type { RemoteHealth, RepoInfo } from '../../lambdas/crawler/domain/types';
import { CountingIndex, TestClock, type WriteCounts } from '../support/crawler-env';
import { ArrayUpstream, MemoryCatalogStore, MemoryIconStore, row } from '../support/crawler-memory';

class StubGithub implements GithubSource {
  stars = new Map<string, number>();
  readmes = new Map<string, string>();
  fail = false;
  calls = 0;
  async repository(ref: RepoRef, cached?: CachedResponse<RepoInfo>): Promise<CachedResponse<RepoInfo>> {
    this.calls++;
    if (this.fail) throw new Error('GitHub is down');
    const key = `${ref.owner}/${ref.repo}`;
    const value: RepoInfo = {
      exists: true,
      stars: this.stars.get(key) ?? 10,
      language: 'TypeScript',
      license: 'MIT License',
      licenseSpdx: 'MIT',
      pushedAt: '2025-10-01T00:00:00Z',
      ownerAvatarUrl: `https://avatars.example/${ref.owner}`,
    };
    const etag = `"${JSON.stringify(value)}"`;
    return cached?.etag === etag ? cached : { etag, value, fetchedAt: new Date().toISOString() };
  }
  async readme(ref: RepoRef, _subfolder: string | undefined, cached?: CachedResponse<ReadmeContent | null>) {
    if (this.fail) throw new Error('GitHub is down');
    const text = this.readmes.get(`${ref.owner}/${ref.repo}`) ?? `# ${ref.repo}\nA database server for SQL queries.`;
    const value: ReadmeContent = { content: text, path: 'README.md', size: text.length, sha: `sha-${text.length}-${text.charCodeAt(text.length - 1)}` };
    const etag = `"${value.sha}"`;
    if (cached?.etag === etag) return { response: cached, notModified: true };
    return { response: { etag, value, fetchedAt: new Date().toISOString() }, notModified: false };
  }
}

/** The crawl state of the next `setup` (each describe of the service runs on both stores). */
let nextState: () => CrawlStateStore = () => new MemoryCrawlState();

function setup(rows: unknown[], pageSize = 3) {
  const counts: WriteCounts = { storePut: 0, storeDelete: 0, indexUpsert: 0, indexRemove: 0, iconsStored: 0 };
  const state = nextState();
  const upstream = new ArrayUpstream(rows, pageSize);
  const store = new MemoryCatalogStore();
  const index = new CountingIndex(embeddedSearchIndex({}), counts);
  const icons = new MemoryIconStore();
  const github = new StubGithub();
  const clock = new TestClock(Date.parse('2025-10-22T12:00:00Z'));
  const health = {
    check: async (r: { url: string }): Promise<RemoteHealth> => ({
      url: r.url,
      live: !r.url.includes('dead'),
      ...(r.url.includes('dead') ? { error: 'refused' } : { toolCount: 1, tools: [{ name: 'ping' }] }),
      checkedAt: clock.now().toISOString(),
    }),
  };
  const deps: CrawlerDeps = {
    state,
    upstream,
    store,
    index,
    icons,
    github,
    downloads: { npm: async () => 1000, pypi: async () => 500 },
    health,
    iconFetcher: { fetchIcon: async (c: string[]) => ({ webp: await renderIcon(1), source: c[0] }) },
    classifier: new RuleCategoryClassifier(),
    clock,
    trust: {
      putChecks: async () => undefined,
      putChanges: async () => undefined,
      changes: async () => ({ items: [] }),
      recentBreaking: async () => [],
      checks: async () => [],
      deleteAll: async (slug) => {
        historyDeleted.push(slug);
      },
    },
  };
  const historyDeleted: string[] = [];
  const make = (settings: Partial<CrawlerSettings> = {}) => new Crawler(deps, { enrichConcurrency: 4, ...settings });
  return { counts, state, upstream, store, index, icons, github, clock, make, historyDeleted };
}

const rowsV1 = () => [
  row('io.github.alice/pg-tools', '1.0.0', {
    repository: 'https://github.com/alice/pg-tools',
    packages: [{ registryType: 'npm', identifier: 'pg-tools' }],
    isLatest: false,
    publishedAt: '2025-09-01T00:00:00Z',
  }),
  row('io.github.alice/pg-tools', '1.1.0', {
    repository: 'https://github.com/alice/pg-tools',
    packages: [{ registryType: 'npm', identifier: 'pg-tools' }],
    publishedAt: '2025-09-10T00:00:00Z',
  }),
  row('com.example/remote', '2.0.0', { remotes: [{ type: 'streamable-http', url: 'https://mcp.example.com/mcp' }], description: 'Send Slack messages' }),
  row('com.example/dead-remote', '1.0.0', { remotes: [{ type: 'sse', url: 'https://dead.example.com/sse' }] }),
  row('io.github.bob/old', '0.1.0', { status: 'deprecated', repository: 'https://github.com/bob/old' }),
  row('io.github.bob/b-c', '1.0.0'),
  row('io.github.bob/b.c', '1.0.0'),
  { server: { name: 'io.github.bad/row', version: '1.0.0', description: '' }, _meta: {} },
];

// The service's promises (resume after a crash mid-plan or mid-unit, retries that repeat nothing)
// on the in-memory state and on the DynamoDB state it runs on in AWS, conditions and transactions
// included (the store's own contract: test/integration/crawl-state.test.ts).
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
afterAll(() => ddb.destroy());
const STATES: Array<[string, () => Promise<() => CrawlStateStore>]> = [
  ['in-memory', async () => () => new MemoryCrawlState()],
  [
    'DynamoDB Local',
    async () => {
      const table = `crawl-service-${randomBytes(4).toString('hex')}`;
      await ensureTables(ddb, crawlerTableDefinitions(table));
      return () => new DynamoCrawlState(documentClient(ddb), table);
    },
  ],
];

describe.each(STATES)('Crawler (%s state)', (_name, prepare) => {
  beforeEach(async () => {
    nextState = await prepare();
  });

  it('crawls everything: latest version per name, rejects with reasons, unique slugs, categories', async () => {
    const t = setup(rowsV1());
    const report = await runCrawl(t.make());
    const records = [...t.store.items.values()].map((d) => d.record);
    expect(records.map((r) => r.name).sort()).toEqual(
      ['com.example/dead-remote', 'com.example/remote', 'io.github.alice/pg-tools', 'io.github.bob/b-c', 'io.github.bob/b.c', 'io.github.bob/old'].sort(),
    );
    expect(report.counts).toMatchObject({ rows: 8, added: 6, updated: 0, rejected: 1, superseded: 1, removed: 0 });
    expect(report.rejected[0]).toMatchObject({ name: 'io.github.bad/row', code: 'invalid_description' });
    const pg = records.find((r) => r.name === 'io.github.alice/pg-tools');
    expect(pg).toMatchObject({
      version: '1.1.0',
      downloads: 1000,
      github: { stars: 10, licenseSpdx: 'MIT' },
      grades: { license: 'A', maintenance: 'A', quality: 'untested' },
      hasIcon: true,
    });
    expect(pg?.categories).toContain('Data & Databases');
    expect(records.find((r) => r.name === 'io.github.bob/old')?.status).toBe('deprecated');
    const slugs = records.map((r) => r.slug);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const s of slugs) expect(isValidSlug(s)).toBe(true);
    expect(records.find((r) => r.name === 'io.github.bob/b-c')?.slug).toBe('io-github-bob-b-c');
    expect(records.find((r) => r.name === 'io.github.bob/b.c')?.slug).toMatch(/^io-github-bob-b-c-[0-9a-f]{8}$/);
    const remote = t.store.items.get('com-example-remote');
    expect(remote?.record.health).toMatchObject({ live: true, toolCount: 1 });
    expect(remote?.tools).toEqual([{ name: 'ping' }]);
    expect(t.store.items.get('com-example-dead-remote')?.record.health?.live).toBe(false);
    expect(report.failures.some((f) => f.step === 'health' && f.name === 'com.example/dead-remote')).toBe(true);
    for (const r of records) expect(r.updatedAt).toBe('2025-10-22T12:00:00.000Z');
  });

  it('writes nothing when a full re-crawl finds nothing changed, and keeps slugs', async () => {
    const t = setup(rowsV1());
    await runCrawl(t.make());
    const slugs = [...t.store.items.keys()].sort();
    const before = { ...t.counts, store: t.store.writes };
    t.clock.advance(3_600_000);
    const report = await runCrawl(t.make(), { mode: 'full' });
    expect(report.counts).toMatchObject({ added: 0, updated: 0, removed: 0, unchanged: 6 });
    expect(t.store.writes).toBe(before.store);
    expect(t.store.deletes).toBe(0);
    expect(t.counts.indexUpsert).toBe(before.indexUpsert);
    expect(t.counts.indexRemove).toBe(0);
    expect([...t.store.items.keys()].sort()).toEqual(slugs);
  });

  it('incremental: asks only for updated_since; new versions update, deleted ones leave, updatedAt moves only then', async () => {
    const t = setup(rowsV1());
    const first = await runCrawl(t.make());
    expect(first.highWater).toBe('2025-10-01T00:00:00.000Z');
    t.clock.advance(86_400_000);
    // Upstream changes in place: one server gets a new version, one is deleted (same version).
    t.upstream.rows = [
      ...rowsV1().map((r) =>
        (r as { server: { name: string } }).server.name === 'com.example/remote'
          ? row('com.example/remote', '2.0.0', {
              remotes: [{ type: 'streamable-http', url: 'https://mcp.example.com/mcp' }],
              status: 'deleted',
              updatedAt: '2025-10-21T00:00:00Z',
            })
          : r,
      ),
      row('io.github.alice/pg-tools', '1.2.0', {
        repository: 'https://github.com/alice/pg-tools',
        packages: [{ registryType: 'npm', identifier: 'pg-tools' }],
        publishedAt: '2025-10-20T00:00:00Z',
      }),
    ];
    const report = await runCrawl(t.make());
    expect(report.mode).toBe('incremental');
    expect(t.upstream.calls.at(-1)?.updatedSince).toBe('2025-10-01T00:00:00.000Z');
    expect(report.removed).toEqual(['com.example/remote']);
    expect(t.store.items.has('com-example-remote')).toBe(false);
    expect((await t.index.slugs()).map((s) => s.slug)).not.toContain('com-example-remote');
    const pg = t.store.items.get('io-github-alice-pg-tools')?.record;
    expect(pg?.version).toBe('1.2.0');
    expect(pg?.updatedAt).toBe('2025-10-23T12:00:00.000Z');
    // Servers that did not change upstream keep their updatedAt.
    expect(t.store.items.get('io-github-bob-old')?.record.updatedAt).toBe('2025-10-22T12:00:00.000Z');
    // The old version shows up again (its updatedAt is in the window) but stays superseded.
    expect(pg?.version).not.toBe('1.1.0');
  });

  it('stars changes are written without moving updatedAt; a README change moves it; failures keep old values', async () => {
    const t = setup(rowsV1());
    await runCrawl(t.make());
    t.clock.advance(3_600_000);
    t.github.stars.set('alice/pg-tools', 99);
    let report = await runCrawl(t.make(), { mode: 'full' });
    expect(report.updated).toEqual(['io.github.alice/pg-tools']);
    let pg = t.store.items.get('io-github-alice-pg-tools');
    expect(pg?.record.github?.stars).toBe(99);
    expect(pg?.record.updatedAt).toBe('2025-10-22T12:00:00.000Z');
    expect(pg?.record.crawledAt).toBe('2025-10-22T13:00:00.000Z');

    t.clock.advance(3_600_000);
    t.github.readmes.set('alice/pg-tools', '# pg-tools\nNow also a vector memory store.');
    report = await runCrawl(t.make(), { mode: 'full' });
    pg = t.store.items.get('io-github-alice-pg-tools');
    expect(pg?.readme?.content).toContain('vector memory');
    expect(pg?.record.updatedAt).toBe('2025-10-22T14:00:00.000Z');

    t.clock.advance(3_600_000);
    t.github.fail = true;
    report = await runCrawl(t.make(), { mode: 'full' });
    expect(report.failuresByStep.github).toBeGreaterThan(0);
    pg = t.store.items.get('io-github-alice-pg-tools');
    expect(pg?.record.github?.stars).toBe(99);
    expect(pg?.readme?.content).toContain('vector memory');
    expect(report.counts.updated).toBe(0);
  });

  it('resumes an interrupted plan and an interrupted run without losing or repeating anything', async () => {
    const t = setup(rowsV1(), 2);
    const crawler = t.make();
    const partial = await crawler.planCrawl({ maxSteps: 2 });
    expect(partial.planned).toBe(false);
    // "Crash": a new process plans again and continues the same run from the stored cursor.
    const plan = await t.make().planCrawl();
    expect(plan.runId).toBe(partial.runId);
    expect(plan.resumed).toBe(true);
    expect(plan.planned).toBe(true);
    expect(t.upstream.calls.map((c) => c.cursor)).toEqual([undefined, '2', '4', '6']);
    await t.make().runUnit(plan.units[0]);
    await expect(t.make().finalizeRun(plan.runId)).rejects.toThrow(/not complete/);
    // The rest runs in a "new process"; the finished unit is not run twice.
    const report = await runCrawl(t.make());
    expect(report.runId).toBe(plan.runId);
    expect(report.units).toBe(plan.units.length);
    expect(report.counts.added).toBe(6);
    expect((await t.make().runUnit(plan.units[0])).alreadyDone).toBe(true);
  });

  it('a unit that fails half-way is retried and completes with the same outcome', async () => {
    const t = setup(rowsV1(), 100);
    const store = t.store;
    const realPut = store.put.bind(store);
    let failures = 1;
    store.put = async (entries) => {
      if (failures-- > 0) throw new Error('injected write failure');
      return realPut(entries);
    };
    const report = await runCrawl(t.make(), { unitAttempts: 2 });
    expect(report.counts.added + report.counts.unchanged).toBe(6);
    expect(store.items.size).toBe(6);
    expect((await t.index.slugs()).length).toBe(6);
  });

  it('an upstream failure while planning leaves a run that the next crawl resumes', async () => {
    const t = setup(rowsV1(), 2);
    const first = t.make();
    await first.planCrawl({ maxSteps: 1 });
    t.upstream.failNext = 1;
    await expect(runCrawl(t.make())).rejects.toThrow(/injected upstream failure/);
    const report = await runCrawl(t.make());
    expect(report.counts.added).toBe(6);
    expect(t.upstream.calls.map((c) => c.cursor)).toEqual([undefined, '2', '2', '4', '6']);
  });

  it('a full crawl removes servers upstream stopped listing, unless most vanished', async () => {
    const t = setup(rowsV1());
    await runCrawl(t.make());
    t.upstream.rows = rowsV1().filter((r) => (r as { server: { name: string } }).server.name !== 'io.github.bob/old');
    const report = await runCrawl(t.make(), { mode: 'full' });
    expect(report.removed).toEqual(['io.github.bob/old']);
    expect(t.store.items.has('io-github-bob-old')).toBe(false);

    t.upstream.rows = rowsV1().slice(0, 2);
    const guarded = await runCrawl(t.make(), { mode: 'full' });
    expect(guarded.removed).toEqual([]);
    expect(guarded.warnings[0]).toMatch(/truncated listing/);
    expect(t.store.items.size).toBe(5);
  });

  it('refresh units re-enrich in incremental runs; trending is the 7-day star gain', async () => {
    const t = setup(rowsV1());
    t.github.stars.set('alice/pg-tools', 100);
    await runCrawl(t.make());
    for (let day = 1; day <= 7; day++) {
      t.clock.advance(86_400_000);
      t.github.stars.set('alice/pg-tools', 100 + day * 10);
      await runCrawl(t.make());
    }
    const pg = t.store.items.get('io-github-alice-pg-tools')?.record;
    expect(pg?.github?.stars).toBe(170);
    expect(pg?.trending).toBe(70);
    expect(pg?.updatedAt).toBe('2025-10-22T12:00:00.000Z');
  });

  it('a crawl into a catalog of demo servers removes them first (icons too), says so, and mirrors in full', async () => {
    const t = setup(rowsV1());
    // An earlier crawl left a high-water mark; then the catalog was replaced by demo data.
    await runCrawl(t.make());
    const demo = generateCatalog(12);
    t.store.items.clear();
    await t.store.put(demo.map((s) => ({ record: s.record, readme: s.readme ?? null, tools: s.tools ?? null })));
    await t.index.replaceAll(demo.map(toSearchDocument));
    for (const s of demo) await t.icons.putIfAbsent(s.record.slug, new Uint8Array([1]));
    const report = await runCrawl(t.make());
    expect(report.demoRemoved).toBe(12);
    expect(report.mode).toBe('full');
    expect(formatSummary(report)).toContain('removed 12 demo servers first');
    const records = [...t.store.items.values()].map((d) => d.record);
    expect(records).toHaveLength(6);
    expect(records.filter((r) => r.demo === true)).toEqual([]);
    expect((await t.index.slugs()).map((s) => s.slug).sort()).toEqual(records.map((r) => r.slug).sort());
    for (const s of demo) expect(t.icons.icons.has(s.record.slug)).toBe(false);
    // Their history leaves the trust table with them (each server's partition: DynamoTrustStore.deleteAll).
    expect(t.historyDeleted.sort()).toEqual(demo.map((s) => s.record.slug).sort());
    // A catalog of real servers is left alone, and the next report says nothing of demo data.
    const again = await runCrawl(t.make());
    expect(again.demoRemoved).toBe(0);
    expect(formatSummary(again)).not.toContain('demo');
  });

  it('the deployed crawler does not look for demo data', async () => {
    const t = setup(rowsV1());
    const demo = generateCatalog(3);
    await t.store.put(demo.map((s) => ({ record: s.record })));
    const report = await runCrawl(t.make({ removeDemoData: false }));
    expect(report.demoRemoved).toBe(0);
    expect([...t.store.items.values()].filter((d) => d.record.demo === true)).toHaveLength(3);
  });
});

describe('high-water mark', () => {
  const run = (o: Partial<RunMeta>): RunMeta => ({
    runId: 'r',
    mode: 'full',
    startedAt: '',
    status: 'running',
    steps: 1,
    unitsCreated: 0,
    unitsDone: 0,
    rowsSeen: 0,
    ...o,
  });
  it('is the newest upstream updatedAt, kept behind the upstream clock at the start, never going back', () => {
    expect(computeHighWater(run({ maxUpdatedAt: '2025-10-01T00:00:00.000Z', upstreamStartedAt: '2025-10-22T00:00:00.000Z' }), undefined, 60_000)).toBe(
      '2025-10-01T00:00:00.000Z',
    );
    expect(computeHighWater(run({ maxUpdatedAt: '2025-10-22T00:05:00.000Z', upstreamStartedAt: '2025-10-22T00:00:00.000Z' }), undefined, 60_000)).toBe(
      '2025-10-21T23:59:00.000Z',
    );
    expect(computeHighWater(run({}), '2025-09-01T00:00:00.000Z', 60_000)).toBe('2025-09-01T00:00:00.000Z');
    expect(computeHighWater(run({ maxUpdatedAt: '2025-08-01T00:00:00.000Z' }), '2025-09-01T00:00:00.000Z', 60_000)).toBe('2025-09-01T00:00:00.000Z');
  });
});
