import type { AllowList, CatalogStore, IconStore, SearchIndex, TrustStore } from '../catalog-core';
import type { CursorCodec } from '../shared/cursor';
import type { OriginSecretGetter } from '../shared/http/origin-guard';
import type { RateLimiter } from '../shared/rate-limit/rate-limiter';
import type { CatalogConfig } from './config';
import type { CallerResolver } from './callers';

/** Everything a catalog handler may use, injected so tests and the local stack swap adapters only. */
export interface CatalogDeps {
  config: CatalogConfig;
  store: CatalogStore;
  /** Health checks and tool changes per server (the trust table). */
  trust: TrustStore;
  index: SearchIndex;
  icons: IconStore;
  limiter: RateLimiter;
  cursors: CursorCodec;
  callers: CallerResolver;
  /**
   * The organisation's allow-list, read-only and cached per instance (`CachedAllowList`): the MCP
   * endpoint's `orgOnly` and `allowedInOrg`. `current()` is undefined while no file exists.
   */
  allowList?: { current(): Promise<AllowList | undefined> };
  /** CloudFront's origin header secret (AWS): without the header a request is 403. Absent locally. */
  originSecret?: OriginSecretGetter;
}
