/**
 * In-process search engine for the local stack (and tests).
 *
 * The `SearchIndex` adapter over three parts: the full-text engine (`text-index.ts`), the
 * derived read side, arrays precomputed per sort and walked with the filters (`embedded-view.ts`),
 * and the snapshot file (`snapshot-file.ts`).
 *
 * Optionally backed by a snapshot file so that writers in one process (seed, crawl, reindex CLIs)
 * and readers in another (the local HTTP server) share one catalog: writers rewrite the whole file
 * atomically under a lock file, readers notice a new file by its stat signature and reload it.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SearchWindowError, type ListQuery, type PageResult, type RegistryQuery, type SearchIndex, type TextQuery } from '../domain/ports';
import type { CatalogRecord, Facets, SearchDocument, SlugEntry } from '../domain/types';
import { fieldTexts } from './analysis';

import {
  buildView,
  compileFilters,
  emptyBits,
  facetCounts,
  hasRank,
  latestBySlug,
  markRank,
  lowerBound,
  parseInstant,
  prefixMatches,
  toEntry,
  type Entry,
  type View,
  visitNamesHolding,
} from './embedded-view';
import { encodeSnapshot, type LoadedSnapshot, MISSING, readSnapshot, statSignature, withFileLock, writeSnapshot } from './snapshot-file';
import { DEMOTED_WEIGHT, FIELDS, ORIGINAL_BOOST } from './ranking';
import { ListPlans } from './list-plans';
import { TextIndex } from './text-index';
import { TopRanks } from './top-ranks';

/** Same window as OpenSearch's default `max_result_window`, so both adapters page alike. */
export const EMBEDDED_SEARCH_WINDOW = 10_000;

const RELOAD_CHECK_INTERVAL_MS = 200;

export interface EmbeddedSearchIndexOptions {
  /**
   * Snapshot file shared between processes. Without it the index lives only in memory.
   * Created (with its directory) on the first write.
   */
  snapshotPath?: string;
  /** Milliseconds since the epoch, for the reload check interval (tests move it by hand). */
  clock?: () => number;
  /**
   * Content to start from, already decoded (an S3 snapshot in AWS, see `s3-snapshot.ts`); the
   * index then lives in memory only (no `snapshotPath`).
   */
  loaded?: Pick<LoadedSnapshot, 'entries' | 'text'>;
}

/** What a server's standing does to its text score (`ranking.ts`), as the OpenSearch request's `function_score`. */
function standingWeight(e: Entry): number {
  return (e.original ? ORIGINAL_BOOST : 1) * (e.demoted ? DEMOTED_WEIGHT : 1);
}

/** Dead documents are purged once they are this share of the index (and at every snapshot write). */
const COMPACT_DEAD_SHARE = 0.25;

export class EmbeddedSearchIndex implements SearchIndex {
  private readonly snapshotPath: string | undefined;
  private readonly lockPath: string | undefined;
  private readonly clock: () => number;

  private entries = new Map<string, Entry>();
  private text = new TextIndex<Entry>();
  private view: View | undefined;
  private ordinalTables: { view: View; rank: Int32Array; weight: Float64Array } | undefined;
  private listPlans: { view: View; plans: ListPlans } | undefined;

  /** Stat signature of the snapshot the in-memory state reflects ('missing' = no file yet). */
  private loadedSignature: string | undefined;
  private lastCheckAt = 0;
  private pendingCheck: Promise<void> | undefined;
  /** Serialises writes and reloads within this process; the lock file does it across processes. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: EmbeddedSearchIndexOptions = {}) {
    this.snapshotPath = options.snapshotPath === undefined ? undefined : path.resolve(options.snapshotPath);
    this.lockPath = this.snapshotPath === undefined ? undefined : `${this.snapshotPath}.lock`;
    this.clock = options.clock ?? Date.now;
    if (options.loaded !== undefined) {
      if (this.snapshotPath !== undefined) throw new Error('an embedded index starts from a snapshot file or from loaded content, not both');
      this.entries = options.loaded.entries;
      this.text = options.loaded.text;
    }
  }

  /** The snapshot's JSON text of the current content (what the S3 snapshot store writes). */
  encodeSnapshot(): string {
    const json = encodeSnapshot(this.text);
    this.view = undefined; // encoding compacts the text index: derived ranks are rebuilt on the next read
    return json;
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
    const view = this.currentView();
    const plans = this.plansOf(view);
    const plan = plans.plan(view, q.filters);
    const { offset, limit } = q.page;
    return {
      items: plans.page(view, plan, q.sort, offset, limit),
      total: plan.matches === undefined ? view.bySort[q.sort].length : plan.matches.count,
      ...(q.facets === true && { facets: plans.facets(view, q.filters, plan) }),
    };
  }

  async search(q: TextQuery): Promise<PageResult> {
    const { offset, limit } = q.page;
    if (offset + limit > EMBEDDED_SEARCH_WINDOW) throw new SearchWindowError(EMBEDDED_SEARCH_WINDOW);
    await this.ensureFresh();
    const view = this.currentView(); // ranks must be current
    const filter = compileFilters(view, q.filters)?.bits;
    const { rank, weight } = this.byOrdinal(view);
    // Facets count the text matches under every filter but their own, so they need all of them.
    const matched = q.facets === true ? emptyBits(view) : undefined;
    const top = new TopRanks(offset + limit);
    let total = 0;
    this.text.search(q.q, (o, score) => {
      const r = rank[o];
      if (matched !== undefined) markRank(matched, r);
      if (filter !== undefined && !hasRank(filter, r)) return;
      total += 1;
      top.push(score * weight[o], r);
    });
    const byRank = view.bySort.popularity;
    return {
      items: top
        .sorted()
        .slice(offset)
        .map((r) => byRank[r].record),
      total,
      ...(matched !== undefined && { facets: facetCounts(view, q.filters, matched) }),
    };
  }

  async autocomplete(prefix: string, limit: number): Promise<CatalogRecord[]> {
    await this.ensureFresh();
    const p = prefix.toLowerCase();
    if (p === '' || limit <= 0) return [];
    return prefixMatches(this.currentView(), p, limit).map((e) => e.record);
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
    const view = this.currentView();
    const byName = view.byName;
    const out: CatalogRecord[] = [];
    if (q.limit <= 0) return out;
    const since = q.updatedSince === undefined ? undefined : parseInstant(q.updatedSince, 'updatedSince');
    const needle = q.search === undefined || q.search === '' ? undefined : q.search.toLowerCase();
    let start = 0;
    if (q.nameFrom !== undefined) start = Math.max(start, lowerBound(byName, q.nameFrom, false));
    if (q.nameAfter !== undefined) start = Math.max(start, lowerBound(byName, q.nameAfter, true));
    if (needle !== undefined) {
      visitNamesHolding(view, needle, start, (e) => {
        if (since === undefined || e.lastModifiedMs >= since) out.push(e.record);
        return out.length < q.limit;
      });
      return out;
    }
    for (let i = start; i < byName.length && out.length < q.limit; i++) {
      const e = byName[i];
      if (since !== undefined && !(e.lastModifiedMs >= since)) continue;
      out.push(e.record);
    }
    return out;
  }

  // ---------------------------------------------------------------- internals

  private put(entries: Map<string, Entry>, text: TextIndex<Entry>, d: SearchDocument): void {
    // A private copy: a caller mutating its object later must not corrupt the precomputed orderings.
    const record = structuredClone(d.record);
    const entry = toEntry(record);
    const texts = fieldTexts(d);
    text.add(
      record.slug,
      FIELDS.map((f) => texts[f]),
      entry,
    );
    entries.set(record.slug, entry);
  }

  /**
   * Per text ordinal, the entry's popularity rank and standing weight (`standingWeight`) for the
   * view's ranks: what scoring a match needs, read from typed arrays instead of each match's entry.
   */
  private byOrdinal(view: View): { rank: Int32Array; weight: Float64Array } {
    if (this.ordinalTables?.view === view) return this.ordinalTables;
    const n = this.text.ordinalCount;
    const rank = new Int32Array(n);
    const weight = new Float64Array(n);
    for (let o = 0; o < n; o++) {
      const e = this.text.payloadAt(o);
      if (e === undefined) continue;
      rank[o] = e.popularityRank;
      weight[o] = standingWeight(e);
    }
    this.ordinalTables = { view, rank, weight };
    return this.ordinalTables;
  }

  /** The list plans of the current view (`list-plans.ts`), replaced with it. */
  private plansOf(view: View): ListPlans {
    if (this.listPlans?.view !== view) this.listPlans = { view, plans: new ListPlans() };
    return this.listPlans.plans;
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
    const now = this.clock();
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
