/**
 * The check function's wiring, apart from the crawler's (`wiring.ts`): a check round needs the
 * health checker and the HTTP client only, and importing the crawl's wiring would load, and build
 * at module init, everything a crawl uses and a check never does (the category classifier's
 * keyword patterns, the registry's zod schemas, the icon pipeline).
 */
import type { CatalogStore, SearchIndex, TrustStore } from '../catalog-core';
import type { CheckDeps } from './checks';
import type { CheckSettings } from './check-settings';
import { McpHealthChecker } from './adapters/health';
import type { CrawlerConfig } from './config';
import type { Clock } from './domain/ports';
import { HttpClient, type HttpClientOptions } from './http/http-client';

/** The check round's dependencies: the same HTTP client policy (per-host limits, private-address guard) as the crawl's. */
export function createChecker(
  config: CrawlerConfig,
  ports: {
    store: CatalogStore;
    index: SearchIndex;
    indexWrites?: Pick<SearchIndex, 'upsert'>;
    trust: TrustStore;
    clock?: Clock;
    http?: Partial<HttpClientOptions>;
    settings?: Partial<CheckSettings>;
  },
): { deps: CheckDeps; http: HttpClient } {
  const clock = ports.clock ?? { now: () => new Date() };
  const http = new HttpClient({
    timeoutMs: config.httpTimeoutMs,
    // A check is one observation: a retried request would hide the failure it is there to see.
    retries: 0,
    baseDelayMs: config.retryBaseMs,
    perHostConcurrency: config.hostConcurrency,
    allowPrivateHosts: config.allowPrivateHosts,
    ...ports.http,
  });
  return {
    deps: {
      store: ports.store,
      index: ports.index,
      ...(ports.indexWrites && { indexWrites: ports.indexWrites }),
      trust: ports.trust,
      health: new McpHealthChecker({ http, timeoutMs: config.healthTimeoutMs, now: () => clock.now() }),
      clock,
      settings: { ...config.checks, ...ports.settings },
    },
    http,
  };
}
