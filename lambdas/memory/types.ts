import type { KeyedWrite } from '../shared/idempotency/store';
import type { FrontMatter } from './markdown';
import type { LinksSummary, NoteLinks } from './link-graph';
import type { ListEntry, ListSort, ListType, SearchHit } from './listing';
import type { NotePart, PartQuery } from './sections';

/** Who calls the core: the account (the token's `sub`), its grants and the commit author. */
export interface Caller {
  account: string;
  /** Memory names the token grants; undefined grants every memory of the account. */
  grants?: readonly string[];
  /** Recorded as author and committer of the caller's commits. */
  author?: { name?: string; email?: string };
  /**
   * A folder (no trailing slash) the caller is limited to in every memory it reaches, subfolders
   * included (a personal access token with a path prefix); undefined: whole memories. `path-scope.ts`.
   */
  pathPrefix?: string;
}

/** Spec 2's Memory resource. */
export interface Memory {
  name: string;
  files: number;
  folders: number;
  sizeBytes: number;
  /** ISO 8601 of the last write; null when the memory is empty. */
  updated: string | null;
  empty: boolean;
  /** HEAD commit sha; null before the first write. */
  rev: string | null;
}

export interface Note {
  path: string;
  title: string;
  frontmatter: FrontMatter;
  body: string;
  tags: string[];
  sizeBytes: number;
  updated: string;
  /** True only for a soft-deleted note read with `includeDeleted` (its last content). */
  deleted: boolean;
  /** The file exactly as stored (`Accept: text/markdown`). */
  markdown: string;
  /** The rev the read is consistent with (ETag). */
  rev: string;
  /** A partial read (`section`, `lines`, `frontmatterOnly`): which part `body` and `markdown` are. */
  part?: NotePart;
  /** With `includeLinks`: the note's links both ways. */
  links?: NoteLinks;
}

/** Options of a note read. */
export interface ReadOptions extends PartQuery {
  /** A soft-deleted note's last content (`deleted: true`). */
  includeDeleted?: boolean;
  /** The note as it was at this rev. */
  rev?: string;
  /** Add the note's links both ways. */
  includeLinks?: boolean;
}

/** A note's links at a rev. */
export interface NoteLinksResult extends NoteLinks {
  path: string;
  rev: string;
}

/** The memory-wide link view at a rev (null: an empty memory). */
export interface MemoryLinks extends LinksSummary {
  rev: string | null;
}

/** Options of every write. */
export interface WriteOptions {
  /** If-Match: `sha`, `"sha"` or `*`. A stale value is CONFLICT; absent, concurrent writes rebase. */
  expectedRev?: string;
  /** Create the memory first when it does not exist (the MCP default memory; the ceiling applies). */
  createMemory?: boolean;
  /**
   * The claimed `Idempotency-Key` of the request: a write that moves the head records it (and its
   * result) with the move; with `committed`, the write landed before and its result is returned.
   */
  once?: KeyedWrite;
}

/** PUT content: JSON (`body` without fences, `frontmatter` replaces the map) or raw markdown. */
export type NoteInput = { body: string; frontmatter?: FrontMatter } | { markdown: string };

export interface NoteEdit {
  /** replace (default), append or str_replace. */
  mode?: string;
  body?: string;
  frontmatter?: FrontMatter;
  old_str?: string;
  new_str?: string;
}

export interface WriteResult {
  path: string;
  rev: string;
  updated: string;
  /** False for a no-op write: no commit was made, `rev` and `updated` are the current ones. */
  changed: boolean;
}

export interface DeleteResult {
  path: string;
  deleted: true;
  rev: string;
  updated: string;
}

export interface ListNotesQuery {
  folder?: string;
  /** 1..n or `all`; default 2. */
  depth?: number | 'all';
  type?: ListType;
  /** `path` trims file entries to `{ type, path }`. */
  fields?: 'path' | 'full';
  tags?: readonly string[];
  sort?: ListSort;
  /** 1-500, default 200. */
  limit?: number;
  cursor?: string;
}

export interface NoteListing {
  folder: string;
  entries: ListEntry[];
  files: number;
  truncated: boolean;
  nextCursor?: string;
  /** The rev this page was read at (pages of one cursor chain share it). */
  rev: string | null;
}

export interface SearchQuery {
  q: string;
  folder?: string;
  tags?: readonly string[];
  /** 1-50, default 20. */
  limit?: number;
  cursor?: string;
}

export interface SearchPage {
  results: SearchHit[];
  nextCursor?: string;
  rev: string | null;
}

/**
 * An export as it is made: every check has passed (a refusal is an error before the first byte), and
 * `body` produces the file as it is read, through a bounded buffer, so a memory of any size streams.
 */
export interface ExportStream {
  filename: string;
  /**
   * At most this many bytes, known before the first one: what a transport with a response limit
   * decides on (stream the file, or store it and answer with a URL). It counts a blob of history not
   * read yet at the note cap; `tighten` reads those blobs for the exact figure.
   */
  maxBytes: number;
  /** A bound as close as the objects allow, reading what `maxBytes` only estimated (blobs of older versions). */
  tighten(): Promise<number>;
  body: AsyncIterable<Uint8Array>;
  /** What the export holds at once while `body` is read, and the most it held (`held-bytes.ts`). */
  held: { readonly current: number; readonly peak: number };
}

export interface BundleStream extends ExportStream {
  name: string;
  rev: string;
  contentType: 'application/x-git-bundle';
}

export interface ZipStream extends ExportStream {
  contentType: 'application/zip';
  memories: string[];
}

export interface BundleExport {
  name: string;
  rev: string;
  filename: string;
  contentType: 'application/x-git-bundle';
  bytes: Uint8Array;
}

export interface ZipExport {
  filename: string;
  contentType: 'application/zip';
  bytes: Uint8Array;
  memories: string[];
}

export type ChangeKind = 'added' | 'modified' | 'deleted' | 'renamed';

export interface HistoryQuery {
  /** Only the commits that touched this note (following renames). */
  path?: string;
  /** 1-100, default 20. */
  limit?: number;
  cursor?: string;
}

export interface HistoryChange {
  path: string;
  change: ChangeKind;
  /** The path before a rename. */
  from?: string;
}

export interface HistoryEntry {
  rev: string;
  parents: string[];
  /** ISO 8601: the commit's committer time (a REST or MCP write's own time). */
  time: string;
  /** The git author's name; `sub` is the account the memory belongs to, whose token landed the commit. */
  author: { name: string; sub: string };
  message: string;
  changes: HistoryChange[];
  /** Changes beyond the per-entry cap, counted but not listed (a large import). */
  moreChanges?: number;
}

export interface HistoryPage {
  commits: HistoryEntry[];
  nextCursor?: string;
  /** The head the first page started from (null: no history). */
  rev: string | null;
}

export interface DiffQuery {
  /** Default: the first parent of `to` (the changes of that one commit). */
  from?: string;
  /** Default: the head. */
  to?: string;
  path?: string;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Unified-diff lines: a leading ' ', '-' or '+' (and '\' for "No newline at end of file"). */
  lines: string[];
}

export interface FileDiff {
  path: string;
  change: ChangeKind;
  from?: string;
  oldBlob?: string;
  newBlob?: string;
  /** Renames: percent alike (100: unchanged content). */
  similarity?: number;
  hunks: DiffHunk[];
}

export interface DiffResult {
  /** Null when `to` is the first commit (its diff is against the empty tree). */
  from: string | null;
  to: string;
  files: FileDiff[];
}

export interface ChangedNote {
  path: string;
  change: ChangeKind;
  from?: string;
  title: string;
  /** ISO 8601 of the change (for a deletion, when it was deleted when known, else the head's time). */
  updated: string;
  tags: string[];
}

export interface ChangesSince {
  since: string;
  /** The head the changes lead up to: the next `changedSince`. */
  rev: string;
  changes: ChangedNote[];
}

export interface MoveInput {
  from: string;
  to: string;
  /** Rewrite `[[wikilinks]]` and relative markdown links to the note in every note. */
  updateLinks?: boolean;
}

export interface MoveResult {
  from: string;
  to: string;
  rev: string;
  updated: string;
  /** Notes whose links were rewritten (the moved note too, when its own relative links changed). */
  linksUpdated: string[];
  changed: boolean;
}
