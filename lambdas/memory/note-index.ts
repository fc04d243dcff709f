import { gzipSync } from 'node:zlib';
import type { TreeEntry } from 'isomorphic-git';
import type { GitOverlay } from './git-overlay';
import { gunzipHead, gunzipWhole, jsonAndTexts, utf8Text } from './gzip-text';
import type { NoteMeta } from './markdown';
import { LEGACY_PACK, textsBytes, type FreshSegment, type SearchPack } from './segments';
import { ancestorFolders, baseName, parentFolder } from './paths';
import type { MemoryStats } from './ports';

/**
 * The derived index of one commit: every note's blob and the metadata listing and search need
 * (title, tags, size, updated, excerpt), the tree of every folder, and the tombstones of deleted
 * notes. It is immutable (named by its commit), built incrementally from the parent's index by each
 * write, stored beside the objects and cached in the Lambda, so no read ever walks the git tree.
 */
export interface FileEntry {
  blob: string;
  size: number;
  title: string;
  tags: string[];
  /** ISO 8601 time of the commit that last changed the note. */
  updated: string;
  excerpt: string;
}

export interface Tombstone extends FileEntry {
  /** ISO 8601 time of the deleting commit. */
  deleted: string;
}

export interface NoteIndex {
  commit: string;
  parent: string | null;
  /** ISO 8601 time of the commit. */
  time: string;
  files: Map<string, FileEntry>;
  /** Folder (`''` is the root) → tree sha. */
  trees: Map<string, string>;
  /** Deleted notes, oldest deletion first. */
  tombstones: Map<string, Tombstone>;
  /** Where the notes' texts are packed for search (`segments.ts`); an index of version 1 has none. */
  pack: SearchPack;
  /** Segments this process built for the index and has not stored yet (never serialized). */
  fresh?: FreshSegment[];
}

/**
 * The stored form, gzipped. Version 3 (written now) is a line of JSON and then, back to back, every
 * long text the index holds: the tail's note texts, then the files' excerpts, then the tombstones'.
 * The JSON names their lengths; a reader takes each as a slice of one string instead of unescaping
 * thousands of JSON strings, and repeated values (commit times, tag lists) are written once and
 * referred to by number. At 10,000 notes the JSON is about a third of what version 2 held, which is
 * what a fresh instance's first read, list or search waits on. Versions 1 (no packed texts) and 2
 * (one JSON document) are still read.
 */
const VERSION = 3;

/** Version 1 and 2 rows: path, blob, size, title, tags, updated, excerpt (and a tombstone's deletion time). */
type FileRowV2 = [string, string, number, string, string[], string, string];
type TombRowV2 = [...FileRowV2, string];

interface SerializedV2 {
  v: 1 | 2;
  commit: string;
  parent: string | null;
  time: string;
  files: FileRowV2[];
  trees: Array<[string, string]>;
  tombstones: TombRowV2[];
  /** Segments as [id, notes, chars], the tail as [blob, body start, text], complete as 0 or 1. */
  pack?: { s: Array<[string, number, number]>; t: Array<[string, number, string]>; c: 0 | 1 };
}

/**
 * Version 3 rows: path, blob, size, title, tag list (its number in `tags`), updated (its number in
 * `times`), the excerpt's length in the texts after the JSON, and for a tombstone the deletion time's
 * number; then, only when the entry has fields beyond these, an object of them (so a field added to
 * `FileEntry` is stored without a new version).
 */
type FileRow = [string, string, number, string, number, number, number, Record<string, unknown>?];
type TombRow = [string, string, number, string, number, number, number, number, Record<string, unknown>?];

interface Serialized {
  v: 3;
  commit: string;
  parent: string | null;
  time: string;
  /** Segments as [id, notes, chars], the tail as [blob, body start, length of its text after the JSON], complete as 0 or 1. */
  pack: { s: Array<[string, number, number]>; t: Array<[string, number, number]>; c: 0 | 1 };
  times: string[];
  tags: string[][];
  files: FileRow[];
  trees: Array<[string, string]>;
  tombstones: TombRow[];
}

/** Numbers for repeated values, in order of first use. */
class Dictionary<T> {
  readonly values: T[] = [];
  private readonly ids = new Map<string, number>();
  constructor(private readonly key: (v: T) => string) {}
  id(v: T): number {
    const k = this.key(v);
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.values.length;
      this.ids.set(k, id);
      this.values.push(v);
    }
    return id;
  }
}

/** The fields of an entry beyond those a row holds by position, if any. */
function extraFields(e: FileEntry | Tombstone): Record<string, unknown> | undefined {
  const { blob: _b, size: _s, title: _t, tags: _g, updated: _u, excerpt: _e, deleted: _d, ...rest } = e as Tombstone;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

export function serializeIndex(idx: NoteIndex): Uint8Array {
  const times = new Dictionary<string>((t) => t);
  const tags = new Dictionary<string[]>((t) => JSON.stringify(t));
  const texts: string[] = [];
  const text = (t: string): number => {
    texts.push(t);
    return t.length;
  };
  const fields = (e: FileEntry) => [e.blob, e.size, e.title, tags.id(e.tags), times.id(e.updated)] as const;
  const withExtra = <R extends unknown[]>(r: R, e: FileEntry): R => {
    const extra = extraFields(e);
    if (extra) r.push(extra);
    return r;
  };
  // The pack's segment list comes first, before the files: a reader can start fetching the segments
  // from the first bytes of the text while it parses the rest (`segmentIdsAhead`). The texts follow
  // the JSON in the order they are named: the tail, the files, the tombstones.
  const pack: Serialized['pack'] = {
    s: idx.pack.segments.map((r) => [r.id, r.notes, r.chars]),
    t: [...idx.pack.tail].map(([blob, t]) => [blob, t.start, text(t.text)]),
    c: idx.pack.complete ? 1 : 0,
  };
  const files = [...idx.files].map(([p, e]) => withExtra<FileRow>([p, ...fields(e), text(e.excerpt)], e));
  const tombstones = [...idx.tombstones].map(([p, t]) => withExtra<TombRow>([p, ...fields(t), text(t.excerpt), times.id(t.deleted)], t));
  const data: Serialized = {
    v: VERSION,
    commit: idx.commit,
    parent: idx.parent,
    time: idx.time,
    pack,
    times: times.values,
    tags: tags.values,
    files,
    trees: [...idx.trees],
    tombstones,
  };
  // JSON escapes every newline, so the first one ends the JSON.
  // Level 1: every write stores its commit's index on its critical path, and at 10,000 notes level 1
  // deflates in about a third of level 6's time for an object about 7% larger.
  return gzipSync(Buffer.from(`${JSON.stringify(data)}\n${texts.join('')}`, 'utf8'), { level: 1 });
}

export function parseIndex(bytes: Uint8Array): NoteIndex {
  return parseIndexText(decodeIndex(bytes));
}

/**
 * A stored index's text before it is parsed: its JSON and, in version 3, the texts after it, each
 * decoded on its own (`jsonAndTexts`).
 */
export interface IndexText {
  json: string;
  texts?: string;
}

export function decodeIndex(bytes: Uint8Array): IndexText {
  return jsonAndTexts(gunzipWhole(bytes));
}

const PACK_AHEAD = '"pack":{"s":';
/**
 * Compressed bytes inflated for the head of an index: its segment ids are random hex (about two
 * bytes of text per compressed byte), so 16 KiB names over a hundred segments, far more than a
 * compacted layout holds.
 */
const HEAD_BYTES = 16 * 1024;

/**
 * The ids of the pack's segments from the first compressed bytes of a stored index, before the
 * whole of it is inflated, decoded and parsed (a search starts fetching them meanwhile): undefined
 * when they are not all there (see `segmentIdsAhead`).
 */
export function segmentIdsInHead(bytes: Uint8Array): string[] | undefined {
  try {
    return segmentIdsAhead(utf8Text(gunzipHead(bytes, HEAD_BYTES)));
  } catch {
    // Not a gzip object: the whole read reports it.
    return undefined;
  }
}

/**
 * The ids of the pack's segments, read from the head of an index's JSON without parsing the rest
 * (tens of milliseconds at 10,000 notes): undefined when the text does not start with them (an
 * index written before they came first, or without a pack) or ends before the list does.
 */
export function segmentIdsAhead(json: string): string[] | undefined {
  const at = json.indexOf(PACK_AHEAD);
  // After the version, the commit, the parent and the time: a few hundred characters at most.
  if (at < 0 || at > 400) return undefined;
  const start = at + PACK_AHEAD.length;
  // The list is rows of [hex id, count, count], followed by the tail ("t").
  const end = json.indexOf('],"t":', start);
  if (end < 0) return undefined;
  try {
    const rows = JSON.parse(json.slice(start, end + 1)) as unknown;
    if (!Array.isArray(rows) || !rows.every((r) => Array.isArray(r) && typeof r[0] === 'string')) return undefined;
    return rows.map((r: [string]) => r[0]);
  } catch {
    return undefined;
  }
}

export function parseIndexText({ json, texts }: IndexText): NoteIndex {
  if (texts === undefined) return parseV2(JSON.parse(json) as SerializedV2);
  const data = JSON.parse(json) as Serialized;
  if (data.v !== VERSION) throw new Error(`unsupported index version ${String(data.v)}`);
  const block = texts;
  let at = 0;
  const next = (length: number): string => {
    const t = block.slice(at, at + length);
    at += length;
    return t;
  };
  const entryOf = (r: FileRow | TombRow, excerpt: string, extra: Record<string, unknown> | undefined): FileEntry => {
    const e: FileEntry = { blob: r[1], size: r[2], title: r[3], tags: data.tags[r[4]], updated: data.times[r[5]], excerpt };
    return extra === undefined ? e : { ...e, ...extra };
  };
  const tail = new Map(data.pack.t.map(([blob, start, length]) => [blob, { start, text: next(length) }]));
  // A plain loop: a fresh instance runs this once, mostly before the JIT has compiled it, where
  // an array's iterator and a callback per row cost more than the row itself.
  const files = new Map<string, FileEntry>();
  const rows = data.files;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    files.set(r[0], entryOf(r, next(r[6]), r[7]));
  }
  const tombstones = new Map(data.tombstones.map((r) => [r[0], { ...entryOf(r, next(r[6]), r[8]), deleted: data.times[r[7]] }]));
  if (at !== block.length) throw new Error('index texts do not match their lengths');
  return {
    commit: data.commit,
    parent: data.parent,
    time: data.time,
    files,
    trees: new Map(data.trees),
    tombstones,
    pack: { segments: data.pack.s.map(([id, notes, chars]) => ({ id, notes, chars })), tail, complete: data.pack.c === 1 },
  };
}

function parseV2(data: SerializedV2): NoteIndex {
  if (data.v !== 2 && data.v !== 1) throw new Error(`unsupported index version ${String(data.v)}`);
  const entry = (r: FileRowV2 | TombRowV2): FileEntry => ({ blob: r[1], size: r[2], title: r[3], tags: r[4], updated: r[5], excerpt: r[6] });
  const p = data.pack;
  return {
    commit: data.commit,
    parent: data.parent,
    time: data.time,
    files: new Map(data.files.map((r) => [r[0], entry(r)])),
    trees: new Map(data.trees),
    tombstones: new Map(data.tombstones.map((r) => [r[0], { ...entry(r), deleted: r[7] }])),
    pack: p
      ? {
          segments: p.s.map(([id, notes, chars]) => ({ id, notes, chars })),
          tail: new Map(p.t.map(([blob, start, text]) => [blob, { start, text }])),
          complete: p.c === 1,
        }
      : LEGACY_PACK,
  };
}

/** Rough heap size, for the cache's byte bound. */
export function indexBytes(idx: NoteIndex): number {
  let n = 256;
  // Once per index a fresh instance loads, before the JIT has compiled it: a callback, no iterator.
  idx.files.forEach((e, p) => {
    n += 2 * (p.length + e.title.length + e.excerpt.length) + 200;
    for (let i = 0; i < e.tags.length; i++) n += 2 * e.tags[i].length;
  });
  for (const [p] of idx.tombstones) n += 2 * p.length + 400;
  n += idx.trees.size * 120;
  n += textsBytes(idx.pack.tail) + idx.pack.segments.length * 200;
  return n;
}

export function indexStats(idx: NoteIndex | null): MemoryStats {
  if (!idx) return { files: 0, folders: 0, sizeBytes: 0 };
  let sizeBytes = 0;
  for (const e of idx.files.values()) sizeBytes += e.size;
  return { files: idx.files.size, folders: Math.max(0, idx.trees.size - 1), sizeBytes };
}

export function fileEntry(blob: string, meta: NoteMeta, updated: string): FileEntry {
  return { blob, size: meta.size, title: meta.title, tags: meta.tags, updated, excerpt: meta.excerpt };
}

const FILE_MODE = '100644';
const TREE_MODE = '040000';

/**
 * Rewrites the trees on the paths from the changed notes up to the root, reusing every other tree's
 * sha from the parent index. Folders left empty disappear, as git has no empty folders.
 */
export async function rebuildTrees(
  git: GitOverlay,
  files: ReadonlyMap<string, FileEntry>,
  parentTrees: ReadonlyMap<string, string>,
  changedPaths: readonly string[],
): Promise<{ trees: Map<string, string>; root: string }> {
  const trees = new Map(parentTrees);
  const depth = (folder: string): number => (folder === '' ? 0 : folder.split('/').length);
  // Deepest first, so a folder's changed subfolders are final before the folder is written.
  const chain = [...new Set(changedPaths.flatMap(ancestorFolders))].sort((a, b) => depth(b) - depth(a));
  const children = new Map<string, TreeEntry[]>(chain.map((f) => [f, []]));
  for (const [path, e] of files) {
    children.get(parentFolder(path))?.push({ mode: FILE_MODE, path: baseName(path), oid: e.blob, type: 'blob' });
  }
  for (const folder of chain) {
    const entries = children.get(folder) as TreeEntry[];
    for (const [sub, sha] of trees) {
      if (sub !== '' && parentFolder(sub) === folder) entries.push({ mode: TREE_MODE, path: baseName(sub), oid: sha, type: 'tree' });
    }
    if (entries.length === 0 && folder !== '') {
      trees.delete(folder);
      continue;
    }
    trees.set(folder, await git.writeTree(entries));
  }
  return { trees, root: trees.get('') as string };
}
