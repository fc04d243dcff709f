import { mapAhead, mapLimit, sleep } from '../shared/concurrency';
import type { ImmutableCache } from './cache';
import type { MemoryLimits } from './config';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import type { HeldBytes } from './held-bytes';
import { packedText, type IndexStore } from './index-store';
import type { NoteIndex } from './note-index';
import type { BlobStore, MemoryRecord } from './ports';
import {
  chunk,
  keepsSegment,
  parseSegment,
  segmentCacheKey,
  textsBytes,
  type PackedText,
  type SearchPack,
  type SegmentPolicy,
  type SegmentRef,
  wantsCompaction,
} from './segments';
import type { NoteTexts } from './texts';

/**
 * Segments in flight at once: enough to overlap the fetches (a 10,000-note memory is a few of
 * them), few enough that a memory larger than the instance's cache streams through a bounded heap.
 */
const SEGMENT_CONCURRENCY = 4;

export interface PackedTextsDeps {
  blobs: BlobStore;
  cache: ImmutableCache;
  indexes: IndexStore;
  texts: NoteTexts;
  limits: MemoryLimits;
  policy: SegmentPolicy;
  git: (rec: MemoryRecord) => GitOverlay;
}

/**
 * Reading packed note texts (`segments.ts`) for search and exports, and the background compaction
 * that leaves a complete, compact layout behind for a commit that lacks one.
 */
export class PackedTexts {
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: PackedTextsDeps) {}

  /** One segment's texts: from the cache, else fetched (and cached when it fits). Undefined if gone. */
  segment(rec: MemoryRecord, id: string): Promise<Map<string, PackedText> | undefined> {
    return this.deps.cache.getOrLoad(segmentCacheKey(rec.id, id), () => this.fetchSegment(rec, id), textsBytes);
  }

  private async fetchSegment(rec: MemoryRecord, id: string): Promise<Map<string, PackedText> | undefined> {
    // Two compactions may store the same segment at once; a store that writes in place (the
    // local S3 server; S3 replaces atomically) can hand out a half-written one, which gzip's
    // checksum catches. Read again; past that, the notes are read one by one (always right).
    for (let attempt = 1; attempt <= 3; attempt++) {
      const bytes = await this.deps.blobs.get(rec.id, 'segment', id);
      if (!bytes) return undefined;
      try {
        return parseSegment(bytes);
      } catch {
        await sleep(50 * attempt);
      }
    }
    return undefined;
  }

  /**
   * Starts fetching the first segments a `scan` of this layout reads (as many as it reads at once,
   * so the heap bound is the scan's), before the scan knows it needs them: a search calls it while
   * the commit's index is still being parsed. The scan then finds them loaded or in flight (the
   * cache shares a load), so nothing is fetched twice.
   */
  prefetch(rec: MemoryRecord, segmentIds: readonly string[]): void {
    for (const id of segmentIds.slice(0, SEGMENT_CONCURRENCY)) void this.segment(rec, id).catch(() => undefined);
  }

  /**
   * Calls `visit` once for each blob of `wanted` whose text the pack holds, with its value in
   * `wanted` (a search's map of blobs to their paths; `true` for a set): the tail first, then the
   * segments, a few at a time, each dropped once visited (so the heap stays bounded whatever the
   * memory's size). Each blob visited is taken out of `wanted`, which is left holding the blobs not
   * found, for the caller to read one by one: the caller gives up `wanted` (a copy if it needs it).
   * Taking out is also what visits a blob found in two places once: one map operation per text,
   * where a set of the visited ones cost two more (a search's scan of 10,000 notes is a few lookups
   * per note and little else).
   */
  scan<V>(rec: MemoryRecord, pack: SearchPack, wanted: Map<string, V>, visit: (blob: string, text: PackedText, value: V) => void): Promise<void>;
  scan(rec: MemoryRecord, pack: SearchPack, wanted: Set<string>, visit: (blob: string, text: PackedText) => void): Promise<void>;
  async scan<V>(
    rec: MemoryRecord,
    pack: SearchPack,
    wanted: Map<string, V> | Set<string>,
    visit: (blob: string, text: PackedText, value: V | true) => void,
  ): Promise<void> {
    const claim: (blob: string) => V | true | undefined =
      wanted instanceof Map
        ? (blob) => {
            const v = wanted.get(blob);
            if (v !== undefined) wanted.delete(blob);
            return v;
          }
        : (blob) => (wanted.delete(blob) ? true : undefined);
    const take = (texts: ReadonlyMap<string, PackedText>): void => {
      // Few blobs left: look them up in the texts rather than each text in them.
      if (wanted.size < texts.size) {
        for (const blob of wanted.keys()) {
          const t = texts.get(blob);
          if (t !== undefined) visit(blob, t, claim(blob) as V | true);
        }
        return;
      }
      texts.forEach((t, blob) => {
        const v = claim(blob);
        if (v !== undefined) visit(blob, t, v);
      });
    };
    take(pack.tail);
    await mapLimit(pack.segments, SEGMENT_CONCURRENCY, async (ref) => {
      if (wanted.size === 0) return;
      const texts = await this.segment(rec, ref.id);
      if (texts) take(texts);
    });
  }

  /**
   * The texts of `wanted` the layout holds, a batch per place in layout order (the tail, then each
   * segment): the next segment is fetched while the caller works on this one, and a segment not
   * already cached is not added to the cache (an export reads every text once, and would evict what
   * the instance's searches read again and again). `held` counts the segments in hand. The caller
   * removes from `wanted` what it used; what is left was not found.
   */
  async *inOrder(rec: MemoryRecord, pack: SearchPack, wanted: ReadonlySet<string>, held?: HeldBytes): AsyncGenerator<Array<[string, PackedText]>> {
    const pick = (texts: ReadonlyMap<string, PackedText>): Array<[string, PackedText]> => [...texts].filter(([blob]) => wanted.has(blob));
    const tail = pick(pack.tail);
    if (tail.length > 0) yield tail;
    const load = async (ref: SegmentRef): Promise<{ texts?: Map<string, PackedText>; bytes: number }> => {
      const texts = this.deps.cache.get<Map<string, PackedText>>(segmentCacheKey(rec.id, ref.id)) ?? (await this.fetchSegment(rec, ref.id));
      const bytes = texts ? textsBytes(texts) : 0;
      held?.change(bytes);
      return { texts, bytes };
    };
    for await (const { texts, bytes } of mapAhead(pack.segments, 1, load)) {
      try {
        if (texts) yield pick(texts);
      } finally {
        held?.change(-bytes);
      }
    }
  }

  /** After every note of `index` was read (an export): compacts its layout when a search would. */
  readAll(rec: MemoryRecord, index: NoteIndex, missing: number): void {
    if (wantsCompaction(index.pack, index.files, missing, this.deps.policy)) this.compact(rec, index);
  }

  /**
   * Starts, in the background, the compaction of `index`'s layout unless one runs for that commit in
   * this process: every note's text packed, large mostly-live segments kept, the rest (tail, small or
   * stale segments, notes read one by one) rewritten into new segments, then the commit's index
   * stored again naming them. Safe with any number of instances: segments are content-addressed, and
   * every version of a commit's index lists the same notes with a layout valid for them, so readers
   * and writers holding the older version stay correct; a failure leaves the older version in place.
   */
  compact(rec: MemoryRecord, index: NoteIndex): void {
    const key = `${rec.id}:${index.commit}`;
    if (this.running.has(key)) return;
    const run = this.compactNow(rec, index)
      // An optimisation only: the next search of the commit tries again.
      .catch(() => undefined)
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  /** Resolves once no compaction runs in this process (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
  }

  private async compactNow(rec: MemoryRecord, index: NoteIndex): Promise<void> {
    const { policy } = this.deps;
    const live = new Set<string>();
    for (const e of index.files.values()) live.add(e.blob);
    const placed = new Set<string>();
    const keep: SegmentRef[] = [];
    const rest = new Map<string, PackedText>();
    // One segment at a time: only the texts to rewrite stay in memory, never the kept segments'.
    for (const ref of index.pack.segments) {
      const texts = await this.segment(rec, ref.id);
      if (!texts) continue;
      const mine = [...texts].filter(([blob]) => live.has(blob) && !placed.has(blob));
      const chars = mine.reduce((n, [, t]) => n + t.text.length, 0);
      if (keepsSegment(ref, chars, policy)) {
        keep.push(ref);
        for (const [blob] of mine) {
          placed.add(blob);
          rest.delete(blob);
        }
      } else {
        for (const [blob, t] of mine) rest.set(blob, t);
      }
    }
    for (const [blob, t] of index.pack.tail) if (live.has(blob) && !placed.has(blob)) rest.set(blob, t);
    const git = this.deps.git(rec);
    const unread = [...live].filter((b) => !placed.has(b) && !rest.has(b));
    await mapLimit(unread, READ_CONCURRENCY, async (blob) => {
      rest.set(blob, packedText(await this.deps.texts.text(rec, git, blob), this.deps.limits));
    });
    const fresh = chunk(rest, policy);
    const compacted: NoteIndex = { ...index, pack: { segments: [...keep, ...fresh.map((s) => s.ref)], tail: new Map(), complete: true }, fresh };
    // Segments before the index that names them: no reader ever meets a name whose object is missing.
    await this.deps.blobs.putMany(
      rec.id,
      fresh.map((s) => ({ kind: 'segment' as const, sha: s.ref.id, body: s.body })),
    );
    await this.deps.blobs.putMany(rec.id, this.deps.indexes.items({ ...compacted, fresh: undefined }));
    this.deps.indexes.remember(rec, compacted);
  }
}
