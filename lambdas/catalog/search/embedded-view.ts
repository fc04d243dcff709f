import { lastModified, SORTS, type CatalogRecord, type Facets, type NameCount, type SearchDocument, type SlugEntry, type SortKey } from '../domain/types';
import type { CatalogFilters } from '../domain/ports';

/**
 * What the embedded engine derives from the records for its read side: one entry per record with
 * the values every read path filters and orders on, arrays precomputed per sort, facets and slugs,
 * and the filter and top-k helpers that walk them.
 *
 * Ordering of names and slugs is plain JavaScript string comparison, i.e. by UTF-16 code units.
 * The OpenSearch adapter sorts keyword fields by Unicode code point (UTF-8 bytes); the two agree
 * for every name the registry accepts (ASCII) and only differ for astral vs. U+E000–U+FFFF chars.
 */

/** A record plus the values every read path filters and orders on, computed once per write. */
export interface Entry {
  readonly record: CatalogRecord;
  readonly slug: string;
  readonly name: string;
  readonly types: readonly string[];
  readonly categories: readonly string[];
  readonly language: string | undefined;
  /** GitHub license name and SPDX id, either of which a `license` filter may name. */
  readonly licenses: readonly string[];
  readonly licenseFacet: string | undefined;
  readonly lastModified: string;
  readonly lastModifiedMs: number;
  readonly popularity: number;
  readonly stars: number;
  readonly downloads: number;
  readonly trending: number;
  readonly nameLower: string;
  /** Lowercased part after the first `/`, when the name has one. */
  readonly tailLower: string | undefined;
  readonly titleLower: string | undefined;
  /** Position in the popularity ordering (the search tie-breaker), set whenever the view is rebuilt. */
  popularityRank: number;
}

/** Everything the read side needs, rebuilt lazily after writes. */
export interface View {
  readonly bySort: Readonly<Record<SortKey, readonly Entry[]>>;
  readonly byName: readonly Entry[];
  readonly facets: Facets;
  readonly slugs: readonly SlugEntry[];
}

export type FilterPredicate = (e: Entry) => boolean;

export function latestBySlug(docs: SearchDocument[]): Iterable<SearchDocument> {
  const latest = new Map<string, SearchDocument>();
  for (const d of docs) latest.set(d.record.slug, d);
  return latest.values();
}

export function toEntry(record: CatalogRecord): Entry {
  const types = new Set<string>();
  // `remote` is reserved for "has a hosted endpoint"; a package cannot claim it.
  for (const p of record.packages) if (p.registryType !== 'remote') types.add(p.registryType);
  if (record.remotes.length > 0) types.add('remote');
  const gh = record.github;
  const licenses: string[] = [];
  if (gh?.license !== undefined) licenses.push(gh.license);
  if (gh?.licenseSpdx !== undefined) licenses.push(gh.licenseSpdx);
  const slash = record.name.indexOf('/');
  const modified = lastModified(record);
  const modifiedMs = Date.parse(modified);
  return {
    record,
    slug: record.slug,
    name: record.name,
    types: [...types],
    categories: [...new Set(record.categories)],
    language: gh?.language,
    licenses,
    licenseFacet: gh?.license ?? gh?.licenseSpdx,
    lastModified: modified,
    lastModifiedMs: Number.isNaN(modifiedMs) ? 0 : modifiedMs,
    popularity: record.popularity ?? 0,
    stars: gh?.stars ?? 0,
    downloads: record.downloads ?? 0,
    trending: record.trending ?? 0,
    nameLower: record.name.toLowerCase(),
    tailLower: slash >= 0 ? record.name.slice(slash + 1).toLowerCase() : undefined,
    titleLower: record.title === undefined || record.title === '' ? undefined : record.title.toLowerCase(),
    popularityRank: 0,
  };
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const bySlug = (a: Entry, b: Entry): number => compareStrings(a.slug, b.slug);
const desc =
  (key: (e: Entry) => number) =>
  (a: Entry, b: Entry): number =>
    key(b) - key(a) || bySlug(a, b);

const SORT_COMPARATORS: Record<SortKey, (a: Entry, b: Entry) => number> = {
  popularity: desc((e) => e.popularity),
  name: (a, b) => compareStrings(a.name, b.name) || bySlug(a, b),
  stars: desc((e) => e.stars),
  updated: desc((e) => e.lastModifiedMs),
  downloads: desc((e) => e.downloads),
  trending: desc((e) => e.trending),
};

export function buildView(source: Iterable<Entry>): View {
  const all = [...source];
  const bySort = {} as Record<SortKey, Entry[]>;
  for (const key of SORTS) bySort[key] = all.slice().sort(SORT_COMPARATORS[key]);
  bySort.popularity.forEach((e, i) => {
    e.popularityRank = i;
  });

  const categories = new Map<string, number>();
  const languages = new Map<string, number>();
  const licenses = new Map<string, number>();
  for (const e of all) {
    for (const c of e.categories) bump(categories, c);
    if (e.language !== undefined && e.language !== '') bump(languages, e.language);
    if (e.licenseFacet !== undefined && e.licenseFacet !== '') bump(licenses, e.licenseFacet);
  }
  const slugs = all
    .slice()
    .sort(bySlug)
    .map((e) => ({ slug: e.slug, updatedAt: e.lastModified }));
  return {
    bySort,
    byName: bySort.name,
    facets: { categories: countList(categories), languages: countList(languages), licenses: countList(licenses) },
    slugs,
  };
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function countList(counts: Map<string, number>): NameCount[] {
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || compareStrings(a.name, b.name));
}

/** Values inside one filter OR, filters AND; an empty or absent array does not filter. */
export function compileFilters(f: CatalogFilters): FilterPredicate | undefined {
  const set = (values: readonly string[] | undefined): Set<string> | undefined =>
    values === undefined || values.length === 0 ? undefined : new Set<string>(values);
  const types = set(f.type);
  const categories = set(f.category);
  const languages = set(f.language);
  const licenses = set(f.license);
  if (types === undefined && categories === undefined && languages === undefined && licenses === undefined) return undefined;
  // Runs for every entry of a listing: no allocation per call.
  return (e) =>
    (types === undefined || hasAny(e.types, types)) &&
    (categories === undefined || hasAny(e.categories, categories)) &&
    (languages === undefined || (e.language !== undefined && languages.has(e.language))) &&
    (licenses === undefined || hasAny(e.licenses, licenses));
}

function hasAny(values: readonly string[], wanted: ReadonlySet<string>): boolean {
  for (let i = 0; i < values.length; i++) if (wanted.has(values[i])) return true;
  return false;
}

export interface Hit {
  entry: Entry;
  score: number;
}

/** Score desc, then popularity desc and slug asc (the popularity rank encodes both). */
export function hitOrder(a: Hit, b: Hit): number {
  return b.score - a.score || a.entry.popularityRank - b.entry.popularityRank;
}

/**
 * The first `k` hits in order. A broad query matches most of the catalog while a page needs a few
 * dozen: keep a bounded max-heap of the best `k` (O(n log k)) instead of sorting everything.
 */
export function topHits(hits: Hit[], k: number): Hit[] {
  if (k <= 0) return [];
  if (hits.length <= k * 4) return hits.sort(hitOrder).slice(0, k);
  // heap[0] is the worst of the best k so far.
  const heap: Hit[] = [];
  const worse = (i: number, j: number): boolean => hitOrder(heap[i], heap[j]) > 0;
  const swap = (i: number, j: number): void => {
    const t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
  };
  const siftDown = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(l, m)) m = l;
      if (r < heap.length && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (const h of hits) {
    if (heap.length < k) {
      heap.push(h);
      for (let i = heap.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (hitOrder(h, heap[0]) < 0) {
      heap[0] = h;
      siftDown(0);
    }
  }
  return heap.sort(hitOrder);
}

/** First index whose name is > bound (exclusive) or >= bound (inclusive); `byName` is name-sorted. */
export function lowerBound(byName: readonly Entry[], bound: string, exclusive: boolean): number {
  let lo = 0;
  let hi = byName.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const name = byName[mid].name;
    if (exclusive ? name <= bound : name < bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function parseInstant(value: string, what: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`${what} is not a valid date-time: ${value}`);
  return ms;
}
