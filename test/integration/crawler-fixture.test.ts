/**
 * The crawler end to end on the committed real rows (always runs): DynamoDB Local, the S3
 * server, the embedded index, and loopback fakes of the registry, GitHub, npm, PyPI, icon hosts
 * and remote MCP servers.
 */

import { toServerJson, CATEGORIES, isWebp128 } from '../../lambdas/catalog-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCrawl, CrawlAbortedError } from '../../lambdas/crawler/crawler';
import { isRejection, rowIdentity } from '../../lambdas/crawler/domain/normalise';
import type { CrawlReport } from '../../lambdas/crawler/domain/types';
import { isValidSlug } from '../../lambdas/crawler/domain/slug';
import { loadFixtureRows } from '../support/crawler-fakes';
import { catalogByName, startCrawlerEnv, type CrawlerEnv } from '../support/crawler-env';
import { serverJsonValidator } from '../support/registry-schemas';

const synthetic = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'crawler', 'synthetic-rows.json'), 'utf8')) as unknown[];
const sourceRows = [...loadFixtureRows(), ...synthetic];

function distinctNames(rows: unknown[]): Set<string> {
  const out = new Set<string>();
  for (const r of rows) {
    const id = rowIdentity(r);
    if (!isRejection(id)) out.add(id.name);
  }
  return out;
}

// The first crawl is the fixture of every test below (each runs alone, e.g. with -t); the tests that
// change the upstream come last and leave nothing the earlier ones read.
describe('crawler on the committed registry rows', () => {
  let env: CrawlerEnv;
  let report: CrawlReport;

  beforeAll(async () => {
    env = await startCrawlerEnv(sourceRows);
    report = await runCrawl(env.newCrawler().crawler);
  });
  afterAll(async () => {
    await env?.close();
  });

  it('puts every distinct name in the catalog or in the report with a reason', async () => {
    const catalog = await catalogByName(env.rawStore);
    const rejected = new Set(report.rejected.flatMap((r) => (r.name ? [r.name] : [])));
    for (const name of distinctNames(sourceRows)) {
      if (!catalog.has(name) && !rejected.has(name)) throw new Error(`${name} is neither in the catalog nor in the report`);
    }
    for (const r of report.rejected) expect(r.reason).not.toBe('');
    expect(report.counts.rejected).toBe(4);
    expect(catalog.size).toBe(distinctNames(sourceRows).size - 4);
    expect(report.counts.added).toBe(catalog.size);
    expect(report.counts.superseded).toBe(sourceRows.length - distinctNames(sourceRows).size);

    // Records: valid slugs, latest versions, categories from the spec, registry projection valid.
    const validate = serverJsonValidator();
    const slugs = new Set<string>();
    for (const d of catalog.values()) {
      const r = d.record;
      expect(isValidSlug(r.slug)).toBe(true);
      slugs.add(r.slug);
      expect(r.categories.length).toBeGreaterThanOrEqual(1);
      expect(r.categories.length).toBeLessThanOrEqual(3);
      for (const c of r.categories) expect(CATEGORIES).toContain(c);
      if (!validate(toServerJson(r))) throw new Error(`${r.name}: ${JSON.stringify(validate.errors)}`);
    }
    expect(slugs.size).toBe(catalog.size);
    expect(catalog.get('com.devcycle/mcp')?.record.version).toBe('6.1.2');
    expect(catalog.get('com.example/deprecated-weather')?.record.status).toBe('deprecated');

    // The search index holds the same servers.
    const indexed = await env.index.slugs();
    expect(indexed.map((s) => s.slug).sort()).toEqual([...slugs].sort());
  });

  it('enriches from the fakes: GitHub facts and README, downloads, remote health and tools', async () => {
    const catalog = await catalogByName(env.rawStore);
    const withGithub = [...catalog.values()].filter((d) => d.record.github !== undefined);
    expect(withGithub.length).toBeGreaterThan(5);
    for (const d of withGithub) {
      expect(typeof d.record.github?.stars).toBe('number');
      expect(d.record.grades.license).not.toBeNull();
      expect(d.record.grades.maintenance).not.toBeNull();
    }
    expect([...catalog.values()].filter((d) => d.readme !== undefined).length).toBeGreaterThan(3);
    expect([...catalog.values()].filter((d) => (d.record.downloads ?? 0) > 0).length).toBeGreaterThan(3);
    const remotes = [...catalog.values()].filter((d) => d.record.remotes.length > 0);
    expect(remotes.length).toBeGreaterThan(3);
    for (const d of remotes) {
      if (d.record.remotes.every((r) => /[{}]/.test(r.url))) continue;
      expect(d.record.health).toBeDefined();
    }
    const live = remotes.filter((d) => d.record.health?.live === true && d.record.health.authRequired !== true);
    expect(live.length).toBeGreaterThan(0);
    for (const d of live) {
      expect(d.record.toolCount).toBe(3);
      expect(d.tools?.map((t) => t.name)).toEqual(['query_database', 'search_docs', 'send_message']);
    }
    expect(env.github.authorizations.every((a) => a === 'Bearer test-token')).toBe(true);
  });

  it('stores icons as 128x128 webp, registry icons first (refusals: crawler-adapters.test.ts)', async () => {
    const catalog = await catalogByName(env.rawStore);
    let withIcon = 0;
    for (const d of catalog.values()) {
      const bytes = await env.iconStore.get(d.record.slug);
      expect(d.record.hasIcon).toBe(bytes !== undefined);
      if (bytes === undefined) continue;
      withIcon++;
      expect(await isWebp128(bytes)).toBe(true);
    }
    expect(withIcon).toBeGreaterThan(5);
    expect(env.icons.requests.some((r) => r.includes('/png/https%3A%2F%2Fapp.testiny.io'))).toBe(true);
  });

  it('makes no catalog write when nothing changed upstream (incremental and full re-crawls)', async () => {
    env.resetCounts();
    const before = { ...env.github.counts };
    env.clock.advance(60_000);
    const incremental = await runCrawl(env.newCrawler().crawler);
    expect(incremental.mode).toBe('incremental');
    const full = await runCrawl(env.newCrawler().crawler, { mode: 'full' });
    expect(full.counts).toMatchObject({ added: 0, updated: 0, removed: 0 });
    expect(env.counts).toEqual({ storePut: 0, storeDelete: 0, indexUpsert: 0, indexRemove: 0, iconsStored: 0 });
    // Unchanged repositories were answered 304 (no rate-limit quota spent).
    expect(env.github.counts.ok).toBe(before.ok);
    expect(env.github.counts.notModified).toBeGreaterThan(0);
  });

  it('removes servers deleted upstream from the catalog and the index; keeps deprecated ones', async () => {
    const rows = structuredClone(env.rows) as Array<{ server?: { name?: string }; _meta?: Record<string, Record<string, unknown>> }>;
    env.clock.advance(86_400_000);
    for (const r of rows) {
      if (r.server?.name === 'io.github.spences10/mcp-sqlite-tools') {
        const meta = r._meta?.['io.modelcontextprotocol.registry/official'];
        if (meta?.isLatest === true) Object.assign(meta, { status: 'deleted', updatedAt: '2025-10-22T13:00:00Z' });
      }
    }
    env.registry.setRows(rows);
    env.resetCounts();
    const report = await runCrawl(env.newCrawler().crawler);
    expect(report.removed).toEqual(['io.github.spences10/mcp-sqlite-tools']);
    expect(report.deleted).toEqual(['io.github.spences10/mcp-sqlite-tools']);
    const catalog = await catalogByName(env.rawStore);
    expect(catalog.has('io.github.spences10/mcp-sqlite-tools')).toBe(false);
    expect((await env.index.slugs()).some((s) => s.slug.includes('mcp-sqlite-tools'))).toBe(false);
    expect(env.counts.storeDelete).toBe(1);
    expect(env.counts.indexRemove).toBe(1);
    expect(catalog.get('com.example/deprecated-weather')?.record.status).toBe('deprecated');
  });

  it('survives a 500, a timeout and a dropped connection on upstream pages, and a killed run', async () => {
    // A registry page that never answers needs a timeout that ends: 3 s. Nothing here compares two
    // crawls, so an enrichment answer a loaded machine delivers late changes no assertion.
    const fresh = await startCrawlerEnv(sourceRows, { env: { REGISTRY_PAGE_SIZE: '5', CRAWLER_HTTP_TIMEOUT_MS: '3000' } });
    try {
      fresh.registry.fault({ page: 1, kind: '500' });
      fresh.registry.fault({ page: 2, kind: 'timeout' });
      fresh.registry.fault({ page: 3, kind: 'reset' });
      fresh.registry.fault({ page: 4, kind: '429' });
      // Killed after 3 units: nothing more is scheduled; the next crawl resumes the same run.
      const controller = new AbortController();
      let done = 0;
      await expect(
        runCrawl(fresh.newCrawler().crawler, {
          unitConcurrency: 1,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.phase === 'units' && p.done > done) {
              done = p.done;
              if (done === 3) controller.abort();
            }
          },
        }),
      ).rejects.toBeInstanceOf(CrawlAbortedError);
      const partial = await catalogByName(fresh.rawStore);
      expect(partial.size).toBeGreaterThan(0);
      expect(partial.size).toBeLessThan(distinctNames(sourceRows).size - 4);

      const report = await runCrawl(fresh.newCrawler().crawler);
      const catalog = await catalogByName(fresh.rawStore);
      expect(catalog.size).toBe(distinctNames(sourceRows).size - 4);
      // Across both attempts, each server was added exactly once.
      expect(fresh.counts.storePut).toBe(catalog.size);
      expect(report.counts.added).toBe(catalog.size);
      expect(new Set([...catalog.values()].map((d) => d.record.slug)).size).toBe(catalog.size);
      expect((await fresh.index.slugs()).length).toBe(catalog.size);
    } finally {
      await fresh.close();
    }
  });
});
