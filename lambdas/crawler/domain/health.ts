/**
 * What a server's remotes' checks say together, shared by the crawl's enrichment (`unit.ts`) and
 * the check round (`checks.ts`). Its own module so that the check function, which needs only this,
 * does not load the crawl's unit with the category classifier and the registry schemas.
 */
import type { CatalogHealth, CatalogTool } from '../../catalog-core';
import type { RemoteHealth } from './types';

/** Several remotes: live if any is live, the latest check time, tools of the best live check. */
export function mergeHealth(results: RemoteHealth[]): { health?: CatalogHealth; tools?: CatalogTool[] } {
  if (results.length === 0) return {};
  const live = results.filter((r) => r.live);
  const open = live.filter((r) => r.authRequired !== true);
  const checkedAt =
    results
      .map((r) => r.checkedAt)
      .sort()
      .at(-1) ?? results[0].checkedAt;
  const best = open.reduce<RemoteHealth | undefined>((b, r) => ((r.toolCount ?? 0) > (b?.toolCount ?? -1) ? r : b), undefined);
  const health: CatalogHealth = { live: live.length > 0, checkedAt };
  if (live.length > 0 && open.length === 0) health.authRequired = true;
  if (best?.toolCount !== undefined) health.toolCount = best.toolCount;
  return { health, ...(best?.tools !== undefined && { tools: best.tools }) };
}
