import { mapLimit } from '../shared/concurrency';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import { hasAllTags, literalMatcher, scoreNote, type SearchHit } from './listing';
import type { NoteIndex } from './note-index';
import { baseName, isInside } from './paths';
import type { MemoryRecord } from './ports';
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
  /** Every matching note of the commit whose index is `index`, in any order. */
  hits(rec: MemoryRecord, index: NoteIndex, query: NoteQuery): Promise<SearchHit[]>;
}

/** Reads the body of every candidate note (each fetched once per instance, ever) and scores it. */
export class ScanSearch implements NoteSearch {
  constructor(
    private readonly texts: NoteTexts,
    private readonly git: (rec: MemoryRecord) => GitOverlay,
  ) {}

  async hits(rec: MemoryRecord, index: NoteIndex, query: NoteQuery): Promise<SearchHit[]> {
    const candidates = [...index.files].filter(([path, e]) => isInside(path, query.folder) && hasAllTags(e, query.tags));
    const git = this.git(rec);
    const re = literalMatcher(query.q);
    const scored = await mapLimit(candidates, READ_CONCURRENCY, async ([path, e]): Promise<SearchHit | null> => {
      const body = await this.texts.body(rec, git, e.blob);
      const { score, snippet } = scoreNote(re, e.title, body, e.tags, baseName(path).slice(0, -3));
      return score > 0 ? { path, title: e.title, snippet: snippet ?? e.excerpt, score, updated: e.updated } : null;
    });
    return scored.filter((h): h is SearchHit => h !== null);
  }
}
