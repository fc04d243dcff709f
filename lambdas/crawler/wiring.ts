import type { CatalogStore, IconStore, SearchIndex, TrustStore } from '../catalog-core';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { logger } from '../shared/logger';
import { CachedSecret, secretsClient } from '../shared/secrets';
import { PackageDownloads } from './adapters/downloads';
import { GithubClient } from './adapters/github';
import { McpHealthChecker } from './adapters/health';
import { IconPipeline } from './adapters/icons';
import { RegistryClient } from './adapters/registry-client';
import type { CrawlerConfig } from './config';
import { Crawler } from './crawler';
import type { CrawlerSettings } from './settings';
import { LlmCategoryClassifier, RuleCategoryClassifier, type CompletionFn } from './domain/classify';
import type { Clock, CrawlStateStore } from './domain/ports';
import { HttpClient, type HttpClientOptions } from './http/http-client';

export interface CrawlerPorts {
  store: CatalogStore;
  index: SearchIndex;
  icons: IconStore;
  state: CrawlStateStore;
  /** The changelog the crawl writes version bumps and tool changes to. */
  trust?: TrustStore;
  clock?: Clock;
  /** The LLM seam: used only with `CRAWLER_CLASSIFIER=llm`. */
  completion?: CompletionFn;
  /** AWS region for Secrets Manager (the GitHub token secret). */
  region?: string;
  /** Test and benchmark hooks (fake clock, no-wait sleep…). */
  http?: Partial<HttpClientOptions>;
  settings?: Partial<CrawlerSettings>;
}

/**
 * A GitHub token source: the environment locally, a Secrets Manager secret in AWS (a plain
 * string or JSON `{"token": "…"}`), cached for 10 minutes so rotation needs no redeploy. A secret
 * that does not exist (named in the stage's config, not created yet) means no token, with a
 * warning once per instance: the crawl goes on at GitHub's unauthenticated quota.
 */
export function githubTokenSource(
  config: CrawlerConfig,
  region: string | undefined,
  client?: SecretsManagerClient,
): (() => Promise<string | undefined>) | undefined {
  if (config.githubToken !== undefined) {
    const token = config.githubToken;
    return async () => token;
  }
  const arn = config.githubTokenSecretArn;
  if (arn === undefined) return undefined;
  let secret: Promise<CachedSecret> | undefined;
  let missing = false;
  return async () => {
    if (missing) return undefined;
    secret ??= (client ? Promise.resolve(client) : secretsClient(region ?? process.env.AWS_REGION ?? 'us-east-1')).then((c) => new CachedSecret(c, arn));
    let value: string;
    try {
      value = await (await secret).get();
    } catch (err) {
      if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
      missing = true;
      logger.warn('the GitHub token secret does not exist: crawling GitHub without a token (60 requests an hour)', { secret: arn });
      return undefined;
    }
    const raw = value.trim();
    if (raw.startsWith('{')) {
      const parsed: unknown = JSON.parse(raw);
      const token = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).token : undefined;
      return typeof token === 'string' ? token : undefined;
    }
    return raw;
  };
}

export function createCrawler(config: CrawlerConfig, ports: CrawlerPorts): { crawler: Crawler; http: HttpClient } {
  const clock = ports.clock ?? { now: () => new Date() };
  const http = new HttpClient({
    timeoutMs: config.httpTimeoutMs,
    retries: config.retries,
    baseDelayMs: config.retryBaseMs,
    perHostConcurrency: config.hostConcurrency,
    allowPrivateHosts: config.allowPrivateHosts,
    ...ports.http,
  });
  const token = githubTokenSource(config, ports.region);
  const crawler = new Crawler(
    {
      state: ports.state,
      upstream: new RegistryClient({ baseUrl: config.registryUrl, pageSize: config.pageSize, http }),
      store: ports.store,
      index: ports.index,
      icons: ports.icons,
      ...(ports.trust && { trust: ports.trust }),
      github: new GithubClient({
        apiUrl: config.githubApiUrl,
        http,
        ...(token && { token }),
        readmeMaxBytes: config.readmeMaxBytes,
        now: () => clock.now().getTime(),
      }),
      downloads: new PackageDownloads({ npmUrl: config.npmDownloadsUrl, pypiUrl: config.pypiStatsUrl, http }),
      health: new McpHealthChecker({ http, timeoutMs: config.healthTimeoutMs, now: () => clock.now() }),
      iconFetcher: new IconPipeline({ http, maxBytes: config.iconMaxBytes }),
      classifier: config.classifier === 'llm' && ports.completion !== undefined ? new LlmCategoryClassifier(ports.completion) : new RuleCategoryClassifier(),
      clock,
    },
    {
      enrichConcurrency: config.enrichConcurrency,
      steps: config.steps,
      refreshAfterHours: config.refreshAfterHours,
      refreshBatch: config.refreshBatch,
      sweepMinShare: config.sweepMinShare,
      ...ports.settings,
    },
  );
  return { crawler, http };
}
