/**
 * AWS Lambda entries of the crawler, meant to be driven by a Step Functions state machine that an
 * EventBridge schedule starts:
 *
 *   Plan ──(planned = false)──▶ Plan (loop: paging continues from the stored cursor)
 *     │ planned = true
 *     ▼
 *   Map over `units` (MaxConcurrency N, retry with backoff) ──▶ Unit
 *     ▼
 *   Finalize
 *
 * Every task is idempotent: a retried Unit finds itself done or redoes the same work, a retried
 * Plan continues the current run, a retried Finalize returns the stored report. A failed
 * execution leaves the run current; the next scheduled execution resumes it (Plan returns the
 * units still pending).
 *
 * Events and results:
 * - `planHandler({ mode?: 'auto' | 'full' | 'incremental', maxSteps? })` →
 *   `{ runId, planned, units: [{ runId, unitId }] }` (units only once planned)
 * - `unitHandler({ runId, unitId })` → `{ runId, unitId, runComplete, counts }`
 * - `finalizeHandler({ runId })` → the report's counts, failures by step, warnings, high-water mark
 * - `handler({ action: 'plan' | 'unit' | 'finalize', … })` dispatches to the three.
 */

import {
  DynamoCatalogStore,
  DynamoTrustStore,
  loadCatalogStoreConfig,
  rebuildIndex,
  S3IconStore,
  searchIndexForWrites,
  type CatalogStore,
  type S3SnapshotWriter,
} from '../catalog-core';
import { documentClient, dynamoClient, loadBatchSdkBudget, s3Config } from '../shared/aws/clients';
import { logger } from '../shared/logger';
import { CRAWL_METRICS } from '../shared/observability/metric-names';
import { countMetric, flushMetrics } from '../shared/observability/metrics';
import { traced } from '../shared/observability/tracing';
import { DynamoCrawlState } from './adapters/dynamo-crawl-state';
import { loadCrawlerConfig } from './config';
import type { Crawler } from './crawler';
import type { PlanMode } from './settings';
import type { UnitRef } from './domain/ports';
import { createCrawler } from './wiring';

interface Instance {
  crawler: Crawler;
  store: DynamoCatalogStore;
  index: ReturnType<typeof searchIndexForWrites>;
  /** The small-catalog mode: finalize writes the whole snapshot. */
  snapshot?: S3SnapshotWriter;
}

let instance: Instance | undefined;

/**
 * Built once per Lambda instance. The search index is the OpenSearch domain (units index each
 * server they write), or in the small-catalog mode the S3 snapshot writer (units write DynamoDB
 * only; finalize writes the whole snapshot).
 */
function crawlerInstance(): Instance {
  if (instance) return instance;
  const catalog = loadCatalogStoreConfig();
  const config = loadCrawlerConfig();
  // Tasks of up to 15 minutes with no caller waiting: a slow batch is waited for, not failed.
  const doc = documentClient(dynamoClient(catalog, loadBatchSdkBudget()));
  const store = new DynamoCatalogStore(doc, catalog.catalogTable);
  const index = searchIndexForWrites(catalog);
  const crawler = createCrawler(config, {
    store,
    index,
    icons: new S3IconStore((mod) => traced(new mod.S3Client(s3Config(catalog, loadBatchSdkBudget()))), catalog.iconsBucket),
    state: new DynamoCrawlState(doc, config.stateTable),
    // The changelog only where the stack provisions the trust table (TRUST_TABLE set): a stack
    // without it crawls as before.
    ...(process.env.TRUST_TABLE !== undefined && { trust: new DynamoTrustStore(doc, catalog.trustTable, catalog.checkRetentionDays) }),
    region: catalog.region,
    // Demo data exists only in the local stack (`npm start`, `npm run seed`): nothing to look for here.
    settings: { removeDemoData: false },
  }).crawler;
  instance = { crawler, store, index, ...(catalog.searchBackend === 'embedded' && { snapshot: index as S3SnapshotWriter }) };
  return instance;
}

const crawler = (): Crawler => crawlerInstance().crawler;

function isPlanMode(v: unknown): v is PlanMode {
  return v === 'auto' || v === 'full' || v === 'incremental';
}

type RunReport = Awaited<ReturnType<Crawler['finalizeRun']>>;
export interface PlanResult {
  runId: string;
  planned: boolean;
  units: UnitRef[];
}
export interface UnitResult {
  runId: string;
  unitId: string;
  runComplete: boolean;
  counts?: Record<string, number>;
}
/** What Finalize returns (and the execution's output): the run's report without its internals. */
export type CrawlSummary = Pick<RunReport, 'runId' | 'mode' | 'counts' | 'failuresByStep' | 'warnings' | 'highWater'>;

export interface CrawlerHandlers {
  planHandler(event?: { mode?: unknown; maxSteps?: unknown }): Promise<PlanResult>;
  unitHandler(event: { runId?: unknown; unitId?: unknown }): Promise<UnitResult>;
  finalizeHandler(event: { runId?: unknown }): Promise<CrawlSummary>;
  /** The function's entry: `{ action: 'plan' | 'unit' | 'finalize', … }`, as the state machine sends it; every log line carries Lambda's request id, metrics are published at the end. */
  handler(
    event: { action?: unknown; mode?: unknown; maxSteps?: unknown; runId?: unknown; unitId?: unknown },
    context?: { awsRequestId?: string },
  ): Promise<PlanResult | UnitResult | CrawlSummary>;
}

/** In the small-catalog mode, where finalize writes the whole search snapshot from the store. */
export interface SnapshotTarget {
  store: CatalogStore;
  snapshot: S3SnapshotWriter;
}

/**
 * The three actions over the crawler `get` returns (in AWS: built once per instance from the
 * environment); `snapshotTarget` names the snapshot to rebuild at finalize, if any.
 */
export function crawlerHandlers(
  get: () => Crawler,
  env: NodeJS.ProcessEnv = process.env,
  snapshotTarget: () => SnapshotTarget | undefined = () => undefined,
): CrawlerHandlers {
  const planHandler: CrawlerHandlers['planHandler'] = async (event = {}) => {
    const maxSteps = typeof event.maxSteps === 'number' && event.maxSteps > 0 ? event.maxSteps : Number(env.CRAWLER_PLAN_MAX_STEPS ?? 200);
    const plan = await get().planCrawl({ ...(isPlanMode(event.mode) && { mode: event.mode }), maxSteps });
    logger.info('crawl planned', { runId: plan.runId, mode: plan.mode, resumed: plan.resumed, planned: plan.planned, units: plan.units.length });
    if (plan.lastFinishedAt !== undefined)
      countMetric(CRAWL_METRICS.freshnessSeconds, Math.max(0, (Date.now() - Date.parse(plan.lastFinishedAt)) / 1000), 'Seconds');
    return { runId: plan.runId, planned: plan.planned, units: plan.planned ? plan.units : [] };
  };

  const unitHandler: CrawlerHandlers['unitHandler'] = async (event) => {
    if (typeof event.runId !== 'string' || typeof event.unitId !== 'string') throw new Error('unit event needs runId and unitId');
    const ref = { runId: event.runId, unitId: event.unitId };
    const out = await get().runUnit(ref);
    const r = out.result;
    const counts = r && {
      rows: r.rows,
      added: r.added.length,
      updated: r.updated.length,
      unchanged: r.unchanged,
      removed: r.removed.length,
      rejected: r.rejected.length,
      failures: r.failures.length,
    };
    logger.info('crawl unit done', { ...ref, alreadyDone: out.alreadyDone, ...counts });
    return { ...ref, runComplete: out.runComplete, ...(counts && { counts }) };
  };

  const finalizeHandler: CrawlerHandlers['finalizeHandler'] = async (event) => {
    if (typeof event.runId !== 'string') throw new Error('finalize event needs runId');
    const report = await get().finalizeRun(event.runId);
    const changed = report.counts.added + report.counts.updated + report.counts.removed;
    // Small-catalog mode: the snapshot is rebuilt from DynamoDB when the crawl changed something (or none exists yet).
    const target = snapshotTarget();
    if (target && (changed > 0 || !(await target.snapshot.exists()))) {
      const servers = await rebuildIndex(target.store, target.snapshot);
      countMetric(CRAWL_METRICS.snapshotsWritten);
      logger.info('search snapshot rebuilt', { runId: report.runId, servers });
    }
    countMetric(CRAWL_METRICS.succeeded);
    countMetric(CRAWL_METRICS.added, report.counts.added);
    countMetric(CRAWL_METRICS.updated, report.counts.updated);
    countMetric(CRAWL_METRICS.removed, report.counts.removed);
    countMetric(CRAWL_METRICS.rejected, report.counts.rejected);
    countMetric(CRAWL_METRICS.enrichmentFailures, report.counts.enrichmentFailures);
    if (report.finishedAt !== undefined) {
      countMetric(CRAWL_METRICS.durationSeconds, (Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000, 'Seconds');
    }
    const summary: CrawlSummary = {
      runId: report.runId,
      mode: report.mode,
      counts: report.counts,
      failuresByStep: report.failuresByStep,
      warnings: report.warnings,
      ...(report.highWater !== undefined && { highWater: report.highWater }),
    };
    logger.info('crawl finished', summary);
    return summary;
  };

  const handler: CrawlerHandlers['handler'] = async (event, context) => {
    if (context?.awsRequestId) logger.appendKeys({ requestId: context.awsRequestId });
    try {
      switch (event.action) {
        case 'plan':
          return await planHandler({ mode: event.mode, maxSteps: event.maxSteps });
        case 'unit':
          return await unitHandler({ runId: event.runId, unitId: event.unitId });
        case 'finalize':
          return await finalizeHandler({ runId: event.runId });
        default:
          throw new Error(`unknown crawler action ${String(event.action)}`);
      }
    } finally {
      logger.removeKeys(['requestId']);
      flushMetrics();
    }
  };
  return { planHandler, unitHandler, finalizeHandler, handler };
}

export const { planHandler, unitHandler, finalizeHandler, handler } = crawlerHandlers(crawler, process.env, () => {
  const { store, snapshot } = crawlerInstance();
  return snapshot && { store, snapshot };
});
