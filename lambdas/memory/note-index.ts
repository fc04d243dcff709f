import { gunzipSync, gzipSync } from 'node:zlib';
import type { TreeEntry } from 'isomorphic-git';
import type { GitOverlay } from './git-overlay';
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

/** Version 2 added the packed texts; version 1 indexes are read as having none. */
const VERSION = 2;
type FileRow = [string, string, number, string, string[], string, string];
type TombRow = [...FileRow, string];

interface Serialized {
  v: number;
  commit: string;
  parent: string | null;
  time: string;
  files: FileRow[];
  trees: Array<[string, string]>;
  tombstones: TombRow[];
  /** Segments as [id, notes, chars], the tail as [blob, body start, text], complete as 0 or 1. */
  pack?: { s: Array<[string, number, number]>; t: Array<[string, number, string]>; c: 0 | 1 };
}

const row = (path: string, e: FileEntry): FileRow => [path, e.blob, e.size, e.title, e.tags, e.updated, e.excerpt];
const entry = (r: FileRow | TombRow): FileEntry => ({ blob: r[1], size: r[2], title: r[3], tags: r[4], updated: r[5], excerpt: r[6] });

export function serializeIndex(idx: NoteIndex): Uint8Array {
  // The pack's segment list comes first, before the files: a reader can start fetching the segments
  // from the first bytes of the text while it parses the rest (`segmentIdsAhead`).
  const data: Serialized = {
    v: VERSION,
    commit: idx.commit,
    parent: idx.parent,
    time: idx.time,
    pack: {
      s: idx.pack.segments.map((r) => [r.id, r.notes, r.chars]),
      t: [...idx.pack.tail].map(([blob, t]) => [blob, t.start, t.text]),
      c: idx.pack.complete ? 1 : 0,
    },
    files: [...idx.files].map(([p, e]) => row(p, e)),
    trees: [...idx.trees],
    tombstones: [...idx.tombstones].map(([p, t]): TombRow => [...row(p, t), t.deleted]),
  };
  // Level 1: every write stores its commit's index on its critical path, and at 10,000 notes level 1
  // deflates the JSON in about a third of level 6's time for an object about 7% larger.
  return gzipSync(Buffer.from(JSON.stringify(data), 'utf8'), { level: 1 });
}

export function parseIndex(bytes: Uint8Array): NoteIndex {
  return parseIndexText(decodeIndex(bytes));
}

/** A stored index's text (the JSON), before it is parsed. */
export function decodeIndex(bytes: Uint8Array): string {
  return gunzipSync(bytes).toString('utf8');
}

const PACK_AHEAD = '"pack":{"s":';

/**
 * The ids of the pack's segments, read from the head of an index's text without parsing the rest
 * (tens of milliseconds at 10,000 notes): undefined when the text does not start with them (an
 * index written before they came first, or without a pack).
 */
export function segmentIdsAhead(text: string): string[] | undefined {
  const at = text.indexOf(PACK_AHEAD);
  // After the version, the commit, the parent and the time: a few hundred characters at most.
  if (at < 0 || at > 400) return undefined;
  const start = at + PACK_AHEAD.length;
  // The list is rows of [hex id, count, count], followed by the tail ("t").
  const end = text.indexOf('],"t":', start);
  if (end < 0) return undefined;
  try {
    const rows = JSON.parse(text.slice(start, end + 1)) as unknown;
    if (!Array.isArray(rows) || !rows.every((r) => Array.isArray(r) && typeof r[0] === 'string')) return undefined;
    return rows.map((r: [string]) => r[0]);
  } catch {
    return undefined;
  }
}

export function parseIndexText(text: string): NoteIndex {
  const data = JSON.parse(text) as Serialized;
  if (data.v !== VERSION && data.v !== 1) throw new Error(`unsupported index version ${String(data.v)}`);
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
  for (const [p, e] of idx.files) n += 2 * (p.length + e.title.length + e.excerpt.length + e.tags.join('').length) + 200;
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
