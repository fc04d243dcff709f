import { CATEGORIES, REGISTRY_TYPES, SORTS, type CatalogRecord, type CatalogFilters } from '../../lambdas/catalog-core';
import { EmbeddedSearchIndex } from '../../lambdas/catalog-core/search/embedded';
import { buildView, prefixMatches, toEntry } from '../../lambdas/catalog-core/search/embedded-view';
import { generateCatalog, LANGUAGES, toSearchDocument } from '../../bin/local-stack/synthetic';

/**
 * The embedded engine answers filters from bitsets and autocomplete from a sorted dictionary of
 * prefixes. Both are held here to the plain definitions, written the slow way over the full
 * orderings: whatever the filters, sort, page or prefix, the engine returns what they say.
 */

const COUNT = 1500;
let index: EmbeddedSearchIndex;
let records: CatalogRecord[];

function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The filter rules as the spec states them: values of one filter OR, filters AND. */
function keeps(r: CatalogRecord, f: CatalogFilters): boolean {
  const types = new Set(r.packages.filter((p) => p.registryType !== 'remote').map((p) => p.registryType as string));
  if (r.remotes.length > 0) types.add('remote');
  const licenses = [r.github?.license, r.github?.licenseSpdx].filter((x): x is string => x !== undefined);
  const any = (wanted: readonly string[] | undefined, have: readonly string[]) =>
    wanted === undefined || wanted.length === 0 || wanted.some((w) => have.includes(w));
  return (
    any(f.type, [...types]) &&
    any(f.category, r.categories) &&
    any(f.language, r.github?.language === undefined ? [] : [r.github.language]) &&
    any(f.license, licenses)
  );
}

beforeAll(async () => {
  index = new EmbeddedSearchIndex();
  await index.replaceAll(generateCatalog(COUNT).map(toSearchDocument));
  records = (await index.list({ filters: {}, sort: 'popularity', page: { offset: 0, limit: COUNT } })).items;
  expect(records).toHaveLength(COUNT);
});

function randomFilters(rnd: () => number): CatalogFilters {
  const pick = <T>(xs: readonly T[], n: number): T[] => Array.from({ length: n }, () => xs[Math.floor(rnd() * xs.length)]);
  const f: CatalogFilters = {};
  if (rnd() < 0.6) f.category = pick(CATEGORIES, 1 + Math.floor(rnd() * 2));
  if (rnd() < 0.5) f.type = pick(REGISTRY_TYPES, 1 + Math.floor(rnd() * 2));
  // Some languages and licenses no server has: they match nothing.
  if (rnd() < 0.4) f.language = pick([...LANGUAGES, 'Cobol'], 1 + Math.floor(rnd() * 2));
  if (rnd() < 0.3) f.license = pick(['MIT', 'Apache-2.0', 'GPL-3.0', 'MPL-2.0', 'MIT License', 'WTFPL'], 1 + Math.floor(rnd() * 2));
  return f;
}

describe('embedded engine at scale: filters from bitsets', () => {
  it('lists exactly the filtered ordering, with its total, under every sort and page', async () => {
    const rnd = rng(11);
    let nonEmpty = 0;
    for (let i = 0; i < 150; i++) {
      const filters = randomFilters(rnd);
      const sort = SORTS[i % SORTS.length];
      const all = (await index.list({ filters: {}, sort, page: { offset: 0, limit: COUNT } })).items;
      const expected = all.filter((r) => keeps(r, filters));
      if (expected.length > 0) nonEmpty += 1;
      const offset = Math.floor(rnd() * Math.max(1, expected.length + 5));
      const limit = 1 + Math.floor(rnd() * 30);
      const got = await index.list({ filters, sort, page: { offset, limit } });
      expect(got.total).toBe(expected.length);
      expect(got.items.map((r) => r.slug)).toEqual(expected.slice(offset, offset + limit).map((r) => r.slug));
    }
    // The cases are not all empty (the check above would then prove little).
    expect(nonEmpty).toBeGreaterThan(60);
  });

  it('searches with filters exactly as the unfiltered search, filtered', async () => {
    const rnd = rng(12);
    for (const q of ['database', 'github', 'search', 'postgres files', 'slack']) {
      const all = await index.search({ q, filters: {}, page: { offset: 0, limit: COUNT } });
      expect(all.total).toBeGreaterThan(0);
      for (let i = 0; i < 12; i++) {
        const filters = randomFilters(rnd);
        const expected = all.items.filter((r) => keeps(r, filters));
        const got = await index.search({ q, filters, page: { offset: 0, limit: 20 } });
        expect(got.total).toBe(expected.length);
        expect(got.items.map((r) => r.slug)).toEqual(expected.slice(0, 20).map((r) => r.slug));
      }
    }
  });
});

describe('embedded engine at scale: facet counts from bitsets', () => {
  /** The plain definition: each group over the records every filter but its own keeps. */
  function plainFacets(pool: CatalogRecord[], f: CatalogFilters) {
    const group = (filter: keyof CatalogFilters, values: (r: CatalogRecord) => string[]) => {
      const kept = pool.filter((r) => keeps(r, { ...f, [filter]: undefined }));
      const m = new Map<string, number>();
      for (const r of kept) for (const v of new Set(values(r))) m.set(v, (m.get(v) ?? 0) + 1);
      const counts = [...m].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1));
      return { counts, missing: kept.filter((r) => values(r).length === 0).length };
    };
    const types = (r: CatalogRecord) => [
      ...r.packages.filter((p) => p.registryType !== 'remote').map((p) => p.registryType),
      ...(r.remotes.length ? ['remote'] : []),
    ];
    const c = group('category', (r) => r.categories);
    const t = group('type', types);
    const l = group('language', (r) => (r.github?.language ? [r.github.language] : []));
    const li = group('license', (r) => ((r.github?.license ?? r.github?.licenseSpdx) ? [(r.github?.license ?? r.github?.licenseSpdx) as string] : []));
    return {
      categories: c.counts,
      types: t.counts,
      languages: l.counts,
      licenses: li.counts,
      missing: { types: t.missing, languages: l.missing, licenses: li.missing },
    };
  }

  it('counts lists and searches as the plain definition does, whatever the filters', async () => {
    const rnd = rng(13);
    for (let i = 0; i < 40; i++) {
      const filters = randomFilters(rnd);
      const got = await index.list({ filters, sort: 'name', page: { offset: 0, limit: 1 }, facets: true });
      expect(got.facets).toEqual(plainFacets(records, filters));
    }
    for (const q of ['database', 'github', 'postgres files']) {
      const matches = (await index.search({ q, filters: {}, page: { offset: 0, limit: COUNT } })).items;
      for (let i = 0; i < 8; i++) {
        const filters = randomFilters(rnd);
        const got = await index.search({ q, filters, page: { offset: 0, limit: 1 }, facets: true });
        expect(got.facets).toEqual(plainFacets(matches, filters));
      }
    }
  });
});

describe('embedded engine at scale: autocomplete from a prefix dictionary', () => {
  it('returns the most popular servers whose name, name tail or title starts with the prefix', async () => {
    const starts = (r: CatalogRecord, p: string) => {
      const name = r.name.toLowerCase();
      const slash = name.indexOf('/');
      return (
        name.startsWith(p) ||
        (slash >= 0 && name.slice(slash + 1).startsWith(p)) ||
        (r.title !== undefined && r.title !== '' && r.title.toLowerCase().startsWith(p))
      );
    };
    // Broad prefixes (one letter, the dense path), narrow ones, whole names, titles, and misses.
    const prefixes = [
      'i',
      'io',
      'io.github',
      'a',
      'p',
      'po',
      'post',
      'zz',
      'qqqq',
      ...records.slice(0, 40).flatMap((r) => [r.name.slice(0, 8), r.name.split('/')[1]?.slice(0, 5) ?? 'x', (r.title ?? 'x').slice(0, 4)]),
    ];
    // The same view with a low threshold between the two paths, so both answer every prefix.
    const view = buildView(records.map((r) => toEntry(structuredClone(r))));
    for (const prefix of prefixes) {
      for (const limit of [1, 10]) {
        const expected = records.filter((r) => starts(r, prefix.toLowerCase())).slice(0, limit);
        const got = await index.autocomplete(prefix, limit);
        expect(got.map((r) => r.slug)).toEqual(expected.map((r) => r.slug));
        for (const dense of [0, 8, 1_000_000]) {
          expect(prefixMatches(view, prefix.toLowerCase(), limit, dense).map((e) => e.slug)).toEqual(expected.map((r) => r.slug));
        }
      }
    }
  });
});
