import { DynamoCatalogStore, DynamoTrustStore, embeddedSearchIndex } from '../lambdas/catalog-core';
import { runCheckRound } from '../lambdas/crawler/checks';
import { loadCrawlerConfig } from '../lambdas/crawler/config';
import { createChecker } from '../lambdas/crawler/check-wiring';
import { documentClient, dynamoClient, loadBatchSdkBudget } from '../lambdas/shared/aws/clients';
import { flags } from './cli-args';
import { openBackends } from './local-stack/catalog-env';

/**
 * `npm run check-health [-- --slug S]...`
 *
 * One round of the check schedule against the catalog of DATA_DIR (the one `npm start` serves; its
 * backends are reused when it runs, else started for the round): every hosted server, or the named
 * ones, is checked live; each check is kept in the trust table and the servers' uptime, latency and
 * last failure are renewed on their records and in the search index. In AWS the check state machine
 * runs the same functions on a schedule (README, "Health history and uptime").
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const slugs = flags({ slug: { type: 'string', multiple: true } }).slug;
  const config = loadCrawlerConfig();
  const started = Date.now();
  const backends = await openBackends();
  const ddb = dynamoClient(backends.config, loadBatchSdkBudget());
  try {
    console.error(`[check-health] ${backends.attached ? 'using the running local stack' : 'started local backends'} in ${backends.dir.root}`);
    const doc = documentClient(ddb);
    const index = embeddedSearchIndex({ snapshotPath: backends.config.searchSnapshotPath });
    const { deps, http } = createChecker(config, {
      store: new DynamoCatalogStore(doc, backends.config.catalogTable),
      index,
      trust: new DynamoTrustStore(doc, backends.config.trustTable, backends.config.checkRetentionDays),
    });
    const report = await runCheckRound(deps, { ...(slugs !== undefined && { slugs }) });
    console.log(
      `checked ${report.checked} of ${report.total} hosted servers: ${report.up} up, ${report.auth} auth required, ${report.down} down` +
        ` (${report.markedDown} marked down after ${deps.settings.downAfter} failed checks in a row); ${report.skipped} skipped` +
        ` · ${http.stats.requests} HTTP requests in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    ddb.destroy();
    await backends.stop();
  }
}

main().catch((err: unknown) => {
  console.error('\n[check-health] failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
