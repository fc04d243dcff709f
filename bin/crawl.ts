import { DynamoCatalogStore, DynamoTrustStore, S3IconStore, embeddedSearchIndex } from '../lambdas/catalog-core';
import { writeFileSync } from 'node:fs';
import { DynamoCrawlState, crawlerTableDefinitions } from '../lambdas/crawler/adapters/dynamo-crawl-state';
import { loadCrawlerConfig } from '../lambdas/crawler/config';
import { CrawlAbortedError, runCrawl } from '../lambdas/crawler/crawler';
import type { PlanMode } from '../lambdas/crawler/settings';
import { formatSummary } from '../lambdas/crawler/domain/report';
import { createCrawler } from '../lambdas/crawler/wiring';
import { documentClient, dynamoClient, loadBatchSdkBudget, s3Config } from '../lambdas/shared/aws/clients';
import { flags } from './cli-args';
import { openBackends } from './local-stack/catalog-env';
import { ensureTables } from './local-stack/provision';

/**
 * `npm run crawl -- [--registry URL] [--mode auto|full|incremental] [--steps LIST] [--report FILE]`
 *
 * Mirrors the upstream registry into the catalog of DATA_DIR (the one `npm start` serves; its
 * backends are reused when it runs, else started for the duration of the crawl), enriches it and
 * prints a summary. Other upstreams: `--github-api`, `--npm-downloads`, `--pypi-stats` (or the
 * environment variables documented in lambdas/crawler/config.ts). `--steps none` skips
 * enrichment; without network, enrichment fails fast, is recorded, and the crawl completes.
 * Ctrl-C stops scheduling units; the next `npm run crawl` resumes the same run.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function bar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
}

async function main(): Promise<void> {
  const args = flags({
    registry: { type: 'string' },
    'github-api': { type: 'string' },
    'npm-downloads': { type: 'string' },
    'pypi-stats': { type: 'string' },
    mode: { type: 'string' },
    steps: { type: 'string' },
    report: { type: 'string' },
  });
  const mode = args.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'full' && mode !== 'incremental') throw new Error('--mode must be auto, full or incremental');
  const env = { ...process.env };
  if (args.registry !== undefined) env.REGISTRY_URL = args.registry;
  if (args['github-api'] !== undefined) env.GITHUB_API_URL = args['github-api'];
  if (args['npm-downloads'] !== undefined) env.NPM_DOWNLOADS_URL = args['npm-downloads'];
  if (args['pypi-stats'] !== undefined) env.PYPI_STATS_URL = args['pypi-stats'];
  if (args.steps !== undefined) env.CRAWLER_STEPS = args.steps;
  const config = loadCrawlerConfig(env);

  const started = Date.now();
  const backends = await openBackends();
  const ddb = dynamoClient(backends.config, loadBatchSdkBudget());
  const icons = new S3IconStore((mod) => new mod.S3Client(s3Config(backends.config, loadBatchSdkBudget())), backends.config.iconsBucket);
  const controller = new AbortController();
  const onSigint = () => {
    process.stderr.write('\n[crawl] stopping after the units in flight; run again to resume\n');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    console.error(`[crawl] ${backends.attached ? 'using the running local stack' : 'started local backends'} in ${backends.dir.root}`);
    console.error(`[crawl] upstream ${config.registryUrl}`);
    await ensureTables(ddb, crawlerTableDefinitions(config.stateTable));
    const doc = documentClient(ddb);
    const { crawler, http } = createCrawler(config, {
      store: new DynamoCatalogStore(doc, backends.config.catalogTable),
      index: embeddedSearchIndex({ snapshotPath: backends.config.searchSnapshotPath }),
      icons,
      state: new DynamoCrawlState(doc, config.stateTable),
      trust: new DynamoTrustStore(doc, backends.config.trustTable, backends.config.checkRetentionDays),
      region: backends.config.region,
    });
    const tty = process.stderr.isTTY === true;
    let lastLine = '';
    const report = await runCrawl(crawler, {
      mode: mode as PlanMode,
      unitConcurrency: config.unitConcurrency,
      signal: controller.signal,
      onProgress: (p) => {
        const line =
          p.phase === 'plan'
            ? `[crawl] ${p.runId} reading upstream: page ${p.done}`
            : p.phase === 'units'
              ? `[crawl] ${p.runId} units ${bar(p.done, p.total)}`
              : `[crawl] ${p.runId} finalising`;
        if (tty) process.stderr.write(`\r${line}\x1b[K`);
        else if (line !== lastLine && (p.phase !== 'units' || p.done === p.total || p.done % 10 === 0)) process.stderr.write(`${line}\n`);
        lastLine = line;
      },
    });
    if (tty) process.stderr.write('\n');
    console.log(formatSummary(report));
    const s = http.stats;
    console.log(`  ${s.requests} HTTP requests (${s.retries} retries) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (args.report !== undefined) {
      writeFileSync(args.report, JSON.stringify(report, null, 2));
      console.log(`  full report: ${args.report}`);
    }
  } catch (err) {
    if (err instanceof CrawlAbortedError) {
      console.error(`\n[crawl] ${err.message}`);
      process.exitCode = 130;
      return;
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
    ddb.destroy();
    await icons.destroy();
    await backends.stop();
  }
}

main().catch((err: unknown) => {
  console.error('\n[crawl] failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
