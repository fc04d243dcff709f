/**
 * In-process search engine for the local stack (and tests).
 *
 * Full text: BM25 over compact per-term postings, with MiniSearch's radix tree (`SearchableMap`)
 * as the term dictionary for prefix and fuzzy expansion, and MiniSearch's scoring model (BM25+
 * with its default parameters, its prefix and fuzzy weights, and its bonus for documents matching
 * more of the query's words). MiniSearch's own `search()` allocates several objects per matching
 * document: on the synthetic 10,000-server catalog a broad query ("mcp server", ~9,800 hits) took
 * 30-40 ms against a 5 ms budget; accumulating scores in typed arrays takes about 1 ms.
 * Everything else is arrays precomputed per sort at load, walked with the filters.
 *
 * Optionally backed by a snapshot file so that writers in one process (seed, crawl, reindex CLIs)
 * and readers in another (the local HTTP server) share one catalog: writers rewrite the whole file
 * atomically under a lock file, readers notice a new file by its stat signature and reload it.
 *
 * Ordering of names and slugs is plain JavaScript string comparison, i.e. by UTF-16 code units.
 * The OpenSearch adapter sorts keyword fields by Unicode code point (UTF-8 bytes); the two agree
 * for every name the registry accepts (ASCII) and only differ for astral vs. U+E000–U+FFFF chars.
 */
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import SearchableMap from 'minisearch/SearchableMap';
import {
  SearchWindowError,
  type CatalogFilters,
  type ListQuery,
  type PageResult,
  type RegistryQuery,
  type SearchIndex,
  type TextQuery,
} from '../domain/ports';
import {
  lastModified,
  README_INDEX_CHARS,
  SORTS,
  type CatalogRecord,
  type Facets,
  type NameCount,
  type SearchDocument,
  type SlugEntry,
  type SortKey,
} from '../domain/types';

/** Same window as OpenSearch's default `max_result_window`, so both adapters page alike. */
export const EMBEDDED_SEARCH_WINDOW = 10_000;

const RELOAD_CHECK_INTERVAL_MS = 200;
const LOCK_STALE_MS = 30_000;
const LOCK_TIMEOUT_MS = 120_000;
const SNAPSHOT_FORMAT = 'catalog-embedded-search/2';

export interface EmbeddedSearchIndexOptions {
  /**
   * Snapshot file shared between processes. Without it the index lives only in memory.
   * Created (with its directory) on the first write.
   */
  snapshotPath?: string;
}

// ------------------------------------------------------------------ full-text engine

/** Indexed fields, in posting order, and their boosts: name/title > description > tools > README. */
const FIELD_BOOSTS = [5, 4, 2, 1.5, 0.5] as const; // name, title, description, toolText, readmeText
const FIELD_COUNT = FIELD_BOOSTS.length;
/** A posting packs the term frequency and the field id into one integer. */
const FIELD_BITS = 3;
const FIELD_MASK = (1 << FIELD_BITS) - 1;

// MiniSearch's default BM25+ parameters and expansion weights.
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
/** Prefix and one-edit fuzzy matching start at this length: shorter words would match half the vocabulary. */
const EXPAND_MIN_LENGTH = 4;

/** Words are runs of letters and digits (markdown punctuation, `snake_case` and `a/b` all split). */
const NON_WORD = /[^\p{L}\p{N}]+/u;

function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const t of text.split(NON_WORD)) if (t !== '') out.push(t.toLowerCase());
  return out;
}

interface SerializedText {
  terms: string[];
  /** Per term: [docDelta, packed, docDelta, packed, …] with ordinals ascending. */
  postings: number[][];
  /** FIELD_COUNT token counts per document, in ordinal order. */
  fieldLengths: number[];
}

/**
 * An inverted index over the five searchable fields of each document. Documents get increasing
 * ordinals, so every posting list stays sorted. Removal only marks the ordinal dead; statistics
 * (document count, average lengths, document frequencies) always count live documents only, so
 * scores do not depend on the history of writes, and dead postings are dropped by `compact()`.
 */
class TextIndex<T> {
  private readonly termIds = new Map<string, number>();
  private readonly tree = new SearchableMap<number>();
  private readonly postingDocs: number[][] = [];
  private readonly postingPacked: number[][] = [];
  /** Documents per (term, field), counted on add; exact while nothing is dead. */
  private readonly docFreq: number[] = [];

  private payloads: (T | undefined)[] = [];
  private keys: (string | undefined)[] = [];
  private readonly ordinals = new Map<string, number>();
  private fieldLengths: number[] = [];
  private readonly fieldLengthSums = new Array<number>(FIELD_COUNT).fill(0);
  private live = 0;
  private dead = 0;

  // Scratch buffers for scoring, reused across queries.
  private scores = new Float64Array(0);
  private matchedTerms = new Uint16Array(0);
  private lastQueryTerm = new Int32Array(0);
  private touchedBy = new Int32Array(0);
  private queryCounter = 0;

  get deadCount(): number {
    return this.dead;
  }

  add(key: string, fields: readonly string[], payload: T): void {
    if (this.ordinals.has(key)) this.remove(key);
    const ordinal = this.payloads.length;
    this.payloads.push(payload);
    this.keys.push(key);
    this.ordinals.set(key, ordinal);
    this.live += 1;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const tokens = tokenize(fields[f] ?? '');
      this.fieldLengths.push(tokens.length);
      this.fieldLengthSums[f] += tokens.length;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [term, tf] of counts) {
        const id = this.termId(term);
        this.postingDocs[id].push(ordinal);
        this.postingPacked[id].push((tf << FIELD_BITS) | f);
        this.docFreq[id * FIELD_COUNT + f] += 1;
      }
    }
  }

  remove(key: string): void {
    const ordinal = this.ordinals.get(key);
    if (ordinal === undefined) return;
    this.ordinals.delete(key);
    this.payloads[ordinal] = undefined;
    this.keys[ordinal] = undefined;
    for (let f = 0; f < FIELD_COUNT; f++) this.fieldLengthSums[f] -= this.fieldLengths[ordinal * FIELD_COUNT + f];
    this.live -= 1;
    this.dead += 1;
  }

  /** Calls `visit` once per matching document with its score (higher is better). */
  search(query: string, visit: (payload: T, score: number) => void): void {
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || this.live === 0) return;
    this.ensureScratch();
    if (this.queryCounter >= 0x7fffffff) {
      // `touchedBy` holds query ids in an Int32Array: start over before they would wrap.
      this.touchedBy.fill(0);
      this.queryCounter = 0;
    }
    const qid = ++this.queryCounter;
    const touched: number[] = [];
    const avgLengths = this.fieldLengthSums.map((sum) => sum / this.live);
    for (let qi = 0; qi < terms.length; qi++) {
      for (const [id, weight] of this.expand(terms[qi])) this.scoreTerm(id, weight, qi, qid, avgLengths, touched);
    }
    for (const o of touched) {
      const payload = this.payloads[o];
      if (payload !== undefined) visit(payload, this.scores[o] * this.matchedTerms[o]);
    }
  }

  /** Drops dead documents and renumbers ordinals; returns the payloads in their new ordinal order. */
  compact(): (T | undefined)[] {
    if (this.dead === 0) return this.payloads;
    const remap = new Int32Array(this.payloads.length).fill(-1);
    let next = 0;
    for (let o = 0; o < this.payloads.length; o++) if (this.payloads[o] !== undefined) remap[o] = next++;
    const payloads: (T | undefined)[] = [];
    const keys: (string | undefined)[] = [];
    const lengths: number[] = [];
    this.ordinals.clear();
    for (let o = 0; o < this.payloads.length; o++) {
      const key = this.keys[o];
      if (remap[o] < 0 || key === undefined) continue;
      this.ordinals.set(key, payloads.length);
      payloads.push(this.payloads[o]);
      keys.push(key);
      for (let f = 0; f < FIELD_COUNT; f++) lengths.push(this.fieldLengths[o * FIELD_COUNT + f]);
    }
    const oldTerms = [...this.termIds.keys()];
    const oldDocs = this.postingDocs.splice(0);
    const oldPacked = this.postingPacked.splice(0);
    this.termIds.clear();
    this.tree.clear();
    this.docFreq.length = 0;
    oldTerms.forEach((term, id) => {
      const docs = oldDocs[id];
      const packed = oldPacked[id];
      let newId = -1;
      for (let j = 0; j < docs.length; j++) {
        const o = remap[docs[j]];
        if (o < 0) continue;
        if (newId < 0) newId = this.termId(term);
        this.postingDocs[newId].push(o);
        this.postingPacked[newId].push(packed[j]);
        this.docFreq[newId * FIELD_COUNT + (packed[j] & FIELD_MASK)] += 1;
      }
    });
    this.payloads = payloads;
    this.keys = keys;
    this.fieldLengths = lengths;
    this.dead = 0;
    return this.payloads;
  }

  /** Serialises a compacted copy; ordinal i is the i-th payload of `compact()`. */
  toJSON(): SerializedText {
    this.compact();
    const postings = this.postingDocs.map((docs, id) => {
      const packed = this.postingPacked[id];
      const out = new Array<number>(docs.length * 2);
      let prev = 0;
      for (let j = 0; j < docs.length; j++) {
        out[2 * j] = docs[j] - prev;
        out[2 * j + 1] = packed[j];
        prev = docs[j];
      }
      return out;
    });
    return { terms: [...this.termIds.keys()], postings, fieldLengths: this.fieldLengths.slice() };
  }

  static fromJSON<T>(data: SerializedText, payloads: T[], keyOf: (p: T) => string): TextIndex<T> {
    const index = new TextIndex<T>();
    if (data.fieldLengths.length !== payloads.length * FIELD_COUNT || data.postings.length !== data.terms.length) {
      throw new Error('search snapshot is inconsistent (documents and text index differ)');
    }
    index.payloads = payloads.slice();
    const keys = payloads.map(keyOf);
    keys.forEach((key, o) => index.ordinals.set(key, o));
    index.keys = keys;
    index.live = payloads.length;
    index.fieldLengths = data.fieldLengths;
    for (let o = 0; o < payloads.length; o++) {
      for (let f = 0; f < FIELD_COUNT; f++) index.fieldLengthSums[f] += data.fieldLengths[o * FIELD_COUNT + f];
    }
    data.terms.forEach((term, i) => {
      const id = index.termId(term);
      const encoded = data.postings[i];
      const docs = index.postingDocs[id];
      const packed = index.postingPacked[id];
      let doc = 0;
      for (let j = 0; j < encoded.length; j += 2) {
        doc += encoded[j];
        docs.push(doc);
        packed.push(encoded[j + 1]);
        index.docFreq[id * FIELD_COUNT + (encoded[j + 1] & FIELD_MASK)] += 1;
      }
    });
    return index;
  }

  // --- internals

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.postingDocs.length;
      this.termIds.set(term, id);
      this.tree.set(term, id);
      this.postingDocs.push([]);
      this.postingPacked.push([]);
      for (let f = 0; f < FIELD_COUNT; f++) this.docFreq.push(0);
    }
    return id;
  }

  /** The dictionary terms a query term stands for, with MiniSearch's weights (exact 1, prefix, fuzzy). */
  private expand(term: string): Map<number, number> {
    const out = new Map<number, number>();
    const exact = this.termIds.get(term);
    if (exact !== undefined) out.set(exact, 1);
    if (term.length < EXPAND_MIN_LENGTH) return out;
    for (const [candidate, id] of this.tree.atPrefix(term)) {
      const distance = candidate.length - term.length;
      if (distance === 0) continue;
      out.set(id, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
    }
    for (const [candidate, [id, distance]] of this.tree.fuzzyGet(term, 1)) {
      if (distance === 0 || candidate.startsWith(term)) continue;
      out.set(id, (FUZZY_WEIGHT * term.length) / (term.length + distance));
    }
    return out;
  }

  private scoreTerm(id: number, weight: number, qi: number, qid: number, avgLengths: number[], touched: number[]): void {
    const docs = this.postingDocs[id];
    const packed = this.postingPacked[id];
    const df = this.liveDocFreq(id);
    const factor = new Array<number>(FIELD_COUNT);
    for (let f = 0; f < FIELD_COUNT; f++) {
      const idf = df[f] === 0 ? 0 : Math.log(1 + (this.live - df[f] + 0.5) / (df[f] + 0.5));
      factor[f] = weight * FIELD_BOOSTS[f] * idf;
    }
    const { scores, matchedTerms, lastQueryTerm, touchedBy, payloads, fieldLengths } = this;
    for (let j = 0; j < docs.length; j++) {
      const o = docs[j];
      if (payloads[o] === undefined) continue;
      const f = packed[j] & FIELD_MASK;
      const tf = packed[j] >>> FIELD_BITS;
      const norm = 1 - BM25_B + (BM25_B * fieldLengths[o * FIELD_COUNT + f]) / (avgLengths[f] || 1);
      const s = factor[f] * (BM25_D + (tf * (BM25_K + 1)) / (tf + BM25_K * norm));
      if (touchedBy[o] !== qid) {
        touchedBy[o] = qid;
        scores[o] = 0;
        matchedTerms[o] = 0;
        lastQueryTerm[o] = -1;
        touched.push(o);
      }
      scores[o] += s;
      if (lastQueryTerm[o] !== qi) {
        lastQueryTerm[o] = qi;
        matchedTerms[o] += 1;
      }
    }
  }

  private liveDocFreq(id: number): number[] {
    const df = this.docFreq.slice(id * FIELD_COUNT, (id + 1) * FIELD_COUNT);
    if (this.dead === 0) return df;
    // Dead postings are still in the list until the next compaction: count live ones only.
    df.fill(0);
    const docs = this.postingDocs[id];
    const packed = this.postingPacked[id];
    for (let j = 0; j < docs.length; j++) if (this.payloads[docs[j]] !== undefined) df[packed[j] & FIELD_MASK] += 1;
    return df;
  }

  private ensureScratch(): void {
    const n = this.payloads.length;
    if (this.scores.length >= n) return;
    const size = Math.max(n, this.scores.length * 2, 1024);
    this.scores = new Float64Array(size);
    this.matchedTerms = new Uint16Array(size);
    this.lastQueryTerm = new Int32Array(size);
    this.touchedBy = new Int32Array(size);
    this.queryCounter = 0;
  }
}

// ------------------------------------------------------------------ catalog index

/** A record plus the values every read path filters and orders on, computed once per write. */
interface Entry {
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
interface View {
  readonly bySort: Readonly<Record<SortKey, readonly Entry[]>>;
  readonly byName: readonly Entry[];
  readonly facets: Facets;
  readonly slugs: readonly SlugEntry[];
}

interface SnapshotFile {
  format: string;
  /** In the text index's ordinal order. */
  records: CatalogRecord[];
  text: SerializedText;
}

type FilterPredicate = (e: Entry) => boolean;

/** Dead documents are purged once they are this share of the index (and at every snapshot write). */
const COMPACT_DEAD_SHARE = 0.25;

export class EmbeddedSearchIndex implements SearchIndex {
  private readonly snapshotPath: string | undefined;
  private readonly lockPath: string | undefined;

  private entries = new Map<string, Entry>();
  private text = new TextIndex<Entry>();
  private view: View | undefined;

  /** Stat signature of the snapshot the in-memory state reflects ('missing' = no file yet). */
  private loadedSignature: string | undefined;
  private lastCheckAt = 0;
  private pendingCheck: Promise<void> | undefined;
  /** Serialises writes and reloads within this process; the lock file does it across processes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: EmbeddedSearchIndexOptions = {}) {
    this.snapshotPath = options.snapshotPath === undefined ? undefined : path.resolve(options.snapshotPath);
    this.lockPath = this.snapshotPath === undefined ? undefined : `${this.snapshotPath}.lock`;
  }

  // ---------------------------------------------------------------- write side

  async upsert(docs: SearchDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.write(false, () => {
      for (const d of latestBySlug(docs)) this.put(this.entries, this.text, d);
    });
  }

  async remove(slugs: string[]): Promise<void> {
    if (slugs.length === 0) return;
    await this.write(false, () => {
      for (const slug of slugs) {
        if (!this.entries.delete(slug)) continue;
        this.text.remove(slug);
      }
    });
  }

  async replaceAll(docs: SearchDocument[]): Promise<void> {
    await this.write(true, () => {
      const entries = new Map<string, Entry>();
      const text = new TextIndex<Entry>();
      for (const d of latestBySlug(docs)) this.put(entries, text, d);
      this.entries = entries;
      this.text = text;
    });
  }

  /** The current derived view: rebuilt, so a new object, whenever the content changed or was reloaded. */
  async generation(): Promise<object> {
    await this.ensureFresh();
    return this.currentView();
  }

  /** Re-reads the snapshot now if it changed, ignoring the 200 ms check interval. */
  async refresh(): Promise<void> {
    if (this.snapshotPath === undefined) return;
    this.lastCheckAt = 0;
    await this.ensureFresh();
  }

  // ---------------------------------------------------------------- read side
  // Returned records are the stored objects (no copies on the hot path): callers must not mutate them.

  async list(q: ListQuery): Promise<PageResult> {
    await this.ensureFresh();
    const order = this.currentView().bySort[q.sort];
    const { offset, limit } = q.page;
    const matches = compileFilters(q.filters);
    if (matches === undefined) {
      return { items: order.slice(offset, offset + limit).map((e) => e.record), total: order.length };
    }
    const items: CatalogRecord[] = [];
    let total = 0;
    for (const e of order) {
      if (!matches(e)) continue;
      if (total >= offset && items.length < limit) items.push(e.record);
      total += 1;
    }
    return { items, total };
  }

  async search(q: TextQuery): Promise<PageResult> {
    const { offset, limit } = q.page;
    if (offset + limit > EMBEDDED_SEARCH_WINDOW) throw new SearchWindowError(EMBEDDED_SEARCH_WINDOW);
    await this.ensureFresh();
    this.currentView(); // ranks must be current
    const matches = compileFilters(q.filters);
    const hits: Hit[] = [];
    this.text.search(q.q, (entry, score) => {
      if (matches === undefined || matches(entry)) hits.push({ entry, score });
    });
    const top = topHits(hits, offset + limit);
    return { items: top.slice(offset).map((h) => h.entry.record), total: hits.length };
  }

  async autocomplete(prefix: string, limit: number): Promise<CatalogRecord[]> {
    await this.ensureFresh();
    const p = prefix.toLowerCase();
    const out: CatalogRecord[] = [];
    if (p === '' || limit <= 0) return out;
    for (const e of this.currentView().bySort.popularity) {
      if (
        e.nameLower.startsWith(p) ||
        (e.tailLower !== undefined && e.tailLower.startsWith(p)) ||
        (e.titleLower !== undefined && e.titleLower.startsWith(p))
      ) {
        out.push(e.record);
        if (out.length >= limit) break;
      }
    }
    return out;
  }

  async facets(): Promise<Facets> {
    await this.ensureFresh();
    const f = this.currentView().facets;
    return { categories: f.categories.slice(), languages: f.languages.slice(), licenses: f.licenses.slice() };
  }

  async slugs(): Promise<SlugEntry[]> {
    await this.ensureFresh();
    return this.currentView().slugs.slice();
  }

  async registryPage(q: RegistryQuery): Promise<CatalogRecord[]> {
    await this.ensureFresh();
    const byName = this.currentView().byName;
    const out: CatalogRecord[] = [];
    if (q.limit <= 0) return out;
    const since = q.updatedSince === undefined ? undefined : parseInstant(q.updatedSince, 'updatedSince');
    const needle = q.search === undefined || q.search === '' ? undefined : q.search.toLowerCase();
    let start = 0;
    if (q.nameFrom !== undefined) start = Math.max(start, lowerBound(byName, q.nameFrom, false));
    if (q.nameAfter !== undefined) start = Math.max(start, lowerBound(byName, q.nameAfter, true));
    for (let i = start; i < byName.length && out.length < q.limit; i++) {
      const e = byName[i];
      if (since !== undefined && !(e.lastModifiedMs >= since)) continue;
      if (needle !== undefined && !e.nameLower.includes(needle)) continue;
      out.push(e.record);
    }
    return out;
  }

  // ---------------------------------------------------------------- internals

  private put(entries: Map<string, Entry>, text: TextIndex<Entry>, d: SearchDocument): void {
    // A private copy: a caller mutating its object later must not corrupt the precomputed orderings.
    const record = structuredClone(d.record);
    const entry = toEntry(record);
    const readme = d.readmeText.length > README_INDEX_CHARS ? d.readmeText.slice(0, README_INDEX_CHARS) : d.readmeText;
    text.add(record.slug, [record.name, record.title ?? '', record.description, d.toolText, readme], entry);
    entries.set(record.slug, entry);
  }

  private currentView(): View {
    if (this.view === undefined) this.view = buildView(this.entries.values());
    return this.view;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies `mutate` to the in-memory state and, with a snapshot, persists the result. Unless the
   * change replaces everything, the snapshot is re-read under the lock first so that another
   * process's writes since our last load are kept (read-modify-write).
   */
  private write(replacesEverything: boolean, mutate: () => void): Promise<void> {
    return this.serial(async () => {
      const snapshotPath = this.snapshotPath;
      const lockPath = this.lockPath;
      if (snapshotPath === undefined || lockPath === undefined) {
        mutate();
        this.afterMutation();
        return;
      }
      await fsp.mkdir(path.dirname(snapshotPath), { recursive: true });
      await withFileLock(lockPath, async () => {
        if (!replacesEverything) await this.loadIfChanged(true);
        try {
          mutate();
          this.afterMutation();
          this.loadedSignature = await writeSnapshot(snapshotPath, this.text);
        } catch (err) {
          // Memory may now hold a change the file does not: make the next read reload the file.
          this.loadedSignature = undefined;
          throw err;
        }
      });
    });
  }

  private afterMutation(): void {
    this.view = undefined;
    if (this.text.deadCount > COMPACT_DEAD_SHARE * (this.entries.size + this.text.deadCount)) this.text.compact();
  }

  /** Reloads the snapshot before a read when it may have changed (checked at most every 200 ms). */
  private ensureFresh(): Promise<void> {
    if (this.snapshotPath === undefined) return Promise.resolve();
    if (this.pendingCheck !== undefined) return this.pendingCheck;
    const now = Date.now();
    if (now - this.lastCheckAt < RELOAD_CHECK_INTERVAL_MS) return Promise.resolve();
    this.lastCheckAt = now;
    const check = this.serial(() => this.loadIfChanged(false)).finally(() => {
      this.pendingCheck = undefined;
    });
    this.pendingCheck = check;
    return check;
  }

  /**
   * Loads the snapshot when its stat signature differs from the loaded one. A reader keeps serving
   * the state it has when the file cannot be parsed (and does not retry until the file changes);
   * a writer fails instead, since writing on top of a state it could not read would lose data.
   */
  private async loadIfChanged(forWrite: boolean): Promise<void> {
    const snapshotPath = this.snapshotPath;
    if (snapshotPath === undefined) return;
    const signature = await statSignature(snapshotPath);
    if (signature === this.loadedSignature) return;
    try {
      const loaded = signature === MISSING ? undefined : await readSnapshot(snapshotPath);
      if (loaded === undefined) {
        this.entries = new Map();
        this.text = new TextIndex<Entry>();
        this.loadedSignature = MISSING;
      } else {
        this.entries = loaded.entries;
        this.text = loaded.text;
        this.loadedSignature = loaded.signature;
      }
      this.view = undefined;
    } catch (err) {
      if (forWrite) throw err;
      this.loadedSignature = signature;
      process.emitWarning(`search snapshot ${snapshotPath} could not be loaded; serving the previous state: ${String(err)}`);
    }
  }
}

// ------------------------------------------------------------------ derivation

function latestBySlug(docs: SearchDocument[]): Iterable<SearchDocument> {
  const latest = new Map<string, SearchDocument>();
  for (const d of docs) latest.set(d.record.slug, d);
  return latest.values();
}

function toEntry(record: CatalogRecord): Entry {
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

function buildView(source: Iterable<Entry>): View {
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
  return [...counts]
    .map(([name, count]) => ({ name, count }))
    .sort((a, b) => b.count - a.count || compareStrings(a.name, b.name));
}

/** Values inside one filter OR, filters AND; an empty or absent array does not filter. */
function compileFilters(f: CatalogFilters): FilterPredicate | undefined {
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

interface Hit {
  entry: Entry;
  score: number;
}

/** Score desc, then popularity desc and slug asc (the popularity rank encodes both). */
function hitOrder(a: Hit, b: Hit): number {
  return b.score - a.score || a.entry.popularityRank - b.entry.popularityRank;
}

/**
 * The first `k` hits in order. A broad query matches most of the catalog while a page needs a few
 * dozen: keep a bounded max-heap of the best `k` (O(n log k)) instead of sorting everything.
 */
function topHits(hits: Hit[], k: number): Hit[] {
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
function lowerBound(byName: readonly Entry[], bound: string, exclusive: boolean): number {
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

function parseInstant(value: string, what: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`${what} is not a valid date-time: ${value}`);
  return ms;
}

// ------------------------------------------------------------------ snapshot file

const MISSING = 'missing';

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** Identifies one version of the file: each atomic rename brings a new inode, mtime and size. */
async function statSignature(file: string): Promise<string> {
  try {
    const st = await fsp.stat(file, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return MISSING;
    throw err;
  }
}

async function readSnapshot(
  file: string,
): Promise<{ entries: Map<string, Entry>; text: TextIndex<Entry>; signature: string } | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  let raw: string;
  let signature: string;
  try {
    // Stat the open handle, not the path, so the signature belongs to the bytes we read.
    const st = await handle.stat({ bigint: true });
    signature = `${st.ino}:${st.size}:${st.mtimeNs}`;
    raw = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  const parsed: unknown = JSON.parse(raw);
  if (!isSnapshotFile(parsed)) {
    throw new Error(`${file} is not a ${SNAPSHOT_FORMAT} snapshot; rebuild it (npm run seed / npm run reindex)`);
  }
  const ordered = parsed.records.map(toEntry);
  const text = TextIndex.fromJSON(parsed.text, ordered, (e) => e.slug);
  const entries = new Map<string, Entry>();
  for (const e of ordered) entries.set(e.slug, e);
  return { entries, text, signature };
}

function isSnapshotFile(v: unknown): v is SnapshotFile {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  if (o.format !== SNAPSHOT_FORMAT || !Array.isArray(o.records)) return false;
  const text = o.text as Record<string, unknown> | null | undefined;
  return (
    typeof text === 'object' && text !== null && Array.isArray(text.terms) && Array.isArray(text.postings) && Array.isArray(text.fieldLengths)
  );
}

/** Writes the snapshot atomically (temp file + rename) and returns the new file's signature. */
async function writeSnapshot(file: string, text: TextIndex<Entry>): Promise<string> {
  const serializedText = text.toJSON(); // compacts: ordinal i is the i-th live entry below
  const records: CatalogRecord[] = [];
  for (const e of text.compact()) if (e !== undefined) records.push(e.record);
  const snapshot: SnapshotFile = { format: SNAPSHOT_FORMAT, records, text: serializedText };
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  const handle = await fsp.open(tmp, 'wx');
  let signature: string;
  try {
    await handle.writeFile(JSON.stringify(snapshot), 'utf8');
    // No fsync: this is a local-development cache, rebuildable from the store; rename alone
    // already guarantees readers never see a half-written file.
    const st = await handle.stat({ bigint: true });
    signature = `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch (err) {
    await handle.close();
    await fsp.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw err;
  }
  return signature;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A lock file created with O_EXCL. A lock older than 30 s is taken to belong to a crashed
 * process and is broken; the token check on release keeps us from deleting a successor's lock.
 */
async function withFileLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const token = `${process.pid}:${randomUUID()}`;
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      await fsp.writeFile(lockPath, token, { flag: 'wx' });
      break;
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
    try {
      const st = await fsp.stat(lockPath);
      if (Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await fsp.unlink(lockPath).catch(() => undefined);
        continue;
      }
    } catch (err) {
      if (errorCode(err) === 'ENOENT') continue;
      throw err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the search snapshot lock ${lockPath}`);
    await sleep(15 + Math.random() * 35);
  }
  try {
    return await fn();
  } finally {
    const held = await fsp.readFile(lockPath, 'utf8').catch(() => undefined);
    if (held === token) await fsp.unlink(lockPath).catch(() => undefined);
  }
}
