import { DynamoCatalogStore, DynamoTrustStore, S3IconStore, type SearchIndex, renderIcon, searchDocumentOf } from '../../lambdas/catalog-core';
import { documentClient, dynamoClient, loadBatchSdkBudget, s3Config } from '../../lambdas/shared/aws/clients';
import type { CatalogConfig } from '../../lambdas/catalog/config';
import { chunk, mapLimit } from '../../lambdas/shared/concurrency';
import { generateCatalog } from './synthetic';
import { generateHistory } from './synthetic-history';
import { loadCrawlerConfig } from '../../lambdas/crawler/config';
import { dropTable } from './provision';

export interface SeedResult {
  servers: number;
  icons: number;
  removed: number;
  /** Demo servers given check history (and some a changelog). */
  withHistory: number;
}

/**
 * Replaces the catalog in DynamoDB, the icons bucket and the search index with `count`
 * synthetic servers (deterministic for a given seed); 0 empties the catalog. The crawl state goes
 * too: it described the catalog just replaced, so the next `npm run crawl` mirrors the registry
 * in full (and removes the demo servers first, `lambdas/crawler/demo-data.ts`).
 */
export async function seedCatalog(
  config: CatalogConfig,
  index: SearchIndex,
  count: number,
  opts: { seed?: number; onProgress?: (done: number, total: number) => void; now?: number } = {},
): Promise<SeedResult> {
  const servers = generateCatalog(count, { seed: opts.seed });
  // History ends now (the page's clock), so the chart's 30 days are filled on the first visit.
  const history = generateHistory(servers, { now: opts.now ?? Date.now(), ...(opts.seed !== undefined && { seed: opts.seed }) });
  const clientOpts = { region: config.region, dynamoEndpoint: config.dynamoEndpoint, s3Endpoint: config.s3Endpoint };
  const ddb = dynamoClient(clientOpts, loadBatchSdkBudget());
  const icons = new S3IconStore((mod) => new mod.S3Client(s3Config(clientOpts, loadBatchSdkBudget())), config.iconsBucket);
  try {
    const store = new DynamoCatalogStore(documentClient(ddb), config.catalogTable);

    const keep = new Set(servers.map((s) => s.record.slug));
    const stale: string[] = [];
    for await (const d of store.scanAll()) if (!keep.has(d.record.slug)) stale.push(d.record.slug);
    if (stale.length) {
      await store.delete(stale);
      // Icons are never replaced: a server given one of these slugs later must not inherit one.
      await icons.remove(stale);
    }
    await dropTable(ddb, loadCrawlerConfig().stateTable);

    // The trust table: the replaced servers' history goes, the demo history is written afresh.
    const trust = new DynamoTrustStore(documentClient(ddb), config.trustTable, config.checkRetentionDays);
    // `#breaking` is the cross-server partition of breaking changes (DynamoTrustStore): the whole catalog is replaced, so is it.
    await mapLimit([...stale, ...history.slugs, '#breaking'], 8, (slug) => trust.deleteAll(slug));
    await mapLimit(chunk(history.checks, 500), 4, (batch) => trust.putChecks(batch));
    await trust.putChanges(history.changes);

    let done = 0;
    await mapLimit(chunk(servers, 100), 4, async (batch) => {
      await store.put(batch.map((s) => ({ record: s.record, readme: s.readme ?? null, tools: s.tools ?? null })));
      done += batch.length;
      opts.onProgress?.(done, servers.length);
    });

    let iconCount = 0;
    await mapLimit(
      servers.filter((s) => s.iconKind !== undefined),
      16,
      async (s) => {
        await icons.putIfAbsent(s.record.slug, await renderIcon(s.iconKind as number));
        iconCount++;
      },
    );

    await index.replaceAll(servers.map(searchDocumentOf));
    return { servers: servers.length, icons: iconCount, removed: stale.length, withHistory: history.slugs.length };
  } finally {
    ddb.destroy();
    await icons.destroy();
  }
}
