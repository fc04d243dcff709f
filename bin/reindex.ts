import { DynamoCatalogStore, type SearchIndex, rebuildIndex, embeddedSearchIndex, searchIndexForWrites } from '../lambdas/catalog-core';
import { documentClient, dynamoClient, loadBatchSdkBudget } from '../lambdas/shared/aws/clients';
import { loadCatalogConfig } from '../lambdas/catalog/config';
import { openBackends } from './local-stack/catalog-env';

/**
 * `npm run reindex`: rebuilds the search index from DynamoDB. Locally (default) the embedded index
 * of DATA_DIR; with AWS credentials and the deployed table (`CATALOG_TABLE`), a deployment's index:
 * `SEARCH_BACKEND=opensearch OPENSEARCH_URL=…` rebuilds its domain, `SEARCH_SNAPSHOT_BUCKET=…`
 * (the small-catalog mode) writes a new snapshot generation, which every catalog instance picks up.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const started = Date.now();
  if (process.env.SEARCH_BACKEND === 'opensearch' || process.env.SEARCH_SNAPSHOT_BUCKET) {
    const config = { ...loadCatalogConfig(), ...(process.env.SEARCH_SNAPSHOT_BUCKET && { searchBackend: 'embedded' as const }) };
    const index: SearchIndex = searchIndexForWrites(config);
    const store = new DynamoCatalogStore(documentClient(dynamoClient(config, loadBatchSdkBudget())), config.catalogTable);
    console.log(`reindexed ${await rebuildIndex(store, index)} servers in ${Date.now() - started} ms`);
    return;
  }
  const backends = await openBackends();
  try {
    const ddb = dynamoClient(backends.config, loadBatchSdkBudget());
    const store = new DynamoCatalogStore(documentClient(ddb), backends.config.catalogTable);
    const n = await rebuildIndex(store, embeddedSearchIndex({ snapshotPath: backends.config.searchSnapshotPath }));
    ddb.destroy();
    console.log(`reindexed ${n} servers in ${Date.now() - started} ms`);
  } finally {
    await backends.stop();
  }
}

main().catch((err: unknown) => {
  console.error('[reindex] failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
