import { mapLimit } from '../shared/concurrency';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { hasAllTags, literalMatcher, rankNote, type RankedHit } from './listing';
import type { NoteIndex } from './note-index';
import { isInside } from './paths';
import type { FileEntry } from './note-index';
import type { PackedTexts } from './packed-texts';
import type { MemoryRecord } from './ports';
import { wantsCompaction, type SegmentPolicy } from './segments';
import type { NoteTexts } from './texts';

/** A validated search: one literal query, a folder (subfolders included) and tags to AND-match. */
export interface NoteQuery {
  q: string;
  folder: string;
  tags: readonly string[];
}

/**
 * How the notes of one commit are searched. An interface, so that what a cold search fetches can
 * change (packed per-commit segments instead of every note) while ranking, paging and cursors stay
 * in the readers.
 */
export interface NoteSearch {
  /** Every matching note of the commit whose index is `index`, in any order (snippets made on demand). */
  hits(rec: MemoryRecord, index: NoteIndex, query: NoteQuery): Promise<RankedHit[]>;
  /** Told the segments of the index about to be searched (every note a candidate), before it is parsed. */
  prefetch?(rec: MemoryRecord, segmentIds: readonly string[]): void;
}

/** Reads the body of every candidate note (each fetched once per instance, ever) and scores it. */
export class ScanSearch implements NoteSearch {
  constructor(
    private readonly texts: NoteTexts,
    private readonly git: (rec: MemoryRecord) => GitOverlay,
  ) {}

  async hits(rec: MemoryRecord, index: NoteIndex, query: NoteQuery): Promise<RankedHit[]> {
    const candidates = [...index.files].filter(([path, e]) => isInside(path, query.folder) && hasAllTags(e, query.tags));
    const git = this.git(rec);
    const re = literalMatcher(query.q);
    const scored = await mapLimit(candidates, READ_CONCURRENCY, async ([path, e]) => rankNote(re, path, e, await this.texts.body(rec, git, e.blob)));
    return scored.filter((h): h is RankedHit => h !== null);
  }
}

/**
 * Reads the commit's packed texts (the index's tail and a few segments, `segments.ts`) instead of
 * one object per note; notes the layout does not cover (an index older than segments) are read one
 * by one as `ScanSearch` does, and the layout is then compacted in the background for the next
 * fresh instance. Same matching and scoring as `ScanSearch`, so the two agree hit for hit.
 */
export class PackedSearch implements NoteSearch {
  constructor(
    private readonly packed: PackedTexts,
    private readonly texts: NoteTexts,
    private readonly git: (rec: MemoryRecord) => GitOverlay,
    private readonly policy: SegmentPolicy,
  ) {}

  prefetch(rec: MemoryRecord, segmentIds: readonly string[]): void {
    this.packed.prefetch(rec, segmentIds);
  }

  async hits(rec: MemoryRecord, index: NoteIndex, query: NoteQuery): Promise<RankedHit[]> {
    // The loops below run once per note, on a fresh instance mostly before the JIT has compiled
    // them: callbacks and indexed loops, no iterator protocol and destructuring per note.
    const byBlob = new Map<string, Array<[string, FileEntry]>>();
    const every = query.folder === '' && query.tags.length === 0;
    index.files.forEach((e, path) => {
      if (!every && (!isInside(path, query.folder) || !hasAllTags(e, query.tags))) return;
      const same = byBlob.get(e.blob);
      if (same) same.push([path, e]);
      else byBlob.set(e.blob, [[path, e]]);
    });
    const re = literalMatcher(query.q);
    const out: RankedHit[] = [];
    const score = (paths: Array<[string, FileEntry]>, body: string): void => {
      for (let i = 0; i < paths.length; i++) {
        const hit = rankNote(re, paths[i][0], paths[i][1], body);
        if (hit) out.push(hit);
      }
    };
    // The scan takes what it finds out of `byBlob`: what is left was not packed.
    await this.packed.scan(rec, index.pack, byBlob, (_blob, t, paths) => score(paths, t.text.slice(t.start)));
    const git = this.git(rec);
    const missing = byBlob.size;
    await mapLimit([...byBlob], READ_CONCURRENCY, async ([blob, paths]) => score(paths, await this.texts.body(rec, git, blob)));
    if (wantsCompaction(index.pack, index.files, missing, this.policy)) this.packed.compact(rec, index);
    return out;
  }
}
