import type { CatalogStore, SearchIndex, IconStore, TrustStore } from '../catalog-core';
import type { CategoryClassifier } from './domain/classify';
import type { Clock, CrawlStateStore, DownloadsSource, GithubSource, HealthChecker, IconFetcher, RunMeta, UnitRef, UpstreamRegistry } from './domain/ports';
import type { CrawlMode, EnrichStep, UnitResult } from './domain/types';

/** What every phase of a crawl works with: the ports, the settings and the clock. */
export interface CrawlContext {
  deps: CrawlerDeps;
  settings: CrawlerSettings;
  clock: Clock;
}

export interface CrawlerSettings {
  /** Upper bound of the JSON rows stored on one unit item (DynamoDB items are at most 400 KB). */
  unitMaxBytes: number;
  /** Servers enriched in parallel within one unit. */
  enrichConcurrency: number;
  /** Enrichment steps that run (all by default). */
  steps: Record<EnrichStep, boolean>;
  /** Incremental runs re-enrich servers last enriched longer ago than this. */
  refreshAfterHours: number;
  /** At most this many servers re-enriched per incremental run (0 disables refresh units). */
  refreshBatch: number;
  refreshUnitSize: number;
  /** A full run removes unseen names only when it saw at least this share of the listed ones. */
  sweepMinShare: number;
  /** The high-water mark stays this far behind the upstream clock at the run's start. */
  highWaterMarginMs: number;
  /** Remotes health-checked per server. */
  maxHealthRemotes: number;
  /**
   * A new run first removes the local stack's demo servers (`demo-data.ts`). The deployed crawler
   * turns it off: only the local stack writes demo data, and its role may not scan the catalog.
   */
  removeDemoData: boolean;
}

export const DEFAULT_CRAWLER_SETTINGS: CrawlerSettings = {
  unitMaxBytes: 300 * 1024,
  enrichConcurrency: 8,
  steps: { github: true, readme: true, downloads: true, health: true, icon: true, classifier: true },
  refreshAfterHours: 24,
  refreshBatch: 500,
  refreshUnitSize: 50,
  sweepMinShare: 0.5,
  highWaterMarginMs: 60_000,
  maxHealthRemotes: 3,
  removeDemoData: true,
};

export interface CrawlerDeps {
  state: CrawlStateStore;
  upstream: UpstreamRegistry;
  store: CatalogStore;
  index: SearchIndex;
  icons: IconStore;
  /** The changelog (version bumps and tool changes a crawl sees); none: the crawl keeps no changelog. */
  trust?: TrustStore;
  github?: GithubSource;
  downloads?: DownloadsSource;
  health?: HealthChecker;
  iconFetcher?: IconFetcher;
  classifier?: CategoryClassifier;
  clock?: Clock;
}

export type PlanMode = 'auto' | 'full' | 'incremental';

export interface PlanOptions {
  /** `auto` (default): incremental when a high-water mark exists, else full. */
  mode?: PlanMode;
  /** Stop after this many plan steps in this call (a Lambda with a time budget); resumable. */
  maxSteps?: number;
  onStep?: (p: { runId: string; step: number; rows: number; units: number }) => void;
}

export interface PlanResult {
  runId: string;
  mode: CrawlMode;
  resumed: boolean;
  /** false when planning stopped at `maxSteps` and must be continued. */
  planned: boolean;
  /** Units not done yet (all of them once planned). */
  units: UnitRef[];
  /** When the previous run finished (the catalog's freshness), if one has. */
  lastFinishedAt?: string;
}

export interface UnitOutcome {
  alreadyDone: boolean;
  /** True when this was the last unit of a fully planned run: call `finalizeRun`. */
  runComplete: boolean;
  result?: UnitResult;
}

export class RunIncompleteError extends Error {
  constructor(readonly run: RunMeta) {
    super(`run ${run.runId} is not complete (${run.status}, ${run.unitsDone}/${run.unitsCreated} units done)`);
    this.name = 'RunIncompleteError';
  }
}

/** Every unit of a fully planned run is done: the run may be finalised. */
export function isComplete(run: RunMeta): boolean {
  return run.status === 'running' && run.unitsDone >= run.unitsCreated;
}
