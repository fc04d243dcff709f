import type { UnitRef } from './domain/ports';
import type { CrawlReport } from './domain/types';
import { describeError } from './http/http-client';
import { mapLimit } from '../shared/concurrency';

import { finalizeRun } from './finalize';
import { planCrawl } from './plan';
import {
  DEFAULT_CRAWLER_SETTINGS,
  type CrawlContext,
  type CrawlerDeps,
  type CrawlerSettings,
  type PlanMode,
  type PlanOptions,
  type PlanResult,
  type UnitOutcome,
} from './settings';
import { runUnit } from './unit';

/** The crawler service: one façade over the three phases, each in its own module. */
export class Crawler {
  readonly settings: CrawlerSettings;
  private readonly ctx: CrawlContext;

  constructor(deps: CrawlerDeps, settings: Partial<CrawlerSettings> = {}) {
    this.settings = { ...DEFAULT_CRAWLER_SETTINGS, ...settings, steps: { ...DEFAULT_CRAWLER_SETTINGS.steps, ...settings.steps } };
    this.ctx = { deps, settings: this.settings, clock: deps.clock ?? { now: () => new Date() } };
  }

  planCrawl(opts: PlanOptions = {}): Promise<PlanResult> {
    return planCrawl(this.ctx, opts);
  }

  runUnit(ref: UnitRef): Promise<UnitOutcome> {
    return runUnit(this.ctx, ref);
  }

  finalizeRun(runId: string): Promise<CrawlReport> {
    return finalizeRun(this.ctx, runId);
  }
}

// ---------------------------------------------------------------------------------------------
// Local driver (the CLI, tests, benchmarks): plan, run every unit, finalise
// ---------------------------------------------------------------------------------------------

export interface RunCrawlOptions {
  mode?: PlanMode;
  /** Units run in parallel (each enriches `enrichConcurrency` servers at once). */
  unitConcurrency?: number;
  /** Attempts per unit before the run is left for a later resume. */
  unitAttempts?: number;
  /** Stops scheduling units when aborted; the run stays resumable. */
  signal?: AbortSignal;
  onProgress?: (p: { phase: 'plan' | 'units' | 'finalize'; done: number; total: number; runId: string }) => void;
}

export class CrawlAbortedError extends Error {
  constructor(readonly runId: string) {
    super(`crawl ${runId} was stopped; run again to resume it`);
    this.name = 'CrawlAbortedError';
  }
}

export async function runCrawl(crawler: Crawler, o: RunCrawlOptions = {}): Promise<CrawlReport> {
  let pages = 0;
  const plan = await crawler.planCrawl({
    ...(o.mode !== undefined && { mode: o.mode }),
    onStep: (p) => {
      pages++;
      o.onProgress?.({ phase: 'plan', done: pages, total: pages, runId: p.runId });
    },
  });
  const total = plan.units.length;
  let done = 0;
  const failed: Array<{ unit: UnitRef; error: unknown }> = [];
  o.onProgress?.({ phase: 'units', done, total, runId: plan.runId });
  await mapLimit(
    plan.units,
    o.unitConcurrency ?? 2,
    async (unit) => {
      if (o.signal?.aborted) return;
      const attempts = Math.max(1, o.unitAttempts ?? 2);
      for (let attempt = 1; ; attempt++) {
        try {
          await crawler.runUnit(unit);
          break;
        } catch (err) {
          if (attempt >= attempts || o.signal?.aborted) {
            failed.push({ unit, error: err });
            return;
          }
        }
      }
      done++;
      o.onProgress?.({ phase: 'units', done, total, runId: plan.runId });
    },
    { onError: 'continue' },
  );
  if (o.signal?.aborted) throw new CrawlAbortedError(plan.runId);
  if (failed.length > 0) {
    const first = failed[0];
    throw new Error(
      `${failed.length} of ${total} units of crawl ${plan.runId} failed (first: ${first.unit.unitId}: ${describeError(first.error)}); run the crawl again to resume`,
    );
  }
  o.onProgress?.({ phase: 'finalize', done: total, total, runId: plan.runId });
  return crawler.finalizeRun(plan.runId);
}
