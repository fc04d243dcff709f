import { createLocalServer, listen, type LambdaLike, type RunningServer } from '../../bin/local-stack/server';
import { createCatalogHandler } from '../../lambdas/catalog/api';
import type { CatalogDeps } from '../../lambdas/catalog/deps';
import { CATALOG_API } from '../../lambdas/catalog/routes';
import type { CatalogConfig } from '../../lambdas/catalog/config';
import { createSiteHandler, sitePolicy } from '../../lambdas/site/api';
import { loadSiteConfig, type SiteConfig } from '../../lambdas/site/config';
import type { SiteDeps } from '../../lambdas/site/deps';
import { SITE_API } from '../../lambdas/site/routes';
import { createSiteDeps } from '../../lambdas/site/wiring';
import { startTestCatalog, type TestCatalog } from './catalog-harness';

/**
 * The site and the catalog API on one local server, as `npm start` mounts them, over the test
 * run's DynamoDB Local and S3 server (a catalog of its own, `seed` synthetic servers). Favorites
 * and sign-in are not served here: the browser tests run the whole stack for those.
 */
export interface TestSite {
  url: string;
  /** The catalog's configuration (its tables and buckets on the test backends). */
  config: CatalogConfig;
  catalog: CatalogDeps;
  site: SiteDeps;
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

const notServed: LambdaLike = async () => {
  throw new Error('favorites are not served by the site harness');
};

export const FIXED_NOW = Date.parse('2026-11-02T00:00:00.000Z');

export async function startTestSite(
  opts: {
    seed?: number;
    site?: Partial<SiteConfig>;
    catalog?: Partial<CatalogConfig>;
    limited?: boolean;
    /** Fills the (unseeded) catalog before the site serves it: a crawl, for example. */
    fill?: (catalog: TestCatalog) => Promise<void>;
    /** The organisation's allow-list the pages read (their badges). */
    allowList?: SiteDeps['allowList'];
  } = {},
): Promise<TestSite> {
  const catalog = await startTestCatalog({ seed: opts.seed, config: opts.catalog });
  await catalog.close();
  await opts.fill?.(catalog);
  const site: SiteConfig = { ...loadSiteConfig({}), publicUrl: 'https://mcp.example.com', ...opts.site };
  const deps = await createSiteDeps(site, {
    store: catalog.deps.store,
    index: catalog.deps.index,
    trust: catalog.deps.trust,
    ...(opts.limited && { limiter: catalog.deps.limiter }),
    originSecret: () => undefined,
    now: () => FIXED_NOW,
    ...(opts.allowList && { allowList: opts.allowList }),
  });
  const running: RunningServer = await listen(
    createLocalServer({
      apis: [
        { table: CATALOG_API, functions: { catalog: createCatalogHandler(async () => catalog.deps), favorites: notServed } },
        { table: SITE_API, functions: { site: createSiteHandler(site, async () => deps) }, problem: sitePolicy(site).problem },
      ],
      ready: () => true,
    }),
    0,
  );
  return {
    url: running.url,
    config: catalog.config,
    catalog: catalog.deps,
    site: deps,
    get: (path, init) => fetch(`${running.url}${path}`, init),
    close: () => running.close(),
  };
}
