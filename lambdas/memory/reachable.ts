import { mapLimit } from '../shared/concurrency';
import { READ_CONCURRENCY, type GitOverlay } from './git-overlay';

/**
 * Every object reachable from `head`, commits first, each loaded into `git` once, in parallel waves
 * (one wave per history level and per tree depth) rather than the object-by-object walk
 * isomorphic-git would make. What a bundle packs, and what a clone over git's smart HTTP would send.
 */
export async function reachableObjects(git: GitOverlay, head: string): Promise<string[]> {
  const seen = new Set<string>();
  const order: string[] = [];
  const roots: string[] = [];
  let commits = [head];
  while (commits.length > 0) {
    const fresh = commits.filter((c) => !seen.has(c));
    for (const c of fresh) seen.add(c);
    const read = await mapLimit(fresh, READ_CONCURRENCY, (c) => git.readCommit(c));
    order.push(...fresh);
    commits = [];
    for (const c of read) {
      roots.push(c.tree);
      commits.push(...c.parent);
    }
  }
  let level = [...new Set(roots)].filter((t) => !seen.has(t));
  while (level.length > 0) {
    for (const t of level) seen.add(t);
    order.push(...level);
    const trees = await mapLimit(level, READ_CONCURRENCY, (t) => git.readTree(t));
    const next = new Set<string>();
    const blobs: string[] = [];
    for (const entries of trees) {
      for (const e of entries) {
        if (seen.has(e.oid)) continue;
        if (e.type === 'tree') next.add(e.oid);
        else if (e.type === 'blob') {
          seen.add(e.oid);
          blobs.push(e.oid);
        }
      }
    }
    await mapLimit(blobs, READ_CONCURRENCY, async (b) => {
      if (!(await git.prefetch(b))) throw new Error(`object ${b} is missing from storage`);
    });
    order.push(...blobs);
    level = [...next];
  }
  return order;
}
