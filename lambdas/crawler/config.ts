/**
 * Crawler configuration from the environment (CDK passes the same names as Lambda environment
 * variables; `bin/crawl.ts` flags override them). Every base URL is configurable so that tests,
 * benchmarks and mirrors can point the crawler anywhere.
 *
 * | Variable | Default | Meaning |
 * |---|---|---|
 * | `REGISTRY_URL` | https://registry.modelcontextprotocol.io | upstream registry (`/v0.1/servers`) |
 * | `REGISTRY_PAGE_SIZE` | 100 | `limit` per upstream page |
 * | `GITHUB_API_URL` | https://api.github.com | GitHub REST API |
 * | `GITHUB_TOKEN` | — | GitHub token (local runs) |
 * | `GITHUB_TOKEN_SECRET_ARN` | — | Secrets Manager secret holding the token (AWS) |
 * | `NPM_DOWNLOADS_URL` | https://api.npmjs.org | npm downloads API |
 * | `PYPI_STATS_URL` | https://pypistats.org | PyPI download stats API |
 * | `CRAWL_STATE_TABLE` | crawl-state | DynamoDB table of the crawl state |
 * | `CRAWLER_STEPS` | all | enrichment steps to run: comma list of github, readme, downloads, health, icon, classifier (`none` for none) |
 * | `CRAWLER_CLASSIFIER` | rules | `rules`, or `llm` (needs a completion function injected; off by default) |
 * | `CRAWLER_HTTP_TIMEOUT_MS` | 10000 | per-request timeout |
 * | `CRAWLER_HEALTH_TIMEOUT_MS` | 5000 | MCP health check timeout (connect + list tools) |
 * | `CRAWLER_RETRIES` | 3 | retries on 408/429/5xx and dropped connections |
 * | `CRAWLER_RETRY_BASE_MS` | 250 | first backoff step (doubles, with jitter, up to 8 s) |
 * | `CRAWLER_HOST_CONCURRENCY` | 4 | requests in flight per host |
 * | `CRAWLER_ENRICH_CONCURRENCY` | 8 | servers enriched in parallel per unit |
 * | `CRAWLER_UNIT_CONCURRENCY` | 2 | units run in parallel by the local driver |
 * | `README_MAX_BYTES` | 262144 | README content cap (truncation flagged) |
 * | `ICON_MAX_BYTES` | 1048576 | icon download cap |
 * | `CRAWLER_REFRESH_AFTER_HOURS` | 24 | incremental runs re-enrich servers older than this |
 * | `CRAWLER_REFRESH_BATCH` | 500 | at most this many re-enriched per incremental run |
 * | `CRAWLER_SWEEP_MIN_SHARE` | 0.5 | full runs remove unseen servers only if this share was seen |
 * | `CHECK_CONCURRENCY` | 16 | servers checked at once per check batch (the check schedule, `npm run check-health`) |
 * | `CHECK_BATCH_SIZE` | 100 | servers per check batch (one Map iteration of the check state machine) |
 * | `CHECK_DOWN_AFTER` | 3 | failed checks in a row that mark a server down |
 * | `CRAWLER_ALLOW_PRIVATE_HOSTS` | false | let icon, avatar and remote URLs from registry data point at loopback/private addresses (local fakes only) |
 */

import { envNumber, envString, type Env } from '../shared/env';
import { ENRICH_STEPS, type EnrichStep } from './domain/types';
import { DEFAULT_CHECK_SETTINGS, type CheckSettings } from './check-settings';

/** The check schedule's defaults, for the CDK app (which reads configuration, never check code). */
export { DEFAULT_CHECK_SETTINGS };

export interface CrawlerConfig {
  registryUrl: string;
  pageSize: number;
  githubApiUrl: string;
  githubToken?: string;
  githubTokenSecretArn?: string;
  npmDownloadsUrl: string;
  pypiStatsUrl: string;
  stateTable: string;
  steps: Record<EnrichStep, boolean>;
  classifier: 'rules' | 'llm';
  httpTimeoutMs: number;
  healthTimeoutMs: number;
  retries: number;
  retryBaseMs: number;
  hostConcurrency: number;
  enrichConcurrency: number;
  unitConcurrency: number;
  readmeMaxBytes: number;
  iconMaxBytes: number;
  refreshAfterHours: number;
  refreshBatch: number;
  sweepMinShare: number;
  allowPrivateHosts: boolean;
  /** The check schedule (`checks.ts`). */
  checks: CheckSettings;
}

function url(env: Env, name: string, fallback: string): string {
  const v = envString(env, name) ?? fallback;
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${v}"`);
  }
  return v.replace(/\/+$/, '');
}

export function parseSteps(value: string | undefined): Record<EnrichStep, boolean> {
  const all = Object.fromEntries(ENRICH_STEPS.map((s) => [s, true])) as Record<EnrichStep, boolean>;
  if (value === undefined || value.trim() === '' || value.trim() === 'all') return all;
  const wanted =
    value.trim() === 'none'
      ? []
      : value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  for (const w of wanted) {
    if (!(ENRICH_STEPS as readonly string[]).includes(w)) throw new Error(`unknown enrichment step "${w}" (known: ${ENRICH_STEPS.join(', ')})`);
  }
  return Object.fromEntries(ENRICH_STEPS.map((s) => [s, wanted.includes(s)])) as Record<EnrichStep, boolean>;
}

export function loadCrawlerConfig(env: Env = process.env): CrawlerConfig {
  const classifier = envString(env, 'CRAWLER_CLASSIFIER') ?? 'rules';
  if (classifier !== 'rules' && classifier !== 'llm') throw new Error('CRAWLER_CLASSIFIER must be rules or llm');
  const githubToken = envString(env, 'GITHUB_TOKEN');
  const githubTokenSecretArn = envString(env, 'GITHUB_TOKEN_SECRET_ARN');
  return {
    registryUrl: url(env, 'REGISTRY_URL', 'https://registry.modelcontextprotocol.io'),
    pageSize: envNumber(env, 'REGISTRY_PAGE_SIZE', 100, { min: 1 }),
    githubApiUrl: url(env, 'GITHUB_API_URL', 'https://api.github.com'),
    ...(githubToken !== undefined && { githubToken }),
    ...(githubTokenSecretArn !== undefined && { githubTokenSecretArn }),
    npmDownloadsUrl: url(env, 'NPM_DOWNLOADS_URL', 'https://api.npmjs.org'),
    pypiStatsUrl: url(env, 'PYPI_STATS_URL', 'https://pypistats.org'),
    stateTable: envString(env, 'CRAWL_STATE_TABLE') ?? 'crawl-state',
    steps: parseSteps(env.CRAWLER_STEPS),
    classifier,
    httpTimeoutMs: envNumber(env, 'CRAWLER_HTTP_TIMEOUT_MS', 10_000, { min: 1 }),
    healthTimeoutMs: envNumber(env, 'CRAWLER_HEALTH_TIMEOUT_MS', 5_000, { min: 1 }),
    retries: envNumber(env, 'CRAWLER_RETRIES', 3, { min: 0 }),
    retryBaseMs: envNumber(env, 'CRAWLER_RETRY_BASE_MS', 250, { min: 0 }),
    hostConcurrency: envNumber(env, 'CRAWLER_HOST_CONCURRENCY', 4, { min: 1 }),
    enrichConcurrency: envNumber(env, 'CRAWLER_ENRICH_CONCURRENCY', 8, { min: 1 }),
    unitConcurrency: envNumber(env, 'CRAWLER_UNIT_CONCURRENCY', 2, { min: 1 }),
    readmeMaxBytes: envNumber(env, 'README_MAX_BYTES', 256 * 1024, { min: 1 }),
    iconMaxBytes: envNumber(env, 'ICON_MAX_BYTES', 1024 * 1024, { min: 1 }),
    refreshAfterHours: envNumber(env, 'CRAWLER_REFRESH_AFTER_HOURS', 24, { min: 0 }),
    refreshBatch: envNumber(env, 'CRAWLER_REFRESH_BATCH', 500, { min: 0 }),
    sweepMinShare: envNumber(env, 'CRAWLER_SWEEP_MIN_SHARE', 0.5, { min: 0 }),
    allowPrivateHosts: envString(env, 'CRAWLER_ALLOW_PRIVATE_HOSTS') === 'true',
    checks: {
      maxRemotes: DEFAULT_CHECK_SETTINGS.maxRemotes,
      concurrency: envNumber(env, 'CHECK_CONCURRENCY', DEFAULT_CHECK_SETTINGS.concurrency, { min: 1 }),
      batchSize: envNumber(env, 'CHECK_BATCH_SIZE', DEFAULT_CHECK_SETTINGS.batchSize, { min: 1 }),
      downAfter: envNumber(env, 'CHECK_DOWN_AFTER', DEFAULT_CHECK_SETTINGS.downAfter, { min: 1 }),
    },
  };
}
