import type { AllowList, CatalogStore, SearchIndex, TrustStore } from '../catalog-core';
import type { OriginSecretGetter } from '../shared/http/origin-guard';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import type { SiteConfig } from './config';

/** Everything a page may use, injected so tests and the local stack swap adapters only. */
export interface SiteDeps {
  config: SiteConfig;
  /** The catalog's source of truth: a server's record, README and tools for its page. */
  store: Pick<CatalogStore, 'get'>;
  /** The catalog's query engine: lists, search, facets, slugs, exactly as `/api` uses it. */
  index: SearchIndex;
  /** Health checks and changes (the chart, "Changes", the feeds); absent: pages without history. */
  trust?: Pick<TrustStore, 'checks' | 'changes' | 'recentBreaking'>;
  /** The shared limiter; without it pages are not limited (tests of other concerns). */
  limiter?: RateLimiter;
  /** CloudFront's origin secret: without its header a request is refused (403), and with it the viewer address is trusted. */
  originSecret: OriginSecretGetter;
  /** The organisation's allow-list (cached per instance): its servers get the "allowed in your organisation" badge. */
  allowList?: { current(): Promise<AllowList | undefined> };
  /** The clock of relative times ("3 days ago"); tests fix it. */
  now: () => number;
}
