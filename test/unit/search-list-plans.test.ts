import { CATEGORIES as C, type CatalogFilters } from '../../lambdas/catalog-core';
import { EmbeddedSearchIndex } from '../../lambdas/catalog-core/search/embedded';
import { buildView, toEntry, type View } from '../../lambdas/catalog-core/search/embedded-view';
import { filterKey, ListPlans } from '../../lambdas/catalog-core/search/list-plans';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCatalog, toSearchDocument } from '../../bin/local-stack/synthetic';

/**
 * The embedded engine keeps, per view, what a list query's filters resolve to (`list-plans.ts`).
 * What is kept must answer exactly what a fresh walk answers, be shared only by equal filters,
 * stay inside its bounds, and die with the view when the content changes.
 */

const docs = generateCatalog(600).map(toSearchDocument);
const view: View = buildView(docs.map((d) => toEntry(d.record)));

/** The page as the engine walked it before plans: the order, filtered, sliced. */
function walked(filters: CatalogFilters, sort: 'popularity' | 'name' | 'stars', offset: number, limit: number): string[] {
  const matches = new ListPlans().plan(view, filters).matches;
  const order = view.bySort[sort];
  return order
    .filter((e) => matches === undefined || matches.has(e))
    .slice(offset, offset + limit)
    .map((e) => e.slug);
}

describe('list plans', () => {
  it('answer every page of a kept plan as a fresh walk does, past the end too', () => {
    const plans = new ListPlans();
    const filters: CatalogFilters = { category: [C[1], C[0]], type: ['npm'] };
    const plan = plans.plan(view, filters);
    for (const sort of ['popularity', 'name', 'stars'] as const)
      for (const [offset, limit] of [
        [0, 20],
        [20, 20],
        [7, 3],
        [plan.matches?.count ?? 0, 20],
        [1000, 20],
      ])
        expect(plans.page(view, plans.plan(view, filters), sort, offset, limit).map((r) => r.slug)).toEqual(walked(filters, sort, offset, limit));
  });

  it('share a plan between the same filters however written, never between different ones', () => {
    expect(filterKey({ category: [C[0], C[1], C[0]], language: [] })).toBe(filterKey({ category: [C[1], C[0]] }));
    expect(filterKey({ up: false })).toBe(filterKey({}));
    const distinct: CatalogFilters[] = [
      {},
      { category: [C[0]] },
      { type: ['npm'] },
      { language: ['npm'] },
      { license: ['npm'] },
      { uptimeMin: 0 },
      { uptimeMin: 50 },
      { up: true },
    ];
    expect(new Set(distinct.map(filterKey)).size).toBe(distinct.length);
    const plans = new ListPlans();
    expect(plans.plan(view, { category: [C[1], C[2]] })).toBe(plans.plan(view, { category: [C[2], C[1], C[2]] }));
  });

  it('keep at most their filter sets and positions, least recently used out first', () => {
    const plans = new ListPlans(3, 1_000_000);
    const a = plans.plan(view, { category: [C[1]] });
    plans.plan(view, { category: [C[2]] });
    plans.plan(view, { category: [C[0]] });
    expect(plans.plan(view, { category: [C[1]] })).toBe(a);
    plans.plan(view, { category: [C[3]] });
    expect(plans.size.plans).toBe(3);
    // `search` was the least recently used: made anew; `databases` was kept.
    expect(plans.plan(view, { category: [C[1]] })).toBe(a);

    const small = new ListPlans(100, 250);
    for (const category of [C[1], C[2], C[0], C[3], C[4]]) {
      const plan = small.plan(view, { category: [category] });
      small.page(view, plan, 'name', 0, 10);
      small.page(view, plan, 'stars', 0, 10);
      expect(small.size.positions).toBeLessThanOrEqual(250);
    }
    expect(small.size.plans).toBeGreaterThan(0);
  });

  it("die with the view: a list after a write answers the new content's pages and facets", async () => {
    const index = new EmbeddedSearchIndex();
    await index.replaceAll(docs);
    const filters: CatalogFilters = { category: [C[1]] };
    const before = await index.list({ filters, sort: 'name', page: { offset: 0, limit: 600 }, facets: true });
    const gone = before.items[0].slug;
    await index.remove([gone]);
    const after = await index.list({ filters, sort: 'name', page: { offset: 0, limit: 600 }, facets: true });
    expect(after.total).toBe(before.total - 1);
    expect(after.items.map((r) => r.slug)).toEqual(before.items.slice(1).map((r) => r.slug));
    const count = (f: typeof before.facets) => f?.categories.find((c) => c.name === C[1])?.count;
    expect(count(after.facets)).toBe((count(before.facets) ?? 0) - 1);
  });

  it("die with the view on another instance too: one reading the snapshot another writes lists the writer's change", async () => {
    const snapshotPath = join(mkdtempSync(join(tmpdir(), 'list-plans-')), 'index.json');
    const writer = new EmbeddedSearchIndex({ snapshotPath });
    await writer.replaceAll(docs);
    const reader = new EmbeddedSearchIndex({ snapshotPath });
    const filters: CatalogFilters = { category: [C[1]] };
    const page = () => reader.list({ filters, sort: 'name', page: { offset: 0, limit: 600 }, facets: true });
    const before = await page();
    await page(); // the reader's plan for these filters is made and used
    await writer.remove([before.items[0].slug]);
    await reader.refresh();
    const after = await page();
    expect(after.total).toBe(before.total - 1);
    expect(after.items.map((r) => r.slug)).toEqual(before.items.slice(1).map((r) => r.slug));
  });
});
