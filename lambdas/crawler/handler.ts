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

import { DynamoCatalogStore } from '../catalog/adapters/dynamo-catalog-store';
import { S3IconStore } from '../catalog/adapters/s3-icon-store';
import { createOpenSearchClient, OpenSearchIndex } from '../catalog/search/opensearch';
import { documentClient, dynamoClient, loadBatchSdkBudget, s3Config } from '../shared/aws/clients';
import { loadCatalogConfig } from '../catalog/config';
import { logger } from '../shared/logger';
import { DynamoCrawlState } from './adapters/dynamo-crawl-state';
import { loadCrawlerConfig } from './config';
import type { Crawler } from './crawler';
import type { PlanMode } from './settings';
import type { UnitRef } from './domain/ports';
import { createCrawler } from './wiring';

let instance: Crawler | undefined;

function crawler(): Crawler {
  if (instance) return instance;
  const catalog = loadCatalogConfig();
  const config = loadCrawlerConfig();
  if (!catalog.opensearchUrl) throw new Error('OPENSEARCH_URL is required in AWS');
  // Tasks of up to 15 minutes with no caller waiting: a slow batch is waited for, not failed.
  const doc = documentClient(dynamoClient(catalog, loadBatchSdkBudget()));
  instance = createCrawler(config, {
    store: new DynamoCatalogStore(doc, catalog.catalogTable),
    index: new OpenSearchIndex({ client: createOpenSearchClient(catalog.opensearchUrl, catalog.region), index: catalog.opensearchIndex }),
    icons: new S3IconStore((mod) => new mod.S3Client(s3Config(catalog, loadBatchSdkBudget())), catalog.iconsBucket),
    state: new DynamoCrawlState(doc, config.stateTable),
    region: catalog.region,
  }).crawler;
  return instance;
}

function isPlanMode(v: unknown): v is PlanMode {
  return v === 'auto' || v === 'full' || v === 'incremental';
}

export interface CrawlerHandlers {
  planHandler(event?: { mode?: unknown; maxSteps?: unknown }): Promise<{ runId: string; planned: boolean; units: UnitRef[] }>;
  unitHandler(event: { runId?: unknown; unitId?: unknown }): Promise<{ runId: string; unitId: string; runComplete: boolean; counts?: Record<string, number> }>;
  finalizeHandler(event: { runId?: unknown }): Promise<Record<string, unknown>>;
  /** The function's entry: `{ action: 'plan' | 'unit' | 'finalize', … }`, as the state machine sends it. */
  handler(event: { action?: unknown; mode?: unknown; maxSteps?: unknown; runId?: unknown; unitId?: unknown }): Promise<unknown>;
}

/** The three actions over the crawler `get` returns (in AWS: built once per instance from the environment). */
export function crawlerHandlers(get: () => Crawler, env: NodeJS.ProcessEnv = process.env): CrawlerHandlers {
  const planHandler: CrawlerHandlers['planHandler'] = async (event = {}) => {
    const maxSteps = typeof event.maxSteps === 'number' && event.maxSteps > 0 ? event.maxSteps : Number(env.CRAWLER_PLAN_MAX_STEPS ?? 200);
    const plan = await get().planCrawl({ ...(isPlanMode(event.mode) && { mode: event.mode }), maxSteps });
    logger.info('crawl planned', { runId: plan.runId, mode: plan.mode, resumed: plan.resumed, planned: plan.planned, units: plan.units.length });
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
    const summary = {
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

  const handler: CrawlerHandlers['handler'] = async (event) => {
    switch (event.action) {
      case 'plan':
        return planHandler({ mode: event.mode, maxSteps: event.maxSteps });
      case 'unit':
        return unitHandler({ runId: event.runId, unitId: event.unitId });
      case 'finalize':
        return finalizeHandler({ runId: event.runId });
      default:
        throw new Error(`unknown crawler action ${String(event.action)}`);
    }
  };
  return { planHandler, unitHandler, finalizeHandler, handler };
}

export const { planHandler, unitHandler, finalizeHandler, handler } = crawlerHandlers(crawler);
