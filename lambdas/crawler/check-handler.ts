/**
 * AWS Lambda entry of the check schedule (`checks.ts`), driven by the check state machine that an
 * EventBridge schedule starts (lib/catalog-checks.ts):
 *
 *   Plan ─▶ Map over `batches` (MaxConcurrency N) ─▶ Batch ─▶ Finish
 *
 * Events and results:
 * - `{ action: 'plan' }` → `{ total, batches: [{ offset, limit }] }`: ranges over the hosted
 *   servers in name order (a few numbers whatever the catalog's size: the Map's state stays small)
 * - `{ action: 'batch', offset, limit }` → the batch's counts (checked, up, auth, down, markedDown, skipped)
 * - `{ action: 'finish', total, results }` → the round's counts (the Map's results summed); in the
 *   small-catalog mode it also rebuilds the search snapshot from DynamoDB, so lists show the new
 *   uptime and down marks (the crawl's finalize does the same); it fails when a batch failed
 *   (`{ failed: true }` in `results`), after the rest of the round is written
 *
 * A check is one observation: a batch that fails is not retried by the state machine (a retry would
 * check its servers twice in one round); the next round checks them again.
 */

import {
  DynamoCatalogStore,
  DynamoTrustStore,
  loadCatalogStoreConfig,
  rebuildIndex,
  searchIndexForReads,
  searchIndexForWrites,
  type S3SnapshotWriter,
  type SearchIndex,
} from '../catalog-core';
import { documentClient, dynamoClient, loadBatchSdkBudget } from '../shared/aws/clients';
import { logger } from '../shared/logger';
import { CRAWL_METRICS } from '../shared/observability/metric-names';
import { countMetric, flushMetrics } from '../shared/observability/metrics';
import { checkBatch, planChecks, type CheckBatchRef, type CheckCounts, type CheckDeps } from './checks';
import { loadCrawlerConfig } from './config';
import { createChecker } from './check-wiring';

export interface CheckInstance {
  deps: CheckDeps;
  /** The small-catalog mode: Finish rebuilds the snapshot from the store. */
  rebuild?: () => Promise<number>;
}

export interface CheckPlan {
  total: number;
  batches: CheckBatchRef[];
}

export interface CheckRoundSummary extends CheckCounts {
  total: number;
  batches: number;
}

const COUNT_KEYS: ReadonlyArray<keyof CheckCounts> = ['checked', 'up', 'auth', 'down', 'markedDown', 'skipped'];

let instance: Promise<CheckInstance> | undefined;

/**
 * Built once per Lambda instance. OpenSearch serves both the plan's listing and each server's
 * update; the embedded engine lists from the snapshot (read side) and leaves the update to Finish's
 * rebuild (its per-server writes are no-ops).
 */
async function checkInstance(): Promise<CheckInstance> {
  const catalog = loadCatalogStoreConfig();
  const config = loadCrawlerConfig();
  const doc = documentClient(dynamoClient(catalog, loadBatchSdkBudget()));
  const store = new DynamoCatalogStore(doc, catalog.catalogTable);
  const writes = searchIndexForWrites(catalog);
  const index: SearchIndex = catalog.searchBackend === 'embedded' ? await searchIndexForReads(catalog) : writes;
  const { deps } = createChecker(config, {
    store,
    index,
    indexWrites: writes,
    trust: new DynamoTrustStore(doc, catalog.trustTable, catalog.checkRetentionDays),
  });
  return { deps, ...(catalog.searchBackend === 'embedded' && { rebuild: () => rebuildIndex(store, writes as S3SnapshotWriter) }) };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

export interface CheckHandlerEvent {
  action?: unknown;
  offset?: unknown;
  limit?: unknown;
  total?: unknown;
  results?: unknown;
}

/** The three actions over the instance `get` returns (tests pass their own). */
export function checkHandlers(get: () => Promise<CheckInstance>) {
  const plan = async (): Promise<CheckPlan> => {
    const { deps } = await get();
    const planned = await planChecks(deps.index, deps.settings.batchSize);
    logger.info('check round planned', { total: planned.total, batches: planned.batches.length });
    return planned;
  };

  const batch = async (event: CheckHandlerEvent): Promise<CheckCounts> => {
    if (!isCount(event.offset) || !isCount(event.limit) || event.limit === 0) throw new Error('batch event needs offset and limit (whole numbers, limit > 0)');
    const counts = await checkBatch((await get()).deps, { offset: event.offset, limit: event.limit });
    logger.info('check batch done', { offset: event.offset, limit: event.limit, ...counts });
    return counts;
  };

  const finish = async (event: CheckHandlerEvent): Promise<CheckRoundSummary> => {
    const results = Array.isArray(event.results) ? (event.results as Array<Partial<CheckCounts>>) : [];
    const summary: CheckRoundSummary = {
      total: isCount(event.total) ? event.total : 0,
      batches: results.length,
      checked: 0,
      up: 0,
      auth: 0,
      down: 0,
      markedDown: 0,
      skipped: 0,
    };
    for (const r of results) for (const k of COUNT_KEYS) summary[k] += isCount(r?.[k]) ? r[k] : 0;
    const { rebuild } = await get();
    if (rebuild !== undefined && summary.checked > 0) {
      const servers = await rebuild();
      countMetric(CRAWL_METRICS.snapshotsWritten);
      logger.info('search snapshot rebuilt after the check round', { servers });
    }
    countMetric(CRAWL_METRICS.healthLive, summary.up);
    countMetric(CRAWL_METRICS.healthAuthRequired, summary.auth);
    countMetric(CRAWL_METRICS.healthDown, summary.down);
    const failed = results.filter((r) => (r as { failed?: unknown })?.failed === true);
    logger.info('check round finished', { ...summary, failedBatches: failed.length });
    // After the rest of the round is written: the execution fails, and its alarm fires.
    if (failed.length > 0) throw new Error(`${failed.length} of ${results.length} check batches failed: ${JSON.stringify(failed.slice(0, 5))}`);
    return summary;
  };

  /** The function's entry: `{ action: 'plan' | 'batch' | 'finish', … }`, as the state machine sends it. */
  const handler = async (event: CheckHandlerEvent, context?: { awsRequestId?: string }): Promise<CheckPlan | CheckCounts | CheckRoundSummary> => {
    if (context?.awsRequestId) logger.appendKeys({ requestId: context.awsRequestId });
    try {
      switch (event.action) {
        case 'plan':
          return await plan();
        case 'batch':
          return await batch(event);
        case 'finish':
          return await finish(event);
        default:
          throw new Error(`unknown check action ${String(event.action)}`);
      }
    } finally {
      logger.removeKeys(['requestId']);
      flushMetrics();
    }
  };
  return { plan, batch, finish, handler };
}

export const { handler } = checkHandlers(() => {
  instance ??= checkInstance().catch((err: unknown) => {
    instance = undefined;
    throw err;
  });
  return instance;
});
