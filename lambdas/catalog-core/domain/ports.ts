import type { CatalogDetail, CatalogRecord, Category, FacetCounts, Facets, RegistryTypeFilter, SearchDocument, SlugEntry, SortKey } from './types';
import type { HealthCheck } from './health-history';
import type { ChangeEntry } from './tool-changes';

/** Filters shared by /mcps and /search. Values inside one array OR-combine; the arrays AND-combine. */
export interface CatalogFilters {
  type?: RegistryTypeFilter[];
  category?: Category[];
  language?: string[];
  license?: string[];
  /** Keep servers whose 30-day uptime is at least this percent (0-100); servers without check history do not qualify. */
  uptimeMin?: number;
  /** Leave out servers marked down (`healthHistory.down`); servers without check history stay. */
  up?: boolean;
}

export interface Page {
  /** 0-based offset of the first item. */
  offset: number;
  limit: number;
}

export interface ListQuery {
  filters: CatalogFilters;
  sort: SortKey;
  page: Page;
  /** Also count the facets of this query (`PageResult.facets`). */
  facets?: boolean;
}

export interface TextQuery {
  /** The trimmed user query (1-100 chars). */
  q: string;
  filters: CatalogFilters;
  page: Page;
  /** Also count the facets of this query (`PageResult.facets`). */
  facets?: boolean;
}

export interface PageResult {
  items: CatalogRecord[];
  /** Exact number of matches. */
  total: number;
  /** When the query asked for them: its facet counts (`FacetCounts`, the disjunctive way). */
  facets?: FacetCounts;
}

export interface RegistryQuery {
  /** Case-insensitive substring of the name. */
  search?: string;
  /** Only servers whose last-modified time is at or after this instant (ISO 8601). */
  updatedSince?: string;
  /** Names strictly greater than this (exclusive lower bound), in name order. */
  nameAfter?: string;
  /** Names greater than or equal to this (inclusive lower bound). */
  nameFrom?: string;
  limit: number;
}

/**
 * The query engine over the catalog. DynamoDB is the source of truth; the index is derived
 * from it (rebuildable with `npm run reindex`). Adapters: embedded (local) and OpenSearch (AWS).
 */
export interface SearchIndex {
  // --- write side (crawler, seed, reindex) ---
  /** Inserts or replaces the documents (by slug), in bulk. */
  upsert(docs: SearchDocument[]): Promise<void>;
  /** Removes the given slugs (unknown slugs are ignored). */
  remove(slugs: string[]): Promise<void>;
  /** Replaces the whole index with exactly these documents. */
  replaceAll(docs: SearchDocument[]): Promise<void>;

  // --- read side (catalog API) ---
  /**
   * Filtered, sorted page. Ties broken by slug asc. In the popularity, trending and published
   * orders demoted servers (deprecated, test entries: `domain/standing.ts`) come after the others.
   */
  list(q: ListQuery): Promise<PageResult>;
  /**
   * Relevance-ranked full text over name, title, description, tool names and descriptions and
   * README (originals' scores times ORIGINAL_BOOST, demoted servers' times DEMOTED_WEIGHT);
   * demoted servers after the others of equal score, then popularity, then slug. Throws `SearchWindowError` past the engine's window.
   */
  search(q: TextQuery): Promise<PageResult>;
  /**
   * Case-insensitive prefix of the full name, of the part after `/`, or of the title;
   * demoted servers last, then by popularity desc then slug asc.
   */
  autocomplete(prefix: string, limit: number): Promise<CatalogRecord[]>;
  /** Counts over the whole catalog, most-used first (ties by name asc). */
  facets(): Promise<Facets>;
  /** Every slug with its last-modified time, ordered by slug. */
  slugs(): Promise<SlugEntry[]>;
  /** The registry feed: ordered by name asc. */
  registryPage(q: RegistryQuery): Promise<CatalogRecord[]>;
  /**
   * An opaque token that changes whenever the index content changes (after a reload too), for
   * caching whole responses per content version. Optional: an engine that cannot tell (OpenSearch,
   * written by other processes) leaves it out and nothing is cached.
   */
  generation?(): Promise<object>;
}

/** Thrown by `SearchIndex.search` when offset+limit is beyond what the engine can page to. */
export class SearchWindowError extends Error {
  constructor(readonly maxWindow: number) {
    super(`results beyond the first ${maxWindow} are not available; narrow the query`);
    this.name = 'SearchWindowError';
  }
}

/** The source of truth (DynamoDB). */
export interface CatalogStore {
  get(slug: string): Promise<CatalogDetail | undefined>;
  getRecord(slug: string): Promise<CatalogRecord | undefined>;
  /** Writes records with optional README/tools; `undefined` readme/tools leaves them unchanged, `null` deletes. */
  put(entries: CatalogWrite[]): Promise<void>;
  delete(slugs: string[]): Promise<void>;
  /** Streams every record (for reindexing) with its README and tools, in no particular order (a parallel scan where the adapter can). */
  scanAll(opts?: { segments?: number; concurrency?: number }): AsyncIterable<CatalogDetail>;
  /** Some one record of the catalog, whichever is cheapest to read; undefined when it is empty. */
  anyRecord(): Promise<CatalogRecord | undefined>;
}

export interface CatalogWrite {
  record: CatalogRecord;
  readme?: CatalogDetail['readme'] | null;
  tools?: CatalogDetail['tools'] | null;
}

/** Immutable icons (S3). */
export interface IconStore {
  get(slug: string): Promise<Uint8Array | undefined>;
  /** Stores the icon once; returns false (and writes nothing) when one already exists. */
  putIfAbsent(slug: string, webp: Uint8Array): Promise<boolean>;
  has(slug: string): Promise<boolean>;
  /**
   * Deletes the icons of servers that were never real (demo data, replaced): an icon is never
   * replaced, so a slug the crawler gives a real server later must not find a demo icon there.
   * Unknown slugs are ignored.
   */
  remove(slugs: string[]): Promise<void>;
}

/** A page of a server's changelog, newest first; `next` is the position to continue before. */
export interface ChangePage {
  items: ChangeEntry[];
  next?: string;
}

/** A server's history (the trust table): live checks, kept for a retention, and its changelog. */
export interface TrustStore {
  putChecks(entries: Array<{ slug: string; check: HealthCheck }>): Promise<void>;
  putChanges(entries: Array<{ slug: string; entry: ChangeEntry }>): Promise<void>;
  /** Newest first, `limit` at most, strictly before the position `before` (a page's `next`). */
  changes(slug: string, opts: { before?: string; limit: number }): Promise<ChangePage>;
  /** The newest breaking changes across every server (the site's feed). */
  recentBreaking(limit: number): Promise<Array<{ slug: string; entry: ChangeEntry }>>;
  /** The checks of `slug` from `since` to `until` (inclusive ISO times; `until` open when omitted), oldest first. */
  checks(slug: string, since: string, until?: string): Promise<HealthCheck[]>;
  deleteAll(slug: string): Promise<void>;
}
