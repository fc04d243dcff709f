import { isDemoted, isOriginal } from '../domain/standing';
import {
  FACET_GROUPS,
  lastModified,
  registryTime,
  SORTS,
  uptimeOf,
  type CatalogRecord,
  type FacetCounts,
  type FacetGroup,
  type Facets,
  type NameCount,
  type SearchDocument,
  type SlugEntry,
  type SortKey,
} from '../domain/types';
import type { CatalogFilters } from '../domain/ports';
import { countByRank, type ValuesByRank, valuesByRank } from './facet-ranks';

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
  /** The registry's time of the latest version, -Infinity when unknown (sorts last). */
  readonly registryTimeMs: number;
  /** 30-day uptime, percent; -Infinity without check history (sorts last, fails every `uptimeMin`). */
  readonly uptime: number;
  /** Marked down by the check schedule (`healthHistory.down`). */
  readonly down: boolean;
  /** Deprecated or a test entry (`standing.ts`): after the others in the default orders. */
  readonly demoted: boolean;
  /** Published by the owner of its code (`standing.ts`): search multiplies its score by ORIGINAL_BOOST. */
  readonly original: boolean;
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
  /**
   * One bitset per filter value, over the entries' popularity ranks: `type`, `category`,
   * `language` and `license` (GitHub name and SPDX id both). A filtered query ANDs the ORs of a
   * few of them (a few thousand words at 100,000 servers) instead of testing every entry against
   * sets of strings, which DESIGN.md measured growing tenfold with the catalog.
   */
  readonly bits: Readonly<Record<FilterField, ReadonlyMap<string, Uint32Array>>>;
  /** The entries not marked down (the `up` filter). */
  readonly upBits: Uint32Array;
  /** The bitsets facets count by: `license` by the facet's one value (GitHub name, else SPDX id). */
  readonly facetBits: Readonly<Record<FacetGroup, ReadonlyMap<string, Uint32Array>>>;
  /** Built on the first search with facets of few matches (`facetRanks`). */
  facetRanks?: Record<FacetGroup, ValuesByRank>;
  /** Built on the first autocomplete of this view (`prefixKeys`). */
  prefixes?: PrefixKeys;
  /** Built on the first registry-feed search of this view (`nameText`). */
  names?: NameText;
}

export type FilterField = 'type' | 'category' | 'language' | 'license';

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
  const registryMs = Date.parse(registryTime(record) ?? '');
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
    registryTimeMs: Number.isNaN(registryMs) ? Number.NEGATIVE_INFINITY : registryMs,
    uptime: uptimeOf(record) ?? Number.NEGATIVE_INFINITY,
    down: record.healthHistory?.down === true,
    demoted: isDemoted(record),
    original: isOriginal(record),
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
/** Larger first; equal (or both unknown: -Infinity) by slug. */
function byDesc(x: number, y: number): number {
  return x === y ? 0 : y > x ? 1 : -1;
}
const desc =
  (key: (e: Entry) => number) =>
  (a: Entry, b: Entry): number =>
    byDesc(key(a), key(b)) || bySlug(a, b);
/** The default orders: demoted servers (deprecated, test entries) after the others. */
const demotedLast =
  (key: (e: Entry) => number) =>
  (a: Entry, b: Entry): number =>
    Number(a.demoted) - Number(b.demoted) || byDesc(key(a), key(b)) || bySlug(a, b);

const SORT_COMPARATORS: Record<SortKey, (a: Entry, b: Entry) => number> = {
  popularity: demotedLast((e) => e.popularity),
  name: (a, b) => compareStrings(a.name, b.name) || bySlug(a, b),
  stars: desc((e) => e.stars),
  updated: desc((e) => e.lastModifiedMs),
  downloads: desc((e) => e.downloads),
  trending: demotedLast((e) => e.trending),
  published: demotedLast((e) => e.registryTimeMs),
  uptime: desc((e) => e.uptime),
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
    ...buildBits(bySort.popularity),
  };
}

function buildBits(byRank: readonly Entry[]): Pick<View, 'bits' | 'upBits' | 'facetBits'> {
  const words = (byRank.length + 31) >>> 5;
  const bits: Record<FilterField, Map<string, Uint32Array>> = { type: new Map(), category: new Map(), language: new Map(), license: new Map() };
  const licenseFacet = new Map<string, Uint32Array>();
  const upBits = new Uint32Array(words);
  const set = (map: Map<string, Uint32Array>, value: string, rank: number): void => {
    let b = map.get(value);
    if (b === undefined) {
      b = new Uint32Array(words);
      map.set(value, b);
    }
    b[rank >>> 5] |= 1 << (rank & 31);
  };
  for (const e of byRank) {
    const r = e.popularityRank;
    for (const t of e.types) set(bits.type, t, r);
    for (const c of e.categories) set(bits.category, c, r);
    if (e.language !== undefined) set(bits.language, e.language, r);
    for (const l of e.licenses) set(bits.license, l, r);
    if (e.licenseFacet !== undefined && e.licenseFacet !== '') set(licenseFacet, e.licenseFacet, r);
    if (!e.down) markRank(upBits, r);
  }
  const languages = new Map([...bits.language].filter(([v]) => v !== ''));
  return { bits, upBits, facetBits: { categories: bits.category, types: bits.type, languages, licenses: licenseFacet } };
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function countList(counts: Map<string, number>): NameCount[] {
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || compareStrings(a.name, b.name));
}

/** The entries a set of filters keeps, by popularity rank, and how many they are. */
export interface FilterMatch {
  readonly bits: Uint32Array;
  readonly count: number;
  has(e: Entry): boolean;
}

/**
 * Values inside one filter OR, filters AND; an empty or absent array does not filter (then
 * `undefined`). A value no entry has matches nothing.
 */
export function compileFilters(view: View, f: CatalogFilters): FilterMatch | undefined {
  const words = wordCount(view);
  let acc: Uint32Array | undefined;
  for (const any of filterSets(view, f).values()) {
    if (acc === undefined) acc = any;
    else for (let i = 0; i < words; i++) acc[i] &= any[i];
  }
  if (acc === undefined) return undefined;
  const bits = acc;
  return { bits, count: countBits(bits), has: (e) => hasRank(bits, e.popularityRank) };
}

function wordCount(view: View): number {
  return (view.bySort.popularity.length + 31) >>> 5;
}

export function hasRank(bits: Uint32Array, rank: number): boolean {
  return (bits[rank >>> 5] & (1 << (rank & 31))) !== 0;
}

function countBits(bits: Uint32Array): number {
  let count = 0;
  for (let i = 0; i < bits.length; i++) count += popcount(bits[i]);
  return count;
}

const FILTER_OF = { type: 'type', category: 'category', language: 'language', license: 'license' } as const satisfies Record<FilterField, keyof CatalogFilters>;

/**
 * Per active filter, the entries it keeps (values OR within a filter), each a fresh bitset the
 * caller may AND into. The uptime filters are no facet group: they narrow every group's count.
 */
function filterSets(view: View, f: CatalogFilters): Map<FilterField | 'uptimeMin' | 'up', Uint32Array> {
  const words = wordCount(view);
  const out = new Map<FilterField | 'uptimeMin' | 'up', Uint32Array>();
  for (const field of Object.keys(FILTER_OF) as FilterField[]) {
    const values = f[FILTER_OF[field]];
    if (values === undefined || values.length === 0) continue;
    const any = new Uint32Array(words);
    for (const v of new Set<string>(values)) {
      const b = view.bits[field].get(v);
      if (b !== undefined) for (let i = 0; i < words; i++) any[i] |= b[i];
    }
    out.set(field, any);
  }
  if (f.uptimeMin !== undefined) {
    // The uptime order holds the qualifying entries first: walk it until one falls short.
    const any = new Uint32Array(words);
    for (const e of view.bySort.uptime) {
      if (!(e.uptime >= f.uptimeMin)) break;
      markRank(any, e.popularityRank);
    }
    out.set('uptimeMin', any);
  }
  if (f.up === true) out.set('up', view.upBits.slice());
  return out;
}

/** An empty bitset over the view's ranks, for collecting a set of entries (`markRank`). */
export function emptyBits(view: View): Uint32Array {
  return new Uint32Array(wordCount(view));
}

export function markRank(bits: Uint32Array, rank: number): void {
  bits[rank >>> 5] |= 1 << (rank & 31);
}

const GROUP_FILTER: Readonly<Record<FacetGroup, FilterField>> = { categories: 'category', types: 'type', languages: 'language', licenses: 'license' };

/**
 * Facet counts (`FacetCounts`) over `base` (the text matches of a search; every entry when
 * undefined): each group counted over `base` and every active filter but its own.
 */
export function facetCounts(view: View, f: CatalogFilters, base: Uint32Array | undefined): FacetCounts {
  const words = wordCount(view);
  const n = view.bySort.popularity.length;
  const all = new Uint32Array(words).fill(0xffffffff);
  if (n % 32 !== 0 && words > 0) all[words - 1] = (1 << (n % 32)) - 1;
  const sets = filterSets(view, f);
  const out: FacetCounts = { categories: [], types: [], languages: [], licenses: [], missing: { types: 0, languages: 0, licenses: 0 } };
  for (const group of FACET_GROUPS) {
    const mask = (base ?? all).slice();
    for (const [field, any] of sets) if (field !== GROUP_FILTER[group]) for (let i = 0; i < words; i++) mask[i] &= any[i];
    const matches = countBits(mask);
    if (matches * PER_MATCH_COST < view.facetBits[group].size * words) {
      // A few matches: counted from each match's values (`facet-ranks.ts`), the same figures.
      const { counts, none } = countByRank(mask, facetRanks(view)[group]);
      out[group] = countList(counts);
      if (group !== 'categories') out.missing[group] = none;
      continue;
    }
    const counts = new Map<string, number>();
    const withValue = new Uint32Array(words);
    for (const [value, b] of view.facetBits[group]) {
      let c = 0;
      for (let i = 0; i < words; i++) {
        const both = mask[i] & b[i];
        c += popcount(both);
        withValue[i] |= both;
      }
      if (c > 0) counts.set(value, c);
    }
    out[group] = countList(counts);
    if (group !== 'categories') out.missing[group] = countBits(mask) - countBits(withValue);
  }
  return out;
}

/**
 * A match counted through its values costs about this many bitset words (a few random reads
 * against one sequential AND and popcount): below it, facets are counted per match.
 */
const PER_MATCH_COST = 4;

function facetRanks(view: View): Record<FacetGroup, ValuesByRank> {
  if (view.facetRanks !== undefined) return view.facetRanks;
  const n = view.bySort.popularity.length;
  const byGroup = {} as Record<FacetGroup, ValuesByRank>;
  for (const group of FACET_GROUPS) byGroup[group] = valuesByRank(view.facetBits[group], n);
  view.facetRanks = byGroup;
  return byGroup;
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Autocomplete's dictionary: every entry's lowercased name, name tail and title, sorted, each
 * with the entry's popularity rank. A prefix is a range of it (two binary searches).
 */
export interface PrefixKeys {
  readonly keys: readonly string[];
  readonly ranks: Int32Array;
}

export function prefixKeys(view: View): PrefixKeys {
  if (view.prefixes !== undefined) return view.prefixes;
  const pairs: Array<[string, number]> = [];
  for (const e of view.bySort.popularity) {
    pairs.push([e.nameLower, e.popularityRank]);
    if (e.tailLower !== undefined) pairs.push([e.tailLower, e.popularityRank]);
    if (e.titleLower !== undefined) pairs.push([e.titleLower, e.popularityRank]);
  }
  pairs.sort((a, b) => compareStrings(a[0], b[0]) || a[1] - b[1]);
  view.prefixes = { keys: pairs.map((p) => p[0]), ranks: Int32Array.from(pairs, (p) => p[1]) };
  return view.prefixes;
}

/** Index of the first key >= `bound` in a sorted array. */
function firstAtLeast(keys: readonly string[], bound: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The `limit` most popular entries with a name, name tail or title starting with `prefix`
 * (lowercased). A narrow prefix collects its range's ranks and keeps the smallest; a broad one
 * (more than `dense` keys) walks the popularity order instead, where matches are then frequent
 * enough to fill a page within a few thousand entries.
 */
export function prefixMatches(view: View, prefix: string, limit: number, dense = 4096): Entry[] {
  const { keys, ranks } = prefixKeys(view);
  const byRank = view.bySort.popularity;
  const from = firstAtLeast(keys, prefix);
  let to = from;
  while (to < keys.length && to - from <= dense && keys[to].startsWith(prefix)) to++;
  if (to - from > dense) {
    const out: Entry[] = [];
    for (const e of byRank) {
      if (e.nameLower.startsWith(prefix) || e.tailLower?.startsWith(prefix) || e.titleLower?.startsWith(prefix)) {
        out.push(e);
        if (out.length >= limit) break;
      }
    }
    return out;
  }
  const found = [...new Set(ranks.subarray(from, to))].sort((a, b) => a - b);
  return found.slice(0, limit).map((r) => byRank[r]);
}

/**
 * The registry feed's `search` (a substring of the name): every lowercased name in name order,
 * joined by a newline into one string, and where each starts. `indexOf` on the one string skips
 * through the catalog at memory speed where testing 100,000 names one by one took 20-30 ms per
 * rare needle (a page of 50 fills within a few names for a common one, not for a rare one).
 */
export interface NameText {
  readonly text: string;
  /** Offset of `byName[i]`'s name in `text`. */
  readonly starts: Int32Array;
}

function nameText(view: View): NameText {
  if (view.names !== undefined) return view.names;
  const starts = new Int32Array(view.byName.length);
  let at = 0;
  view.byName.forEach((e, i) => {
    starts[i] = at;
    at += e.nameLower.length + 1;
  });
  view.names = { text: view.byName.map((e) => e.nameLower).join('\n'), starts };
  return view.names;
}

/**
 * The entries from `byName[start]` on, in name order, whose lowercased name holds `needle`
 * (lowercased), while `visit` returns true. A match across the separator is not one: the entry
 * whose name it starts in is tested as a whole, and the search goes on from the next name.
 */
export function visitNamesHolding(view: View, needle: string, start: number, visit: (e: Entry) => boolean): void {
  const { text, starts } = nameText(view);
  const byName = view.byName;
  let i = start;
  let from = i < starts.length ? starts[i] : text.length;
  for (;;) {
    const at = text.indexOf(needle, from);
    if (at < 0) return;
    // The entry holding offset `at`: the last start at or before it, at or after `i`.
    let lo = i;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    i = lo;
    const e = byName[i];
    if (e.nameLower.includes(needle) && !visit(e)) return;
    i += 1;
    if (i >= starts.length) return;
    from = starts[i];
  }
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
