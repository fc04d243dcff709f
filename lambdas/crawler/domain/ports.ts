/**
 * The crawler's ports. The service (`../crawler.ts`) depends only on these and on the catalog's
 * own ports (CatalogStore, SearchIndex, IconStore); adapters live in `../adapters`.
 */

import type { GithubRepo, ReadmeContent, RegistryRemote } from '../../catalog-core';
import type { StarHistory } from './trending';
import type { CrawlMode, Rejection, RemoteHealth, RepoInfo, UnitResult } from './types';

// ---------------------------------------------------------------------------------------------
// Upstream
// ---------------------------------------------------------------------------------------------

export interface UpstreamPage {
  rows: unknown[];
  /** Absent on the last page. */
  nextCursor?: string;
  /** The upstream's clock when it answered (its `Date` header), ISO 8601. */
  serverDate?: string;
}

export interface UpstreamRegistry {
  fetchPage(q: { cursor?: string; updatedSince?: string }): Promise<UpstreamPage>;
}

// ---------------------------------------------------------------------------------------------
// Enrichment sources
// ---------------------------------------------------------------------------------------------

/** `owner/repo` of a GitHub repository. */
export type RepoRef = GithubRepo;

/** A conditional-request cache entry (ETag and what the 200 said). */
export interface CachedResponse<T> {
  etag?: string;
  value: T;
  fetchedAt: string;
}

export interface GithubSource {
  repository(ref: RepoRef, cached?: CachedResponse<RepoInfo>): Promise<CachedResponse<RepoInfo>>;
  /** `value` null = the repository (or subfolder) has no README. */
  readme(
    ref: RepoRef,
    subfolder: string | undefined,
    cached?: CachedResponse<ReadmeContent | null>,
  ): Promise<{
    response: CachedResponse<ReadmeContent | null>;
    /** true when GitHub answered 304 (the cached value is current). */
    notModified: boolean;
  }>;
}

export interface DownloadsSource {
  /** Last-month downloads, or undefined when the registry does not know the package. */
  npm(identifier: string): Promise<number | undefined>;
  pypi(identifier: string): Promise<number | undefined>;
}

export interface HealthChecker {
  /** undefined when the remote cannot be checked (a URL template needing user values). */
  check(remote: RegistryRemote): Promise<RemoteHealth | undefined>;
}

export interface IconFetcher {
  /** Fetches, checks and re-encodes the first usable candidate to 128x128 webp. */
  fetchIcon(candidates: string[]): Promise<{ webp: Uint8Array; source: string } | { refused: string[] }>;
}

export interface Clock {
  now(): Date;
}

// ---------------------------------------------------------------------------------------------
// Crawl state (DynamoDB)
// ---------------------------------------------------------------------------------------------

export interface CrawlPointer {
  /** The next incremental run asks upstream for `updated_since` this instant. */
  highWater?: string;
  /** A run that has not finished yet (resumed by the next plan). */
  currentRun?: string;
  lastRun?: string;
}

export type RunStatus = 'planning' | 'running' | 'done';

export interface RunMeta {
  runId: string;
  mode: CrawlMode;
  since?: string;
  startedAt: string;
  status: RunStatus;
  /** Upstream cursor of the next page to fetch while planning (absent: start, or no more). */
  cursor?: string;
  /** Plan steps committed (pages, then refresh batches). */
  steps: number;
  unitsCreated: number;
  unitsDone: number;
  rowsSeen: number;
  /** Highest upstream `updatedAt` among the rows of this run. */
  maxUpdatedAt?: string;
  /** The upstream's clock at the first page of this run. */
  upstreamStartedAt?: string;
  finishedAt?: string;
  /** JSON of the final report's counts and warnings (the full lists stay on the unit items). */
  summary?: string;
  /** Demo servers the planner removed before this run wrote anything (`demo-data.ts`). */
  demo?: { removed: number; warnings: string[] };
}

export type UnitKind = 'page' | 'refresh';

export interface UnitRef {
  runId: string;
  unitId: string;
}

export interface UnitItem extends UnitRef {
  kind: UnitKind;
  status: 'pending' | 'done';
  /** Upstream rows (JSON text) of a page unit. */
  rows?: string;
  /** Names of a refresh unit. */
  names?: string[];
  /** Rows the planner could not even identify (no name, too large). */
  planRejects?: Rejection[];
  result?: UnitResult;
}

/** Which row of the current run carries a name's latest version. */
export interface RunBest {
  runId: string;
  precedence: string;
  unitId: string;
  index: number;
}

export interface NameState {
  name: string;
  slug?: string;
  /** Precedence of the version last processed (rows below it are stale). */
  precedence?: string;
  runBest?: RunBest;
  /** Whether the name is currently in the catalog. */
  listed?: boolean;
  /** Why it is not (rejected or deleted upstream). */
  reason?: string;
  stars?: StarHistory;
  enrichedAt?: string;
}

export interface PlanStep {
  /** 1-based; a step is committed once (a retried step with the same number is a no-op). */
  step: number;
  units: UnitItem[];
  /** Cursor of the next page; undefined when this was the last page. */
  cursor?: string;
  /** true when planning is complete with this step. */
  planned: boolean;
  rows: number;
  maxUpdatedAt?: string;
  upstreamStartedAt?: string;
}

export interface CrawlStateStore {
  getPointer(): Promise<CrawlPointer>;
  /** Creates the run and makes it current, unless another run became current meanwhile. */
  startRun(run: RunMeta, expectedCurrent: string | undefined): Promise<boolean>;
  getRun(runId: string): Promise<RunMeta | undefined>;
  /** Atomically stores the step's units and advances the run (idempotent per step number). */
  commitPlanStep(runId: string, step: PlanStep): Promise<void>;
  getUnit(ref: UnitRef): Promise<UnitItem | undefined>;
  listUnits(runId: string): Promise<UnitItem[]>;
  /** Marks a unit done with its result and counts it on the run; returns the run afterwards. */
  completeUnit(ref: UnitRef, result: UnitResult): Promise<RunMeta>;
  /** Ends the run and moves the pointer (high-water mark, no current run). */
  finishRun(runId: string, summary: string, highWater: string | undefined): Promise<void>;

  getNames(names: string[]): Promise<Map<string, NameState>>;
  /** Claims a slug for a name; true when the name now holds it (also when it already did). */
  claimSlug(slug: string, name: string): Promise<boolean>;
  /**
   * Writes whole name states, in bulk. Safe without conditions because each name has a single
   * writer at a time: the planner while a run is planning, then the one unit that holds the
   * name's best row (units run only once planning is complete), then the finaliser.
   */
  saveNames(states: NameState[]): Promise<void>;
  scanNames(): AsyncIterable<NameState>;

  getCached<T>(keys: string[]): Promise<Map<string, CachedResponse<T>>>;
  putCached<T>(key: string, value: CachedResponse<T>): Promise<void>;
}
