/**
 * The crawler on the full registry sample (1,289 rows, 675 names) served page by page by the
 * fake upstream. Skipped, with a message, when ../shared is not checked out; the committed
 * fixture (crawler-fixture.test.ts) always runs.
 */

import { CATEGORIES, isWebp128, SORTS } from '../../lambdas/catalog-core';
import { runCrawl } from '../../lambdas/crawler/crawler';
import { isRejection, rowIdentity } from '../../lambdas/crawler/domain/normalise';
import type { CrawlReport } from '../../lambdas/crawler/domain/types';
import { loadSampleRows, SAMPLE_PATH } from '../support/crawler-fakes';
import { describeUnless } from '../support/skips';
import { catalogByName, startCrawlerEnv, type CrawlerEnv } from '../support/crawler-env';

const sample = loadSampleRows();
const describeSample = describeUnless(sample ? undefined : `${SAMPLE_PATH} is absent (../shared is not checked out)`, {
  id: 'shared:crawler-sample',
  what: 'the crawl of the full registry sample (1,289 rows); crawler-fixture.test.ts crawled the committed 45 rows',
});

// A full crawl of 675 servers against DynamoDB Local and in-process fakes takes a while on a shared machine.
jest.setTimeout(300_000);

describeSample('crawler on the full registry sample', () => {
  let env: CrawlerEnv;
  const rows = sample ?? [];
  const names = new Set(
    rows.flatMap((r) => {
      const id = rowIdentity(r);
      return isRejection(id) ? [] : [id.name];
    }),
  );

  let report: CrawlReport;

  // The first crawl is every test's fixture, so each test also runs alone (-t). Its outcome is the
  // fakes', not the machine's: see the timeouts in crawler-env.ts.
  beforeAll(async () => {
    env = await startCrawlerEnv(rows);
    report = await runCrawl(env.newCrawler().crawler, { unitConcurrency: 2 });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('ends every one of the 675 names in the catalog or in the report with a reason', async () => {
    expect(rows).toHaveLength(1289);
    expect(names.size).toBe(675);
    const catalog = await catalogByName(env.rawStore);
    const rejected = new Map(report.rejected.map((r) => [r.name, r.reason]));
    const missing = [...names].filter((n) => !catalog.has(n) && !rejected.has(n));
    expect(missing).toEqual([]);
    expect(report.counts.rows).toBe(1289);
    expect(report.counts.superseded).toBe(1289 - 675);
    expect(catalog.size + report.counts.rejected).toBe(675);
    // Only the latest version of each name is kept.
    for (const r of rows) {
      const id = rowIdentity(r);
      if (isRejection(id) || id.meta.isLatest !== true) continue;
      expect(catalog.get(id.name)?.record.version ?? 'rejected').toBe(rejected.has(id.name) ? 'rejected' : id.version);
    }
    expect((await env.index.slugs()).length).toBe(catalog.size);
    expect(report.counts.enrichmentFailures).toBeGreaterThan(0);
  });

  it('stores only 128x128 webp icons', async () => {
    const catalog = await catalogByName(env.rawStore);
    let icons = 0;
    for (const d of catalog.values()) {
      if (!d.record.hasIcon) continue;
      const bytes = await env.iconStore.get(d.record.slug);
      expect(bytes).toBeDefined();
      expect(await isWebp128(bytes ?? new Uint8Array())).toBe(true);
      icons++;
    }
    expect(icons).toBeGreaterThan(100);
  });

  it('lists every category of the crawled sample, page by page and in every sort, as its filtered order (list plans on real entries)', async () => {
    for (const sort of SORTS) {
      const all = (await env.index.list({ filters: {}, sort, page: { offset: 0, limit: 10_000 } })).items;
      for (const category of CATEGORIES) {
        const expected = all.filter((r) => r.categories.includes(category)).map((r) => r.slug);
        const got: string[] = [];
        for (let page = 0; ; page++) {
          const res = await env.index.list({ filters: { category: [category] }, sort, page: { offset: page * 24, limit: 24 }, facets: true });
          expect(res.total).toBe(expected.length);
          expect(res.facets?.categories.find((c) => c.name === category)?.count ?? 0).toBe(expected.length);
          if (res.items.length === 0) break;
          got.push(...res.items.map((r) => r.slug));
        }
        expect(got).toEqual(expected);
      }
    }
  });

  it('re-crawls the unchanged sample without a single catalog write', async () => {
    env.resetCounts();
    env.clock.advance(60_000);
    const again = await runCrawl(env.newCrawler().crawler, { mode: 'full', unitConcurrency: 2 });
    expect(again.counts.unchanged).toBe(675 - again.counts.rejected);
    expect(again.counts.rejected).toBe(report.counts.rejected);
    expect(env.counts).toEqual({ storePut: 0, storeDelete: 0, indexUpsert: 0, indexRemove: 0, iconsStored: 0 });
  });
});
