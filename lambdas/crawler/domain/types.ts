import type {
  CatalogHealth,
  CatalogTool,
  GithubInfo,
  ReadmeContent,
  RegistryIcon,
  RegistryPackage,
  RegistryRemote,
  RegistryRepository,
} from '../../catalog-core';
/**
 * The crawler's domain vocabulary: what an upstream row becomes once normalised, why a row is
 * rejected, what a unit of work produced and what the crawl report says. No I/O here.
 */

export type UpstreamStatus = 'active' | 'deprecated' | 'deleted';

/** The registry-managed part of a row (`_meta["io.modelcontextprotocol.registry/official"]`). */
export interface RowMeta {
  status?: UpstreamStatus;
  /** ISO 8601, millisecond precision (upstream sends microseconds; see `isoMillis`). */
  publishedAt?: string;
  updatedAt?: string;
  isLatest?: boolean;
}

/** An upstream server after normalisation: valid against the 2025-12-11 server.json schema. */
export interface NormalisedServer {
  name: string;
  title?: string;
  description: string;
  version: string;
  status: UpstreamStatus;
  websiteUrl?: string;
  repository?: RegistryRepository;
  packages: RegistryPackage[];
  remotes: RegistryRemote[];
  icons?: RegistryIcon[];
  publishedAt?: string;
  upstreamUpdatedAt?: string;
  isLatest: boolean;
  /** The `$schema` date the row declared ('' when none). */
  declaredSchema: string;
  /** Human-readable list of the repairs applied (empty when the row was already current). */
  repairs: string[];
  /** URLs dropped because their scheme is not http(s) (`javascript:`, `data:`, …), with the field: they go in the crawl report. */
  dropped?: string[];
}

/** Stable reason codes of rejected rows (the report adds a readable `reason`). */
export type RejectCode =
  | 'not_an_object'
  | 'missing_name'
  | 'invalid_name'
  | 'missing_version'
  | 'invalid_description'
  | 'unknown_status'
  | 'invalid_package'
  | 'invalid_remote'
  | 'schema'
  | 'row_too_large';

export interface Rejection {
  name?: string;
  version?: string;
  code: RejectCode;
  reason: string;
}

/** A URL the crawler dropped from a server it kept: a `javascript:` website, a `data:` icon, … */
export interface DroppedUrl {
  name: string;
  version?: string;
  reason: string;
}

export type NormaliseResult = { ok: true; server: NormalisedServer } | { ok: false; rejection: Rejection };

/** Enrichment steps; each is optional per server and its failure never fails the server. */
export const ENRICH_STEPS = ['github', 'readme', 'downloads', 'health', 'icon', 'classifier'] as const;
export type EnrichStep = (typeof ENRICH_STEPS)[number];

export interface EnrichmentFailure {
  name: string;
  step: EnrichStep;
  reason: string;
}

/** What GitHub says about a repository (cached with its ETag in the crawl state). */
export interface RepoInfo extends GithubInfo {
  /** false when GitHub answered 404 (repository gone or private). */
  exists: boolean;
  defaultBranch?: string;
}

/** One remote's health check. */
export interface RemoteHealth {
  url: string;
  live: boolean;
  authRequired?: boolean;
  toolCount?: number;
  tools?: CatalogTool[];
  checkedAt: string;
  /** Why it is not live (timeout, refused, HTTP status…). */
  error?: string;
  /** HTTP status of a refusing answer (401/403 on `authRequired`, the status of a failed answer). */
  status?: number;
  /** From the start of the check to its answer (initialize + tools/list, or the refusal), when something answered. */
  latencyMs?: number;
}

/** The enrichment of one server, step by step; `undefined` means "not known this time". */
export interface Enrichment {
  repo?: RepoInfo;
  /** `null` = the repository has no README; `'unchanged'` = same sha as the stored one. */
  readme?: ReadmeContent | null | 'unchanged';
  downloads?: number;
  health?: CatalogHealth;
  tools?: CatalogTool[];
  hasIcon?: boolean;
}

/** Result of one unit, stored on the unit item and merged into the crawl report. */
export interface UnitResult {
  rows: number;
  added: string[];
  updated: string[];
  unchanged: number;
  removed: string[];
  /** Names whose latest version upstream is `deleted` (whether or not they were listed here). */
  deleted: string[];
  /** Rows skipped because a newer version of the same name was processed. */
  superseded: number;
  rejected: Rejection[];
  /** Absent on the results of units stored before URLs were dropped. */
  dropped?: DroppedUrl[];
  failures: EnrichmentFailure[];
  iconsStored: number;
}

export function emptyUnitResult(): UnitResult {
  return { rows: 0, added: [], updated: [], unchanged: 0, removed: [], deleted: [], superseded: 0, rejected: [], dropped: [], failures: [], iconsStored: 0 };
}

export type CrawlMode = 'full' | 'incremental';

export interface ReportCounts {
  rows: number;
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
  rejected: number;
  /** URLs dropped from servers that were kept (see `CrawlReport.dropped`). */
  droppedUrls: number;
  superseded: number;
  enrichmentFailures: number;
  iconsStored: number;
}

export interface CrawlReport {
  runId: string;
  mode: CrawlMode;
  since?: string;
  startedAt: string;
  finishedAt?: string;
  units: number;
  counts: ReportCounts;
  added: string[];
  updated: string[];
  removed: string[];
  /** Names deleted upstream (the ones that were listed are also in `removed`). */
  deleted: string[];
  rejected: Rejection[];
  /** URLs outside http(s) dropped from kept servers, each with its field and scheme. */
  dropped: DroppedUrl[];
  failures: EnrichmentFailure[];
  /** Failures per step, e.g. `{ github: 12, health: 3 }`. */
  failuresByStep: Partial<Record<EnrichStep, number>>;
  /** The high-water mark the next incremental run starts from. */
  highWater?: string;
  /** Demo servers removed before the run (demo data is for an empty catalog only). */
  demoRemoved: number;
  warnings: string[];
}
