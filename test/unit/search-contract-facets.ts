/**
 * The rest of the behaviour every `SearchIndex` adapter must share (`search-contract.ts` has the
 * rest): facet counts of a query, the disjunctive way, and the standing of a server (originals
 * first among equals in search, deprecated servers and test entries last in the default orders).
 * Each adapter's test file runs it beside `searchIndexContract`.
 */
import type { CatalogFilters, SearchIndex, CatalogRecord, FacetCounts, NameCount, SortKey } from '../../lambdas/catalog-core';
import { catalogFixture, makeDoc, makeRecord } from './search-contract';

const slugsOf = (records: { slug: string }[]): string[] => records.map((r) => r.slug);

/** What each facet group counts of a record (`FacetCounts`), written from the record alone. */
const VALUES: Record<keyof Omit<FacetCounts, 'missing'>, (r: CatalogRecord) => string[]> = {
  categories: (r) => [...new Set(r.categories)],
  types: (r) => [...new Set([...r.packages.map((p) => p.registryType), ...(r.remotes.length > 0 ? ['remote'] : [])])],
  languages: (r) => (r.github?.language ? [r.github.language] : []),
  licenses: (r) => {
    const l = r.github?.license || r.github?.licenseSpdx;
    return l ? [l] : [];
  },
};
const FILTER_OF = { categories: 'category', types: 'type', languages: 'language', licenses: 'license' } as const;

function countsOf(records: CatalogRecord[], group: keyof typeof VALUES): { counts: NameCount[]; missing: number } {
  const m = new Map<string, number>();
  let missing = 0;
  for (const r of records) {
    const vs = VALUES[group](r);
    if (vs.length === 0) missing++;
    for (const v of vs) m.set(v, (m.get(v) ?? 0) + 1);
  }
  const counts = [...m].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { counts, missing };
}

export function searchFacetsContract(name: string, make: () => Promise<SearchIndex>): void {
  describe(`SearchIndex contract, facets and standing: ${name}`, () => {
    describe('facets of a query (disjunctive: each group under every filter but its own)', () => {
      let index: SearchIndex;
      beforeAll(async () => {
        index = await make();
        await index.replaceAll([
          ...catalogFixture(),
          makeDoc(makeRecord('foxtrot', { name: 'io.example/foxtrot', description: 'A Postgres helper.', categories: ['Data & Databases'] })),
        ]);
      });
      const all = { offset: 0, limit: 100 };
      /** The records the same query keeps without the group's own filter: what the group must count. */
      const without = async (q: string | undefined, filters: CatalogFilters, group: keyof typeof VALUES) => {
        const rest = { ...filters, [FILTER_OF[group]]: undefined };
        const page = q === undefined ? await index.list({ filters: rest, sort: 'name', page: all }) : await index.search({ q, filters: rest, page: all });
        return page.items;
      };

      it.each<[string, string | undefined, CatalogFilters]>([
        ['a list without filters', undefined, {}],
        ['a list with one filter', undefined, { type: ['npm'] }],
        ['a list with filters in two groups, several values in one', undefined, { type: ['npm', 'remote'], language: ['TypeScript', 'Python'] }],
        ['a list with a license filter by SPDX id', undefined, { license: ['MIT'] }],
        ['a search', 'postgres', {}],
        ['a search with a category filter', 'postgres', { category: ['Search & Web'] }],
        ['a filter nothing matches', undefined, { language: ['Cobol'] }],
      ])('counts %s from the records the other filters keep', async (_label, q, filters) => {
        const page =
          q === undefined
            ? await index.list({ filters, sort: 'popularity', page: { offset: 0, limit: 2 }, facets: true })
            : await index.search({ q, filters, page: { offset: 0, limit: 2 }, facets: true });
        const facets = page.facets as FacetCounts;
        expect(facets).toBeDefined();
        for (const group of ['categories', 'types', 'languages', 'licenses'] as const) {
          const expected = countsOf(await without(q, filters, group), group);
          expect([group, facets[group]]).toEqual([group, expected.counts]);
          if (group !== 'categories') expect([group, facets.missing[group]]).toEqual([group, expected.missing]);
        }
      });

      it('sums to the result count per group: single-valued groups with their missing count, multi-valued ones once per value', async () => {
        const check = async (filters: CatalogFilters, q?: string) => {
          const page =
            q === undefined
              ? await index.list({ filters, sort: 'name', page: all, facets: true })
              : await index.search({ q, filters, page: all, facets: true });
          const f = page.facets as FacetCounts;
          const sum = (list: NameCount[]) => list.reduce((n, c) => n + c.count, 0);
          const selected = (list: NameCount[], values: readonly string[] | undefined) => sum(list.filter((c) => values?.includes(c.name)));
          // A group without a selection counts exactly the results.
          if (filters.language === undefined) expect(sum(f.languages) + f.missing.languages).toBe(page.total);
          else expect(selected(f.languages, filters.language)).toBe(page.total);
          if (filters.license === undefined) expect(sum(f.licenses) + f.missing.licenses).toBe(page.total);
          // Categories and types are multi-valued: each result counts once per value it has.
          if (filters.category === undefined) {
            expect(sum(f.categories)).toBe(page.items.reduce((n, r) => n + new Set(r.categories).size, 0));
            expect(sum(f.categories)).toBeGreaterThanOrEqual(page.total);
          } else expect(selected(f.categories, filters.category)).toBeGreaterThanOrEqual(page.total);
          if (filters.type === undefined) expect(sum(f.types)).toBe(page.items.reduce((n, r) => n + VALUES.types(r).length, 0));
          if (filters.type === undefined) expect(f.missing.types).toBe(page.items.filter((r) => VALUES.types(r).length === 0).length);
        };
        await check({});
        await check({ type: ['npm'] });
        await check({ language: ['TypeScript', 'C#'] });
        await check({ category: ['Data & Databases'], language: ['Python'] });
        await check({}, 'postgres');
      });

      it('leaves facets out unless asked', async () => {
        expect(await index.list({ filters: {}, sort: 'name', page: { offset: 0, limit: 1 } })).not.toHaveProperty('facets');
        expect(await index.search({ q: 'postgres', filters: {}, page: { offset: 0, limit: 1 } })).not.toHaveProperty('facets');
      });
    });

    describe('standing: originals, deprecated servers and test entries', () => {
      let index: SearchIndex;
      // Equal text (two-word names, the same description): only standing and popularity tell them apart.
      const brew = (slug: string, name: string, over: Partial<CatalogRecord>) =>
        makeDoc(makeRecord(slug, { name, description: 'Brews kombucha daily.', ...over }));
      beforeAll(async () => {
        index = await make();
        await index.replaceAll([
          brew('k-pro', 'io.example/kombucha-pro', { popularity: 1, trending: 1, publishedAt: '2025-01-01T00:00:00Z' }),
          brew('k-test', 'io.example/kombucha-test', { popularity: 9, trending: 50, publishedAt: '2025-09-01T00:00:00Z' }),
          brew('k-old', 'io.example/kombucha-old', { popularity: 9, status: 'deprecated', trending: 50, registryUpdatedAt: '2025-10-01T00:00:00Z' }),
          brew('k-copy', 'ai.smithery/someone-kombucha', { popularity: 9, publishedAt: '2024-06-01T00:00:00Z' }),
          brew('k-new', 'io.example/kombucha-new', { popularity: 0, updatedAt: '2026-01-01T00:00:00Z' }),
        ]);
      });
      const list = async (sort: SortKey) => slugsOf((await index.list({ filters: {}, sort, page: { offset: 0, limit: 10 } })).items);

      it('search: an original above a re-publisher copy, deprecated servers and test entries below active ones', async () => {
        const page = await index.search({ q: 'kombucha', filters: {}, page: { offset: 0, limit: 10 } });
        // The same text: the originals k-pro and k-new first, then the copy (not an original), then
        // the deprecated server and the test entry (originals, but demoted), by slug on equal scores,
        // whatever their popularity.
        expect(slugsOf(page.items)).toEqual(['k-pro', 'k-new', 'k-copy', 'k-old', 'k-test']);
      });

      it('the default orders put demoted servers last; the literal ones do not', async () => {
        expect(await list('popularity')).toEqual(['k-copy', 'k-pro', 'k-new', 'k-old', 'k-test']);
        expect(await list('trending')).toEqual(['k-pro', 'k-copy', 'k-new', 'k-old', 'k-test']);
        // The registry's time (its updatedAt, else publishedAt); none known sorts last, whatever the catalog's time.
        expect(await list('published')).toEqual(['k-pro', 'k-copy', 'k-new', 'k-old', 'k-test']);
        expect(await list('name')).toEqual(['k-copy', 'k-new', 'k-old', 'k-pro', 'k-test']);
        expect(await list('updated')).toEqual(['k-new', 'k-copy', 'k-old', 'k-pro', 'k-test']);
      });

      it('autocomplete puts demoted servers last too', async () => {
        expect(slugsOf(await index.autocomplete('io.example/kombucha', 10))).toEqual(['k-pro', 'k-new', 'k-old', 'k-test']);
      });
    });
  });
}
