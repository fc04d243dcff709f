import { createHash } from 'node:crypto';
import { mapLimit } from '../shared/concurrency';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import type { IndexStore } from './index-store';
import type { Lineages } from './lineage';
import type { FileEntry, NoteIndex } from './note-index';
import { baseName, parentFolder } from './paths';
import type { MemoryRecord } from './ports';

/** Every object reachable from a commit, by kind, and what is known of their sizes before any is sent. */
export interface Reachable {
  commits: string[];
  trees: string[];
  blobs: string[];
  /** Content bytes of the commits and trees. */
  bytes: number;
  /** Content bytes of the blobs whose size an index gave (the others are not read). */
  blobSizes: Map<string, number>;
}

/**
 * A commit that brings at least this many trees the walk has not met is listed from its index: one
 * GET and a parse (about 40 ms at 10,000 notes) rather than that many tree reads (at least a wave of
 * `READ_CONCURRENCY` reads, and one more per level of folders below).
 */
export const INDEX_WORTH = 32;

const HEADER_END = Buffer.from('\n\n');

/** A commit's tree and parents, from the header lines of its content. */
function links(oid: string, content: Uint8Array): { tree: string; parents: string[] } {
  const buf = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const end = buf.indexOf(HEADER_END);
  let tree: string | undefined;
  const parents: string[] = [];
  for (const line of buf.toString('latin1', 0, end < 0 ? buf.length : end).split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
  }
  if (!tree) throw new Error(`commit ${oid} names no tree`);
  return { tree, parents };
}

/**
 * Every object reachable from `head`, commits first, then trees, then blobs: what a bundle packs.
 *
 * Commits are listed through their lineages when the history is linear (one read per 128 commits,
 * the commits themselves then read in parallel), else parents a level at a time. Trees come from the
 * commits' indexes where they can: an index names every folder's tree and every note's blob and size,
 * and each folder's tree is rebuilt from it and checked against the tree id the index names, so a
 * folder the index accounts for is not read at all. That is the head's index, and the index of any
 * older commit that brings `INDEX_WORTH` trees or more not met yet (an import). The other trees (of a
 * commit that changed a few folders, a folder holding what its index does not list, or a name git
 * might refuse) are read a level at a time in parallel, by isomorphic-git's reader, which refuses a
 * name git would refuse, and let go once read.
 */
export async function reachableObjects(git: GitOverlay, lineages: Lineages, indexes: IndexStore, rec: MemoryRecord, head: string): Promise<Reachable> {
  const seen = new Set<string>();
  let bytes = 0;
  const commits: string[] = [];
  const roots = new Map<string, string>();
  const read = async (c: string): Promise<{ tree: string; parents: string[] }> => {
    const { content } = await git.readObject(c);
    git.release([c]);
    bytes += content.length;
    const l = links(c, content);
    roots.set(c, l.tree);
    return l;
  };
  if ((await lineages.lookup(rec, git, head))?.linear) {
    for await (const batch of lineages.firstParents(rec, git, head)) commits.push(...batch);
    for (const c of commits) seen.add(c);
    await mapLimit(commits, READ_CONCURRENCY, read);
  } else {
    let frontier = [head];
    while (frontier.length > 0) {
      const fresh = [...new Set(frontier)].filter((c) => !seen.has(c));
      for (const c of fresh) seen.add(c);
      commits.push(...fresh);
      frontier = (await mapLimit(fresh, READ_CONCURRENCY, read)).flatMap((l) => l.parents);
    }
  }

  const trees: string[] = [];
  const blobs: string[] = [];
  const blobSizes = new Map<string, number>();
  /** The commit whose walk found each tree still to read. */
  const origin = new Map<string, string>();
  const indexed = new Set<string>();
  // One index in memory at a time: a history's indexes together could outweigh the memory itself.
  const fromIndex = async (c: string): Promise<string[]> => {
    indexed.add(c);
    const view = indexView(await indexes.load(rec, c));
    // A root the index does not account for is read as any other tree.
    if (view.root !== roots.get(c)) return [];
    for (const [sha, size] of view.trees) {
      if (seen.has(sha)) continue;
      seen.add(sha);
      trees.push(sha);
      bytes += size;
    }
    for (const [blob, size] of view.blobs) {
      if (seen.has(blob)) continue;
      seen.add(blob);
      blobs.push(blob);
      blobSizes.set(blob, size);
    }
    for (const t of view.unaccounted) origin.set(t, c);
    return view.unaccounted;
  };

  let level = await fromIndex(head);
  for (const c of commits) {
    const root = roots.get(c) as string;
    if (!origin.has(root)) origin.set(root, c);
    level.push(root);
  }
  while (true) {
    // A commit that brought many trees the walk has not met (an import) is listed from its own index:
    // one GET instead of waves of reads, level after level.
    const found = new Map<string, number>();
    for (const t of level) {
      if (seen.has(t)) continue;
      const c = origin.get(t) as string;
      found.set(c, (found.get(c) ?? 0) + 1);
    }
    for (const [c, count] of found) if (count >= INDEX_WORTH && !indexed.has(c)) level.push(...(await fromIndex(c)));
    level = [...new Set(level)].filter((t) => !seen.has(t));
    if (level.length === 0) break;
    for (const t of level) seen.add(t);
    trees.push(...level);
    const entries = await mapLimit(level, READ_CONCURRENCY, (t) => git.readTree(t));
    git.release(level);
    const next = new Set<string>();
    entries.forEach((list, i) => {
      for (const e of list) {
        bytes += entryBytes(e.mode.replace(/^0+/, ''), e.path);
        if (seen.has(e.oid)) continue;
        if (e.type === 'tree') {
          next.add(e.oid);
          if (!origin.has(e.oid)) origin.set(e.oid, origin.get(level[i]) as string);
        } else if (e.type === 'blob') {
          seen.add(e.oid);
          blobs.push(e.oid);
        }
      }
    });
    level = [...next];
  }
  return { commits, trees, blobs, bytes, blobSizes };
}

/** A tree entry's bytes in its tree: `<mode> <name>\0<20-byte id>`. */
const entryBytes = (mode: string, name: string): number => mode.length + 1 + Buffer.byteLength(name, 'utf8') + 1 + 20;

interface IndexView {
  /** The root tree's id, when the index accounts for it. */
  root: string | undefined;
  /** Trees the index accounts for (each rebuilt from it to its own id), with their content sizes. */
  trees: Map<string, number>;
  /** Blobs in those trees, with their sizes. */
  blobs: Map<string, number>;
  /** Trees whose content is not what the index lists (read them instead). */
  unaccounted: string[];
}

/**
 * The objects of a commit as its index lists them. Each folder's tree is written out from the index
 * (its notes as `100644` blobs, its subfolders as `40000` trees, in git's order) and hashed: only a
 * folder whose tree id matches the id the index names is taken from it; any other (a file the index
 * does not list, another mode) is left to be read, and with it everything under it.
 */
function indexView(index: NoteIndex): IndexView {
  interface Entry {
    path: string;
    name: Buffer;
    mode: '100644' | '40000';
    id: string;
  }
  const children = new Map<string, Entry[]>();
  const add = (path: string, mode: Entry['mode'], id: string): void => {
    const folder = parentFolder(path);
    const entry = { path, name: Buffer.from(baseName(path), 'utf8'), mode, id };
    const list = children.get(folder);
    if (list) list.push(entry);
    else children.set(folder, [entry]);
  };
  for (const [path, e] of index.files) add(path, '100644', e.blob);
  for (const [folder, sha] of index.trees) if (folder !== '') add(folder, '40000', sha);
  const view: IndexView = { root: undefined, trees: new Map(), blobs: new Map(), unaccounted: [] };
  const take = (folder: string, sha: string): void => {
    const entries = (children.get(folder) ?? []).sort(gitOrder);
    // A name git might refuse is left to the reader that refuses it (the export is then a 409).
    if (entries.some((e) => MAYBE_REFUSED.test(e.path.slice(e.path.lastIndexOf('/') + 1)))) {
      view.unaccounted.push(sha);
      return;
    }
    const content = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} `), e.name, Buffer.from([0]), Buffer.from(e.id, 'hex')]));
    if (createHash('sha1').update(`tree ${content.length}\0`).update(content).digest('hex') !== sha) {
      view.unaccounted.push(sha);
      return;
    }
    view.trees.set(sha, content.length);
    for (const e of entries) {
      if (e.mode === '40000') take(e.path, e.id);
      else view.blobs.set(e.id, (index.files.get(e.path) as FileEntry).size);
    }
  };
  const root = index.trees.get('');
  if (root) {
    take('', root);
    if (view.trees.has(root)) view.root = root;
  }
  return view;
}

/** git's order of tree entries: by name bytes, a tree's name compared as if it ended with `/`. */
function gitOrder(a: { name: Buffer; mode: string }, b: { name: Buffer; mode: string }): number {
  const x = a.mode === '40000' ? Buffer.concat([a.name, SLASH]) : a.name;
  const y = b.mode === '40000' ? Buffer.concat([b.name, SLASH]) : b.name;
  return Buffer.compare(x, y);
}

const SLASH = Buffer.from('/');

/**
 * Names isomorphic-git's tree reader may refuse (git's `.git` in its NTFS and HFS+ spellings,
 * separators, `.` and `..`), broadly: any name with `git` in it, a backslash, a colon or a code
 * point HFS+ ignores. Such a folder's tree is read rather than taken from the index.
 */
const MAYBE_REFUSED = /git|[\\:\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]|^\.\.?$/i;
