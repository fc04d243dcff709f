import { sleep } from '../shared/concurrency';
import type { ImmutableCache } from './cache';
import type { MemoryLimits } from './config';
import type { GitOverlay } from './git-overlay';
import { describeNote, parseNoteLenient } from './markdown';
import {
  decodeIndex,
  fileEntry,
  indexBytes,
  parseIndexText,
  segmentIdsAhead,
  segmentIdsInHead,
  serializeIndex,
  type FileEntry,
  type NoteIndex,
} from './note-index';
import type { BlobItem, BlobStore, MemoryRecord } from './ports';
import { nextPack, segmentCacheKey, textsBytes, type PackedText, type SegmentPolicy } from './segments';

/** A new commit's index before its texts are packed. */
export type UnpackedIndex = Omit<NoteIndex, 'pack' | 'fresh'>;

/**
 * Where the per-commit note index comes from and goes to. An interface, so the way indexes (and
 * later, packed search segments built beside them) are stored can change without touching the
 * commit loop or the readers.
 */
export interface IndexStore {
  /**
   * The index of `commit`: from this instance's cache, from storage, or rebuilt from the tree.
   * `ahead` hears the ids of the index's segments as soon as the stored text names them, before
   * the rest is parsed (a search starts fetching them meanwhile).
   */
  load(rec: MemoryRecord, commit: string, opts?: { ahead?: (segmentIds: string[]) => void }): Promise<NoteIndex>;
  /**
   * `next` with its packed search texts, derived from `parent`'s (null: the first commit) and the
   * texts of the notes at `changed` (undefined: every note) that `git` holds without a fetch (the
   * blobs this request wrote or read). `known` gives texts the caller parsed already (a push's
   * notes, checked just before), taken as they are.
   */
  withPack(
    git: GitOverlay,
    parent: NoteIndex | null,
    next: UnpackedIndex,
    changed?: readonly string[],
    known?: ReadonlyMap<string, PackedText>,
  ): Promise<NoteIndex>;
  /** The items a new commit's PUT wave stores for its index (the index and any new segment). */
  items(index: NoteIndex): BlobItem[];
  /** Called once the wave landed: the index is readable without a fetch from now on. */
  remember(rec: MemoryRecord, index: NoteIndex): void;
}

export const isoSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** The index as a gzipped JSON object per commit (`m/<id>/index/<commit>`), cached forever. */
export class StoredIndexes implements IndexStore {
  constructor(
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
    private readonly limits: MemoryLimits,
    private readonly git: (rec: MemoryRecord) => GitOverlay,
    private readonly policy: SegmentPolicy,
  ) {}

  async load(rec: MemoryRecord, commit: string, opts: { ahead?: (segmentIds: string[]) => void } = {}): Promise<NoteIndex> {
    const idx = await this.cache.getOrLoad(
      key(rec, commit),
      async () => {
        // A compaction may be storing this object again (same notes, a new layout). S3 replaces an
        // object atomically; a store that writes in place (the local S3 server) can hand out a
        // half-written one, which gzip's checksum catches: read it again.
        for (let attempt = 1; ; attempt++) {
          const bytes = await this.blobs.get(rec.id, 'index', commit);
          if (!bytes) return this.rebuild(rec, commit);
          // The segment ids from the head of the object, before the rest is inflated and parsed
          // (tens of milliseconds at 10,000 notes, which the segments' fetches overlap); from the
          // whole text when the head does not hold them all.
          let sent = !opts.ahead || attempt > 1;
          const ahead = async (ids: string[] | undefined): Promise<void> => {
            if (sent || !ids || ids.length === 0) return;
            sent = true;
            opts.ahead?.(ids);
            // Two turns of the event loop, so the fetches just started are on the wire (a new
            // connection included) before the work below holds the loop for milliseconds.
            await new Promise((r) => setImmediate(r));
            await new Promise((r) => setImmediate(r));
          };
          await ahead(sent ? undefined : segmentIdsInHead(bytes));
          try {
            const text = decodeIndex(bytes);
            await ahead(sent ? undefined : segmentIdsAhead(text.json));
            return parseIndexText(text);
          } catch (err) {
            if (attempt >= 3) throw err;
            await sleep(50 * attempt);
          }
        }
      },
      indexBytes,
    );
    return idx as NoteIndex;
  }

  async withPack(
    git: GitOverlay,
    parent: NoteIndex | null,
    next: UnpackedIndex,
    changed?: readonly string[],
    known?: ReadonlyMap<string, PackedText>,
  ): Promise<NoteIndex> {
    const text = async (blob: string): Promise<PackedText | undefined> => {
      const given = known?.get(blob);
      if (given) return given;
      const t = await git.localText(blob);
      return t === undefined ? undefined : packedText(t, this.limits);
    };
    const { pack, fresh } = await nextPack(parent, next.files, changed, text, this.policy);
    return { ...next, pack, ...(fresh.length > 0 ? { fresh } : {}) };
  }

  items(index: NoteIndex): BlobItem[] {
    return [
      { kind: 'index', sha: index.commit, body: serializeIndex(index) },
      ...(index.fresh ?? []).map((s): BlobItem => ({ kind: 'segment', sha: s.ref.id, body: s.body })),
    ];
  }

  remember(rec: MemoryRecord, index: NoteIndex): void {
    // The segments this process just stored are readable without a fetch too.
    for (const s of index.fresh ?? []) this.cache.set(segmentCacheKey(rec.id, s.ref.id), s.texts, textsBytes(s.texts));
    const { fresh: _stored, ...kept } = index;
    this.cache.set(key(rec, index.commit), kept, indexBytes(kept));
  }

  /**
   * Builds a commit's index from its tree when the index object is missing (a commit brought in
   * through the git recovery procedure). Slow (reads every note) but only ever once per commit.
   */
  private async rebuild(rec: MemoryRecord, commit: string): Promise<NoteIndex> {
    const git = this.git(rec);
    const c = await git.readCommit(commit);
    const time = isoSeconds(c.committer.timestamp);
    const trees = new Map<string, string>();
    const files = new Map<string, FileEntry>();
    const texts = new Map<string, PackedText>();
    const walk = async (folder: string, oid: string): Promise<void> => {
      trees.set(folder, oid);
      for (const e of await git.readTree(oid)) {
        const path = folder === '' ? e.path : `${folder}/${e.path}`;
        if (e.type === 'tree') await walk(path, e.oid);
        else if (e.type === 'blob' && path.endsWith('.md')) {
          const text = await git.readText(e.oid);
          files.set(path, fileEntry(e.oid, describeNote(text, path, this.limits), time));
          texts.set(e.oid, packedText(text, this.limits));
        }
      }
    };
    await walk('', c.tree);
    const { pack, fresh } = await nextPack(null, files, undefined, async (blob) => texts.get(blob), this.policy);
    const built: NoteIndex = { commit, parent: c.parent[0] ?? null, time, files, trees, tombstones: new Map(), pack, fresh };
    await this.blobs.putMany(rec.id, this.items(built));
    this.remember(rec, built);
    const { fresh: _stored, ...kept } = built;
    return kept;
  }
}

const key = (rec: MemoryRecord, commit: string): string => `i:${rec.id}:${commit}`;

/** A note's text with where its body starts, the body being what `NoteTexts.body` gives search. */
export function packedText(text: string, limits: MemoryLimits): PackedText {
  return { text, start: text.length - parseNoteLenient(text, limits).body.length };
}
