import type { CatalogFilters } from '../domain/ports';
import type { CatalogRecord, FacetCounts, SortKey } from '../domain/types';
import { compileFilters, type Entry, facetCounts, type FilterMatch, type View } from './embedded-view';

/**
 * What a list query's filters resolve to in one view, kept for the view's life: the matching set,
 * its facet counts, and per sort the positions of the matches in that sort's order. A catalog is
 * browsed through a few filter sets (each category, a language) in every sort and many pages; with
 * them kept, a page is a slice and the facets a reference, instead of ANDing and counting bitsets
 * over every server and walking the order from its start on each request (measured on the
 * 1,200-URL list mix at 10,000 servers: 70% of an uncached list request's CPU).
 *
 * Bounded: at most `maxPlans` filter sets, and positions of at most `maxPositions` entries in all
 * (4 bytes each); the least recently used filter sets go first. A view is replaced whenever the
 * content changes, and its plans with it.
 */
export interface FilterPlan {
  readonly matches: FilterMatch | undefined;
  facets: FacetCounts | undefined;
  /** Per sort, the indexes into `view.bySort[sort]` of the matching entries, in order. */
  readonly positions: Map<SortKey, Int32Array>;
}

export class ListPlans {
  private readonly plans = new Map<string, FilterPlan>();
  private positionsHeld = 0;

  constructor(
    private readonly maxPlans = 512,
    private readonly maxPositions = 4_000_000,
  ) {}

  /** The plan of these filters, made on first use. */
  plan(view: View, filters: CatalogFilters): FilterPlan {
    const key = filterKey(filters);
    let plan = this.plans.get(key);
    if (plan !== undefined) {
      // Most recently used last: eviction takes from the front.
      this.plans.delete(key);
      this.plans.set(key, plan);
      return plan;
    }
    plan = { matches: compileFilters(view, filters), facets: undefined, positions: new Map() };
    this.plans.set(key, plan);
    this.evict(key);
    return plan;
  }

  /** Facet counts of the plan's filters over every entry (shared: callers must not change them). */
  facets(view: View, filters: CatalogFilters, plan: FilterPlan): FacetCounts {
    plan.facets ??= facetCounts(view, filters, undefined);
    return plan.facets;
  }

  /** The records of one page of the plan's matches in `sort`'s order. */
  page(view: View, plan: FilterPlan, sort: SortKey, offset: number, limit: number): CatalogRecord[] {
    const order = view.bySort[sort];
    const matches = plan.matches;
    if (matches === undefined) return order.slice(offset, offset + limit).map((e) => e.record);
    let positions = plan.positions.get(sort);
    if (positions === undefined) {
      positions = positionsOf(order, matches);
      plan.positions.set(sort, positions);
      this.positionsHeld += positions.length;
      this.evict(undefined);
    }
    const items: CatalogRecord[] = [];
    const end = Math.min(positions.length, offset + limit);
    for (let i = offset; i < end; i++) items.push(order[positions[i]].record);
    return items;
  }

  private evict(keep: string | undefined): void {
    for (const [k, plan] of this.plans) {
      if (this.plans.size <= this.maxPlans && this.positionsHeld <= this.maxPositions) return;
      if (k === keep) continue;
      this.plans.delete(k);
      for (const p of plan.positions.values()) this.positionsHeld -= p.length;
    }
  }

  /** Filter sets and positions held (tests). */
  get size(): { plans: number; positions: number } {
    return { plans: this.plans.size, positions: this.positionsHeld };
  }
}

function positionsOf(order: readonly Entry[], matches: FilterMatch): Int32Array {
  const out = new Int32Array(matches.count);
  let n = 0;
  for (let i = 0; i < order.length && n < out.length; i++) if (matches.has(order[i])) out[n++] = i;
  return out;
}

/** The same key for the same filters, however their values are ordered or repeated (values OR within a filter). */
export function filterKey(f: CatalogFilters): string {
  const set = (values: readonly string[] | undefined) => (values === undefined || values.length === 0 ? [] : [...new Set(values)].sort());
  return JSON.stringify([set(f.type), set(f.category), set(f.language), set(f.license), f.uptimeMin ?? null, f.up === true]);
}
