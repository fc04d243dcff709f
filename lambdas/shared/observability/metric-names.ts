/**
 * The application's CloudWatch metrics (EMF, namespace `POWERTOOLS_METRICS_NAMESPACE`, dimension
 * `service` = the function's POWERTOOLS_SERVICE_NAME). Plain data, read by the functions that emit
 * them and by the CDK alarms and dashboard that watch them (lib/monitoring.ts), so a name is written
 * once.
 */

/** Per request, with the dimensions `service` and `route` (the operationId, `preflight` or `error`). */
export const REQUEST_METRICS = {
  /** Milliseconds from the pipeline's start to its answer; its SampleCount is the number of requests. */
  latency: 'Latency',
  /** Answers with a 5xx status (emitted only when there is one). */
  faults: 'Faults',
  /** Answers with a 4xx status other than 429 (emitted only when there is one). */
  clientErrors: 'ClientErrors',
} as const;

/** Per function (dimension `service` only), counted as they happen. */
export const EVENT_METRICS = {
  /** Requests refused with 429 by the shared limiter. */
  rateLimited: 'RateLimited',
  /** Bearer tokens refused (malformed, expired, forged, revoked, foreign); a missing token is not counted. */
  authFailures: 'AuthFailures',
  /** Tokens that could not be checked (JWKS or token table unreachable): the 503s of auth. */
  authUnavailable: 'AuthUnavailable',
  /** Requests that reached an origin without CloudFront's secret header (403). */
  originRefused: 'OriginRefused',
  /** Writes refused because If-Match (or `expectedRev`) named a rev that is no longer the head. */
  ifMatchConflicts: 'IfMatchConflicts',
  /** Writes that lost the conditional head move to another writer and were rebased and retried. */
  rebaseRetries: 'RebaseRetries',
  /** Notes refused because they contain a credential. */
  credentialRefusals: 'CredentialRefusals',
  /** Embedded search snapshots loaded by a catalog instance (cold start or a new generation). */
  snapshotLoads: 'SearchSnapshotLoads',
  /** A new snapshot generation could not be loaded; the instance keeps serving the one it has. */
  snapshotLoadFailures: 'SearchSnapshotLoadFailures',
} as const;

/** The crawler's (dimension `service` = `crawler`). */
export const CRAWL_METRICS = {
  /** One per crawl run finished (finalize succeeded); the staleness alarm watches its absence. */
  succeeded: 'CrawlsSucceeded',
  /** Seconds from a run's start to its finish. */
  durationSeconds: 'CrawlDurationSeconds',
  /** Seconds since the previous successful crawl finished, emitted by every plan (freshness). */
  freshnessSeconds: 'CrawlFreshnessSeconds',
  added: 'ServersAdded',
  updated: 'ServersUpdated',
  removed: 'ServersRemoved',
  rejected: 'ServersRejected',
  enrichmentFailures: 'EnrichmentFailures',
  /** Health checks of remote MCP endpoints, by outcome. */
  healthLive: 'HealthChecksLive',
  healthAuthRequired: 'HealthChecksAuthRequired',
  healthDown: 'HealthChecksDown',
  /** Embedded mode: search snapshots written to S3 (finalize). */
  snapshotsWritten: 'SearchSnapshotsWritten',
} as const;

export type RequestMetric = (typeof REQUEST_METRICS)[keyof typeof REQUEST_METRICS];
export type EventMetric = (typeof EVENT_METRICS)[keyof typeof EVENT_METRICS] | (typeof CRAWL_METRICS)[keyof typeof CRAWL_METRICS];

/** The namespace CDK gives every function of a stage: one per stage, so stages never mix. */
export const metricsNamespace = (stage: string): string => `McpCatalog/${stage}`;
