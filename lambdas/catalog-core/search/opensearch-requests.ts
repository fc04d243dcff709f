/**
 * What the OpenSearch adapter sends: the index's settings and mappings, the stored document, and a
 * pure builder per request body (shape-tested without a server); the relevance search has its own
 * file (`opensearch-search.ts`). `opensearch.ts` sends them.
 */
import type { API } from '@opensearch-project/opensearch';
import { SearchWindowError, type CatalogFilters, type ListQuery, type RegistryQuery } from '../domain/ports';
import { isDemoted, isOriginal } from '../domain/standing';
import { FACET_GROUPS, lastModified, registryTime, uptimeOf, type CatalogRecord, type FacetGroup, type SearchDocument, type SortKey } from '../domain/types';
import { fieldTexts } from './analysis';
import { PROTECTED_WORDS, STOP_WORDS } from './ranking';

/** OpenSearch's default `max_result_window`, kept for full-text search (scored deep pages are costly). */
export const SEARCH_WINDOW = 10_000;
/** `max_result_window` of our indices: sorted listings of the whole catalog stay pageable. */
export const LIST_WINDOW = 50_000;
export const SLUG_PAGE = 5000;
const FACET_SIZE = 1000;

// ------------------------------------------------------------------ index definition

/** The document stored per server. */
export interface IndexedDocument {
  slug: string;
  name: string;
  /** The part of the name after the `/`, searched as words. */
  nameWords: string;
  /** The namespace labels that name the publisher (`ranking.ts`). */
  publisher: string;
  nameLower: string;
  nameTailLower?: string;
  titleLower?: string;
  title?: string;
  description: string;
  toolText: string;
  readmeText: string;
  types: string[];
  categories: string[];
  language?: string;
  licenses: string[];
  licenseFacet?: string;
  popularity: number;
  stars: number;
  downloads: number;
  trending: number;
  lastModified: string;
  /** The registry's time of the latest version (`registryTime`), when it gave one. */
  registryTime?: string;
  /** 30-day uptime, percent (`uptimeOf`), when the server has check history. */
  uptime?: number;
  /** Present (true) when the check schedule marked the server down. */
  down?: boolean;
  /** 1 for a deprecated server or a test entry (`domain/standing.ts`), else 0: sorts first in the default orders. */
  demoted: number;
  /** Published by the owner of its code (`domain/standing.ts`): search weights its score. */
  original: boolean;
  record: CatalogRecord;
}

const keyword = { type: 'keyword' } as const;
const words = { type: 'text', analyzer: 'words' } as const;

/**
 * Version of the definition, in the index's `_meta`. A change of fields or analysis needs a
 * fresh index: `npm run reindex` (with SEARCH_BACKEND=opensearch) builds one and swaps the alias.
 */
export const INDEX_DEFINITION_VERSION = 4;

/** Settings and mappings of a catalog index. */
export function indexDefinition(): API.Indices_Create_RequestBody {
  return {
    settings: {
      index: {
        // One shard: identical BM25 statistics for every document (stable ties) and cheap sorting;
        // the catalog is a few tens of thousands of small documents.
        number_of_shards: 1,
        auto_expand_replicas: '0-1',
        max_result_window: LIST_WINDOW,
      },
      analysis: {
        tokenizer: {
          // Runs of letters and digits: `reverse.dns/some-name`, `snake_case` and markdown all split.
          words: { type: 'pattern', pattern: '[^\\p{L}\\p{N}]+' },
        },
        filter: {
          catalog_stop: { type: 'stop', stopwords: [...STOP_WORDS] },
          catalog_protected: { type: 'keyword_marker', keywords: [...PROTECTED_WORDS] },
        },
        analyzer: {
          // The embedded engine's analysis (analysis.ts), so both engines index the same terms.
          words: { type: 'custom', tokenizer: 'words', filter: ['lowercase', 'catalog_stop', 'catalog_protected', 'porter_stem'] },
        },
      },
    },
    mappings: {
      dynamic: 'strict',
      _meta: { definition: INDEX_DEFINITION_VERSION },
      properties: {
        slug: keyword,
        name: keyword,
        nameWords: words,
        publisher: words,
        // Lowercased in code (not by a normalizer) so prefix/wildcard queries see exactly what we send.
        nameLower: keyword,
        nameTailLower: keyword,
        titleLower: keyword,
        title: words,
        description: words,
        toolText: words,
        readmeText: words,
        types: keyword,
        categories: keyword,
        language: keyword,
        licenses: keyword,
        licenseFacet: keyword,
        popularity: { type: 'double' },
        stars: { type: 'long' },
        downloads: { type: 'long' },
        trending: { type: 'double' },
        lastModified: { type: 'date', ignore_malformed: true },
        registryTime: { type: 'date', ignore_malformed: true },
        uptime: { type: 'double' },
        down: { type: 'boolean' },
        demoted: { type: 'byte' },
        original: { type: 'boolean' },
        record: { type: 'object', enabled: false },
      },
    },
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

export function toIndexedDocument(doc: SearchDocument): IndexedDocument {
  const r = doc.record;
  const types = new Set<string>();
  // `remote` is reserved for "has a hosted endpoint"; a package cannot claim it.
  for (const p of r.packages) if (p.registryType !== 'remote') types.add(p.registryType);
  if (r.remotes.length > 0) types.add('remote');
  const gh = r.github;
  const licenses = [gh?.license, gh?.licenseSpdx].filter((v): v is string => v !== undefined);
  const slash = r.name.indexOf('/');
  const title = nonEmpty(r.title);
  const texts = fieldTexts(doc);
  const out: IndexedDocument = {
    slug: r.slug,
    name: r.name,
    nameWords: texts.name,
    publisher: texts.publisher,
    nameLower: r.name.toLowerCase(),
    description: r.description,
    toolText: doc.toolText,
    // Capped and without URLs, as the embedded engine indexes it.
    readmeText: texts.readme,
    types: [...types],
    categories: [...new Set(r.categories)],
    licenses,
    popularity: r.popularity ?? 0,
    stars: gh?.stars ?? 0,
    downloads: r.downloads ?? 0,
    trending: r.trending ?? 0,
    lastModified: lastModified(r),
    demoted: isDemoted(r) ? 1 : 0,
    original: isOriginal(r),
    record: r,
  };
  const published = registryTime(r);
  if (published !== undefined) out.registryTime = published;
  const uptime = uptimeOf(r);
  if (uptime !== undefined) out.uptime = uptime;
  if (r.healthHistory?.down === true) out.down = true;
  if (slash >= 0) out.nameTailLower = r.name.slice(slash + 1).toLowerCase();
  if (title !== undefined) {
    out.title = title;
    out.titleLower = title.toLowerCase();
  }
  const language = nonEmpty(gh?.language);
  if (language !== undefined) out.language = language;
  const licenseFacet = nonEmpty(gh?.license) ?? nonEmpty(gh?.licenseSpdx);
  if (licenseFacet !== undefined) out.licenseFacet = licenseFacet;
  return out;
}

// ------------------------------------------------------------------ request builders

export type Clause = Record<string, unknown>;
type SortClause = Record<string, 'asc' | 'desc' | { order: 'asc' | 'desc'; missing?: string | number }>;

export interface SearchRequestBody {
  query: Clause;
  sort?: SortClause[];
  from?: number;
  size: number;
  track_total_hits: boolean;
  _source?: string[] | false;
  search_after?: (string | number)[];
  aggs?: Record<string, Clause>;
  post_filter?: Clause;
}

/**
 * Values inside one filter OR (`terms`), filters AND (`bool.filter`); empty arrays do not filter.
 * `uptimeMin` is a `range` (a document without `uptime` is no match), `up` a `must_not` on `down`
 * (a document without `down` stays).
 */
export function buildFilterClauses(f: CatalogFilters): Clause[] {
  const out: Clause[] = [];
  const add = (field: string, values: readonly string[] | undefined): void => {
    if (values !== undefined && values.length > 0) out.push({ terms: { [field]: [...values] } });
  };
  add('types', f.type);
  add('categories', f.category);
  add('language', f.language);
  add('licenses', f.license);
  if (f.uptimeMin !== undefined) out.push({ range: { uptime: { gte: f.uptimeMin } } });
  if (f.up === true) out.push({ bool: { must_not: [{ term: { down: true } }] } });
  return out;
}

export const BY_SLUG: SortClause = { slug: 'asc' };
/** Deprecated servers and test entries after the others (the default orders, search ties, autocomplete). */
export const DEMOTED_LAST: SortClause = { demoted: 'asc' };
const SORT_CLAUSES: Record<SortKey, SortClause[]> = {
  popularity: [DEMOTED_LAST, { popularity: 'desc' }, BY_SLUG],
  name: [{ name: 'asc' }, BY_SLUG],
  stars: [{ stars: { order: 'desc', missing: 0 } }, BY_SLUG],
  updated: [{ lastModified: { order: 'desc', missing: '_last' } }, BY_SLUG],
  downloads: [{ downloads: { order: 'desc', missing: 0 } }, BY_SLUG],
  trending: [DEMOTED_LAST, { trending: { order: 'desc', missing: 0 } }, BY_SLUG],
  published: [DEMOTED_LAST, { registryTime: { order: 'desc', missing: '_last' } }, BY_SLUG],
  uptime: [{ uptime: { order: 'desc', missing: '_last' } }, BY_SLUG],
};

function filteredQuery(filters: CatalogFilters): Clause {
  const filter = buildFilterClauses(filters);
  return filter.length === 0 ? { match_all: {} } : { bool: { filter } };
}

export function buildListRequest(q: ListQuery): SearchRequestBody {
  const { offset, limit } = q.page;
  if (offset + limit > LIST_WINDOW) throw new SearchWindowError(LIST_WINDOW);
  const body: SearchRequestBody = {
    query: q.facets === true ? { match_all: {} } : filteredQuery(q.filters),
    sort: SORT_CLAUSES[q.sort],
    from: offset,
    size: limit,
    track_total_hits: true,
    _source: ['record'],
  };
  if (q.facets === true) withFacets(body, q.filters);
  return body;
}

// ------------------------------------------------------------------ facets

/** The index field each facet group counts and the filter it leaves out. */
const FACET_FIELDS: Readonly<Record<FacetGroup, { field: string; filter: keyof CatalogFilters }>> = {
  categories: { field: 'categories', filter: 'category' },
  types: { field: 'types', filter: 'type' },
  languages: { field: 'language', filter: 'language' },
  licenses: { field: 'licenseFacet', filter: 'license' },
};

function termsAgg(field: string): Clause {
  return { terms: { field, size: FACET_SIZE, order: [{ _count: 'desc' }, { _key: 'asc' }] } };
}

/**
 * Disjunctive facets, as the OpenSearch documentation does them: the filters move from the query
 * to `post_filter` (it narrows the hits, not the aggregations), and each group's aggregation is a
 * `filter` aggregation of every filter but the group's own, holding a `terms` aggregation of its
 * field and a `missing` aggregation of the documents without one. `query` must hold no filter.
 */
export function withFacets(body: SearchRequestBody, filters: CatalogFilters): void {
  const all = buildFilterClauses(filters);
  if (all.length > 0) body.post_filter = { bool: { filter: all } };
  const aggs: Record<string, Clause> = { ...body.aggs };
  for (const group of FACET_GROUPS) {
    const { field, filter } = FACET_FIELDS[group];
    const others = buildFilterClauses({ ...filters, [filter]: undefined });
    aggs[`facet_${group}`] = {
      filter: others.length === 0 ? { match_all: {} } : { bool: { filter: others } },
      aggs: { values: termsAgg(field), ...(group !== 'categories' && { missing: { missing: { field } } }) },
    };
  }
  body.aggs = aggs;
}

export function buildAutocompleteRequest(prefix: string, limit: number): SearchRequestBody {
  const p = prefix.toLowerCase();
  return {
    query: {
      bool: {
        should: [{ prefix: { nameLower: p } }, { prefix: { nameTailLower: p } }, { prefix: { titleLower: p } }],
        minimum_should_match: 1,
      },
    },
    sort: [DEMOTED_LAST, { popularity: 'desc' }, BY_SLUG],
    size: limit,
    track_total_hits: false,
    _source: ['record'],
  };
}

export function buildFacetsRequest(): SearchRequestBody {
  const terms = (field: string): Clause => ({
    terms: { field, size: FACET_SIZE, order: [{ _count: 'desc' }, { _key: 'asc' }] },
  });
  return {
    query: { match_all: {} },
    size: 0,
    track_total_hits: false,
    aggs: { categories: terms('categories'), languages: terms('language'), licenses: terms('licenseFacet') },
  };
}

/** One page of the slug feed; `after` is the last slug of the previous page (search_after, no window). */
export function buildSlugsRequest(after: string | undefined, size = SLUG_PAGE): SearchRequestBody {
  const body: SearchRequestBody = {
    query: { match_all: {} },
    sort: [BY_SLUG],
    size,
    track_total_hits: false,
    _source: ['slug', 'lastModified'],
  };
  if (after !== undefined) body.search_after = [after];
  return body;
}

function escapeWildcard(s: string): string {
  return s.replace(/[\\*?]/g, (c) => `\\${c}`);
}

/**
 * The registry feed: a `range` on the name instead of from/size, so any position is one query
 * (the name is the cursor). With both bounds the stricter one wins.
 */
export function buildRegistryRequest(q: RegistryQuery): SearchRequestBody {
  const filter: Clause[] = [];
  const { nameAfter, nameFrom } = q;
  if (nameAfter !== undefined && (nameFrom === undefined || nameAfter >= nameFrom)) {
    filter.push({ range: { name: { gt: nameAfter } } });
  } else if (nameFrom !== undefined) {
    filter.push({ range: { name: { gte: nameFrom } } });
  }
  if (q.updatedSince !== undefined) {
    const ms = Date.parse(q.updatedSince);
    if (Number.isNaN(ms)) throw new RangeError(`updatedSince is not a valid date-time: ${q.updatedSince}`);
    filter.push({ range: { lastModified: { gte: new Date(ms).toISOString() } } });
  }
  if (q.search !== undefined && q.search !== '') {
    filter.push({ wildcard: { nameLower: { value: `*${escapeWildcard(q.search.toLowerCase())}*` } } });
  }
  return {
    query: filter.length === 0 ? { match_all: {} } : { bool: { filter } },
    sort: [{ name: 'asc' }, BY_SLUG],
    size: q.limit,
    track_total_hits: false,
    _source: ['record'],
  };
}

/** Bulk operations indexing the documents under their slug. */
export function buildBulkUpsert(docs: SearchDocument[]): Clause[] {
  const ops: Clause[] = [];
  for (const d of docs) ops.push({ index: { _id: d.record.slug } }, { ...toIndexedDocument(d) });
  return ops;
}

export function buildBulkDelete(slugs: string[]): Clause[] {
  return slugs.map((slug) => ({ delete: { _id: slug } }));
}
