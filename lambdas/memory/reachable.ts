import { mapLimit } from '../shared/concurrency';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';
import type { Lineages } from './lineage';
import type { MemoryRecord } from './ports';

/** Every object reachable from a commit, by kind, and what is known of their sizes before any is sent. */
export interface Reachable {
  commits: string[];
  trees: string[];
  blobs: string[];
  /** Content bytes of the commits and trees (read by the walk); blobs are not read. */
  bytes: number;
}

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
 * Commits are listed through their lineages when the history is linear (one read per 128 commits,
 * the commits themselves then read in parallel), else parents a level at a time. Trees are read a
 * level at a time in parallel (isomorphic-git's reader, which refuses a name git would refuse), and
 * each is let go once read: the walk keeps ids, never a whole history's trees. Blobs are not read.
 */
export async function reachableObjects(git: GitOverlay, lineages: Lineages, rec: MemoryRecord, head: string): Promise<Reachable> {
  const seen = new Set<string>();
  let bytes = 0;
  const commits: string[] = [];
  const roots: string[] = [];
  const read = async (c: string): Promise<{ tree: string; parents: string[] }> => {
    const { content } = await git.readObject(c);
    git.release([c]);
    bytes += content.length;
    return links(c, content);
  };
  if ((await lineages.lookup(rec, git, head))?.linear) {
    for await (const batch of lineages.firstParents(rec, git, head)) commits.push(...batch);
    for (const c of commits) seen.add(c);
    for (const l of await mapLimit(commits, READ_CONCURRENCY, read)) roots.push(l.tree);
  } else {
    let frontier = [head];
    while (frontier.length > 0) {
      const fresh = [...new Set(frontier)].filter((c) => !seen.has(c));
      for (const c of fresh) seen.add(c);
      commits.push(...fresh);
      const parsed = await mapLimit(fresh, READ_CONCURRENCY, read);
      roots.push(...parsed.map((l) => l.tree));
      frontier = parsed.flatMap((l) => l.parents);
    }
  }

  const trees: string[] = [];
  const blobs: string[] = [];
  let level = [...new Set(roots)];
  while (level.length > 0) {
    for (const t of level) seen.add(t);
    trees.push(...level);
    const read = await mapLimit(level, READ_CONCURRENCY, (t) => git.readTree(t));
    git.release(level);
    const next = new Set<string>();
    for (const entries of read) {
      for (const e of entries) {
        // The tree's own encoding of the entry: `<mode> <name>\0<20-byte id>` (a tree's mode without its leading 0).
        bytes += e.mode.replace(/^0+/, '').length + 1 + Buffer.byteLength(e.path, 'utf8') + 1 + 20;
        if (seen.has(e.oid)) continue;
        if (e.type === 'tree') next.add(e.oid);
        else if (e.type === 'blob') {
          seen.add(e.oid);
          blobs.push(e.oid);
        }
      }
    }
    level = [...next];
  }
  return { commits, trees, blobs, bytes };
}
