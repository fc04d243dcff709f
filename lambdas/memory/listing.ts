import { firstInOrder } from '../shared/first-in-order';
import type { FileEntry, NoteIndex } from './note-index';
import { isInside, relativeTo } from './paths';
import { headingTitle } from './markdown';
import { headingAt, parseHeadings, sectionAddress } from './sections';

/**
 * Listing and search over one commit's index: pure functions, so both transports and the tests
 * see exactly the same ordering and counting rules.
 */
export type ListType = 'all' | 'file' | 'folder';
export type ListSort = 'name' | 'updated';

export interface ListSpec {
  folder: string;
  /** Levels below the folder; Infinity for `all`. */
  depth: number;
  type: ListType;
  pathsOnly: boolean;
  tags: readonly string[];
  sort: ListSort;
}

export interface FolderEntry {
  type: 'folder';
  path: string;
  /** Notes inside the folder at any depth (that match the tag filter). */
  files: number;
}

export interface FileListEntry {
  type: 'file';
  path: string;
  title?: string;
  tags?: string[];
  excerpt?: string;
  sizeBytes?: number;
  updated?: string;
}

export type ListEntry = FolderEntry | FileListEntry;

const SURROGATE = /[\uD800-\uDFFF]/;

/** Code-point order, the order of git trees (and of UTF-8 bytes). */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  // Without surrogates UTF-16 order is code point order, and `<` compares natively: a search
  // ranks thousands of hits, most of them tied on score and time, so by path.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(i) as number;
    if (ca !== cb) return ca - cb;
    i += ca > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

export function hasAllTags(entry: FileEntry, tags: readonly string[]): boolean {
  return tags.every((t) => entry.tags.includes(t));
}

/**
 * Every entry of the listing in order (pagination slices it), and `files`: the number of notes
 * the listing covers (inside the folder, within the depth, matching the tags), whatever `type`.
 */
export function listEntries(index: NoteIndex | null, spec: ListSpec): { entries: ListEntry[]; files: number } {
  if (!index) return { entries: [], files: 0 };
  const fileEntries: Array<{ entry: ListEntry; updated: string }> = [];
  const folders = new Map<string, { files: number; updated: string }>();
  let files = 0;
  for (const [path, e] of index.files) {
    if (!isInside(path, spec.folder) || !hasAllTags(e, spec.tags)) continue;
    const segs = relativeTo(path, spec.folder).split('/');
    if (segs.length <= spec.depth) {
      files++;
      if (spec.type !== 'folder') {
        const entry: FileListEntry = spec.pathsOnly
          ? { type: 'file', path }
          : { type: 'file', path, title: e.title, tags: e.tags, excerpt: e.excerpt, sizeBytes: e.size, updated: e.updated };
        fileEntries.push({ entry, updated: e.updated });
      }
    }
    if (spec.type === 'file') continue;
    let folder = spec.folder;
    for (let level = 1; level < segs.length && level <= spec.depth; level++) {
      folder = folder === '' ? segs[level - 1] : `${folder}/${segs[level - 1]}`;
      const f = folders.get(folder);
      if (f) {
        f.files++;
        if (e.updated > f.updated) f.updated = e.updated;
      } else folders.set(folder, { files: 1, updated: e.updated });
    }
  }
  const all = [...fileEntries, ...[...folders].map(([path, f]) => ({ entry: { type: 'folder', path, files: f.files } as ListEntry, updated: f.updated }))];
  all.sort((a, b) => (spec.sort === 'updated' && a.updated !== b.updated ? (a.updated < b.updated ? 1 : -1) : comparePaths(a.entry.path, b.entry.path)));
  return { entries: all.map((x) => x.entry), files };
}

/** A case-insensitive literal matcher: the query is one substring, never split into words. */
export function literalMatcher(query: string): RegExp {
  return new RegExp(query.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'), 'giu');
}

export function countMatches(re: RegExp, text: string): number {
  re.lastIndex = 0;
  let n = 0;
  // `test` moves `lastIndex` as `exec` does without building a match array: a search counts the
  // matches of every note, and those arrays were most of its garbage.
  while (re.test(text)) n++;
  re.lastIndex = 0;
  return n;
}

const BEFORE = 60;
const AFTER = 100;

/** A window of the body around the first match, whitespace collapsed; the excerpt if the body has none. */
export function makeSnippet(re: RegExp, body: string, fallback: string): string {
  re.lastIndex = 0;
  const m = re.exec(body);
  re.lastIndex = 0;
  if (!m) return fallback;
  let start = Math.max(0, m.index - BEFORE);
  let end = Math.min(body.length, m.index + m[0].length + AFTER);
  // Do not cut words in half at either end (but never cut into the match itself).
  if (start > 0) {
    const ws = body.slice(start, m.index).search(/\s/);
    if (ws >= 0) start += ws + 1;
  }
  if (end < body.length) {
    const tail = body.slice(m.index + m[0].length, end);
    const ws = tail.search(/\s\S*$/);
    if (ws > 0) end = m.index + m[0].length + ws;
  }
  const text = body.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${text}${end < body.length ? '…' : ''}`;
}

export interface SearchHit {
  path: string;
  title: string;
  snippet: string;
  score: number;
  updated: string;
  /** The section of the body's first match: its heading's address (what a read's `section` takes); absent before any heading or outside the body. */
  section?: string;
}

/** The address of the section holding the first match of `re` in `body`, if the match is under a heading. */
export function sectionOfMatch(re: RegExp, body: string): string | undefined {
  re.lastIndex = 0;
  const m = re.exec(body);
  re.lastIndex = 0;
  if (!m) return undefined;
  let line = 1;
  for (let i = body.indexOf('\n'); i >= 0 && i < m.index; i = body.indexOf('\n', i + 1)) line++;
  const headings = parseHeadings(body);
  const k = headingAt(headings, line);
  return k === undefined ? undefined : sectionAddress(headings, k);
}

/**
 * A note as search sees it: its body, its title and its tags, each occurrence counted once. A title
 * taken from a heading and an inline `#tag` are text of the body already, so only a title taken
 * from the file name and tags that live in the front matter add to the body's count. The snippet is
 * the window around the first match in the body, else the title or tag that matched.
 */
export function scoreNote(re: RegExp, title: string, body: string, tags: readonly string[], fileStem: string): { score: number; snippet?: string } {
  const s = noteScore(re, title, body, tags, fileStem);
  return s.inBody ? { score: s.score, snippet: makeSnippet(re, body, '') } : { score: s.score, ...(s.snippet !== undefined && { snippet: s.snippet }) };
}

/**
 * `scoreNote` without the snippet window, which is the costly part and which only the hits a page
 * shows need: `inBody` says the snippet is a window of the body (`makeSnippet`), else `snippet` is
 * the title or tag that matched.
 */
export function noteScore(
  re: RegExp,
  title: string,
  body: string,
  tags: readonly string[],
  fileStem: string,
): { score: number; inBody: boolean; snippet: string | undefined } {
  return scoreParts(re, title, body, tags, title === fileStem);
}

/** Whether `title` is the file name of `path` without `.md`, as `baseName(path).slice(0, -3)` (without making it). */
function titleIsFileStem(title: string, path: string): boolean {
  const start = path.lastIndexOf('/') + 1;
  return title.length === path.length - start - 3 && path.startsWith(title, start);
}

function scoreParts(
  re: RegExp,
  title: string,
  body: string,
  tags: readonly string[],
  titleIsStem: boolean,
): { score: number; inBody: boolean; snippet: string | undefined } {
  const inBody = countMatches(re, body);
  let score = inBody;
  let snippet: string | undefined;
  // A title other than the file name came from a heading; only when they are equal (and it matches) is the body read for one.
  if (titleIsStem) {
    const n = countMatches(re, title);
    if (n > 0 && headingTitle(body) === null) {
      score += n;
      snippet = title;
    }
  }
  for (let i = 0; i < tags.length; i++) {
    const t = tags[i];
    const n = countMatches(re, t);
    // Only a tag that matches is looked for in the body (inline, hence counted there already).
    if (n === 0 || body.includes(`#${t}`)) continue;
    score += n;
    snippet ??= `#${t}`;
  }
  // One shape whatever matched: this runs for every note of a search.
  return { score, inBody: inBody > 0, snippet };
}

/** A search hit before its page is cut: the snippet and section are made only for the hits a page returns. */
export interface RankedHit extends Omit<SearchHit, 'snippet' | 'section'> {
  snippet(): string;
  section(): string | undefined;
}

/** `rankNote`'s hit: a class, so a hit is one object rather than one plus two closures (a broad word matches most notes). */
class LazyHit implements RankedHit {
  constructor(
    readonly path: string,
    readonly title: string,
    readonly score: number,
    readonly updated: string,
    private readonly re: RegExp,
    private readonly body: string,
    private readonly inBody: boolean,
    /** The snippet when the body has no match (a title or tag that matched, else the excerpt). */
    private readonly fallback: string,
  ) {}

  snippet(): string {
    return this.inBody ? makeSnippet(this.re, this.body, '') : this.fallback;
  }

  section(): string | undefined {
    return this.inBody ? sectionOfMatch(this.re, this.body) : undefined;
  }
}

/** Scores the note at `path` for search; `null` when it does not match. */
export function rankNote(
  re: RegExp,
  path: string,
  e: { title: string; tags: readonly string[]; excerpt: string; updated: string },
  body: string,
): RankedHit | null {
  const s = scoreParts(re, e.title, body, e.tags, titleIsFileStem(e.title, path));
  if (s.score <= 0) return null;
  return new LazyHit(path, e.title, s.score, e.updated, re, body, s.inBody, s.snippet ?? e.excerpt);
}

/** The hits of one page in rank order (`compareHits`), with their snippets, and whether more follow. */
export function pageOfHits(hits: readonly RankedHit[], offset: number, limit: number): { page: SearchHit[]; more: boolean } {
  const ranked = firstInOrder(hits, offset + limit, compareHits);
  return {
    page: ranked.slice(offset).map((h) => {
      const section = h.section();
      return { path: h.path, title: h.title, snippet: h.snippet(), score: h.score, updated: h.updated, ...(section !== undefined && { section }) };
    }),
    more: hits.length > offset + limit,
  };
}

/** Highest score first; ties newest first, then by path. */
export function compareHits(a: Pick<SearchHit, 'score' | 'updated' | 'path'>, b: Pick<SearchHit, 'score' | 'updated' | 'path'>): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.updated !== b.updated) return a.updated < b.updated ? 1 : -1;
  return comparePaths(a.path, b.path);
}
