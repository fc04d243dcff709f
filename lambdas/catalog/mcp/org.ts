import { orgDecision, type AllowList, type CatalogFilters, type CatalogRecord, type OrgDecision, type SearchIndex } from '../../catalog-core';

/**
 * `search_servers { orgOnly: true }`: the ranked hits the organisation's allow-list allows. The
 * search engines cannot filter by the allow-list (patterns, block rules), so the tool reads the
 * query's ranked hits in batches and keeps the allowed ones. It reads the whole window every call,
 * because `total` (the allowed hits) needs it, and so the last page is known exactly: the window is
 * the first ORG_WINDOW ranked hits, far inside both engines' search window (10,000, where they throw
 * `SearchWindowError`). An allowed server ranked beyond it is not found by that query: narrow it.
 */

/** Ranked hits of the query the allow-list is applied to (`ranked` in the result when fewer match). */
export const ORG_WINDOW = 1000;
/** Hits per read of the index: at most ORG_WINDOW / ORG_BATCH reads per call. */
export const ORG_BATCH = 100;

/** What the organisation says of a server, as a hit carries it. */
export type OrgMark = { allowedInOrg: boolean; pinnedVersion?: string };

export function orgMark(d: OrgDecision): OrgMark {
  return d.allowed ? { allowedInOrg: true, ...(d.pinnedVersion !== undefined && { pinnedVersion: d.pinnedVersion }) } : { allowedInOrg: false };
}

export interface OrgPage {
  hits: Array<{ record: CatalogRecord; pinnedVersion?: string }>;
  /** Allowed hits within the window. */
  total: number;
  /** Ranked hits the allow-list was applied to: min(the query's matches, ORG_WINDOW). */
  ranked: number;
  /** The raw rank after the last hit returned, when an allowed hit follows it in the window. */
  next?: number;
}

/**
 * The first `limit` allowed hits at raw rank `offset` or later (the cursor keeps the raw rank, so
 * a page neither repeats nor skips a hit however the allowed ones fall across batches).
 */
export async function orgSearch(
  index: Pick<SearchIndex, 'search'>,
  list: AllowList,
  q: { query: string; filters: CatalogFilters; offset: number; limit: number },
): Promise<OrgPage> {
  const hits: OrgPage['hits'] = [];
  let total = 0;
  let ranked = 0;
  let last = q.offset;
  let more = false;
  for (let at = 0; at < ORG_WINDOW; at += ORG_BATCH) {
    const got = await index.search({ q: q.query, filters: q.filters, page: { offset: at, limit: Math.min(ORG_BATCH, ORG_WINDOW - at) } });
    ranked = Math.min(got.total, ORG_WINDOW);
    got.items.forEach((record, i) => {
      const d = orgDecision(list, record.name);
      if (!d.allowed) return;
      total += 1;
      const rank = at + i;
      if (rank < q.offset) return;
      if (hits.length === q.limit) {
        more = true;
        return;
      }
      hits.push({ record, ...(d.pinnedVersion !== undefined && { pinnedVersion: d.pinnedVersion }) });
      last = rank + 1;
    });
    if (got.items.length === 0 || at + got.items.length >= ranked) break;
  }
  return more ? { hits, total, ranked, next: last } : { hits, total, ranked };
}
