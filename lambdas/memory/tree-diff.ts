import type { TreeEntry } from 'isomorphic-git';
import { comparePaths } from './listing';

/**
 * What changed between two git trees, and which of those changes are renames. Only trees whose
 * ids differ are read (an unchanged folder is one comparison), every level of a walk in parallel,
 * so a change of one note reads the trees on its path and nothing else.
 */

/** One file that differs between the trees; a missing side is an addition or a deletion. */
export interface BlobChange {
  path: string;
  oldBlob?: string;
  newBlob?: string;
  oldMode?: string;
  newMode?: string;
}

export type ChangeKind = 'added' | 'modified' | 'deleted' | 'renamed';

export interface Change {
  path: string;
  change: ChangeKind;
  /** The path before a rename. */
  from?: string;
  oldBlob?: string;
  newBlob?: string;
  /** For a rename: how alike the two versions are, in percent (100: the same blob). */
  similarity?: number;
}

/** Where trees are read from: the overlay (`GitOverlay`), or a push's own trees before it (`push.ts`). */
export interface TreeReader {
  readTree(oid: string): Promise<TreeEntry[]>;
}

export interface DiffOptions {
  /** Called with every tree read on the new side (changed folders only): a push validates them here. */
  onNewTree?: (oid: string, folder: string, entries: TreeEntry[]) => void | Promise<void>;
}

const TREE = 'tree';
const READS_IN_FLIGHT = 32;

/** Every file that differs between `oldTree` and `newTree` (either may be null: the empty tree), in path order. */
export async function diffTrees(git: TreeReader, oldTree: string | null, newTree: string | null, opts: DiffOptions = {}): Promise<BlobChange[]> {
  const out: BlobChange[] = [];
  const slots = semaphore(READS_IN_FLIGHT);
  const read = (oid: string | null): Promise<TreeEntry[]> => (oid ? slots(() => git.readTree(oid)) : Promise.resolve([]));
  const walk = async (a: string | null, b: string | null, folder: string): Promise<void> => {
    if (a === b) return;
    const [old, now] = await Promise.all([read(a), read(b)]);
    if (b && opts.onNewTree) await opts.onNewTree(b, folder, now);
    const olds = new Map(old.map((e) => [e.path, e]));
    const nows = new Map(now.map((e) => [e.path, e]));
    const sub: Array<Promise<void>> = [];
    for (const name of new Set([...olds.keys(), ...nows.keys()])) {
      const x = olds.get(name);
      const y = nows.get(name);
      if (x && y && x.oid === y.oid && x.mode === y.mode) continue;
      const path = folder === '' ? name : `${folder}/${name}`;
      const xTree = x?.type === TREE ? x.oid : null;
      const yTree = y?.type === TREE ? y.oid : null;
      if (xTree || yTree) sub.push(walk(xTree, yTree, path));
      const xBlob = x && x.type !== TREE ? x : undefined;
      const yBlob = y && y.type !== TREE ? y : undefined;
      if (xBlob || yBlob) {
        out.push({
          path,
          ...(xBlob && { oldBlob: xBlob.oid, oldMode: xBlob.mode }),
          ...(yBlob && { newBlob: yBlob.oid, newMode: yBlob.mode }),
        });
      }
    }
    await Promise.all(sub);
  };
  await walk(oldTree, newTree, '');
  return out.sort((p, q) => comparePaths(p.path, q.path));
}

/** The blob at `path` in `tree`, or undefined (a folder or nothing is there). */
export async function blobAt(git: TreeReader, tree: string, path: string): Promise<string | undefined> {
  const segments = path.split('/');
  let oid = tree;
  for (let i = 0; i < segments.length; i++) {
    const entry = (await git.readTree(oid)).find((e) => e.path === segments[i]);
    if (!entry) return undefined;
    const last = i === segments.length - 1;
    if (last) return entry.type === TREE ? undefined : entry.oid;
    if (entry.type !== TREE) return undefined;
    oid = entry.oid;
  }
  return undefined;
}

export interface RenameOptions {
  /** Reads a blob's text, for renames between versions that differ (not needed for exact ones). */
  text: (blob: string) => Promise<string>;
  /** At most this many additions × deletions are compared by content (git's `diff.renameLimit` idea). */
  maxPairs?: number;
  /** Least similarity, in percent, of a rename whose content changed (git's default is 50). */
  minSimilarity?: number;
}

/**
 * Pairs deleted and added files into renames as git does: the same blob first (exact renames),
 * then versions at least `minSimilarity` percent alike, best pairs first. What remains stays an
 * addition or a deletion. Deterministic: equal inputs always pair the same way.
 */
export async function detectRenames(changes: readonly BlobChange[], opts: RenameOptions): Promise<Change[]> {
  const added = changes.filter((c) => c.newBlob && !c.oldBlob);
  const deleted = changes.filter((c) => c.oldBlob && !c.newBlob);
  const renamedTo = new Map<string, { from: BlobChange; similarity: number }>();
  const used = new Set<string>();
  const byBlob = new Map<string, BlobChange[]>();
  for (const d of deleted) byBlob.set(d.oldBlob as string, [...(byBlob.get(d.oldBlob as string) ?? []), d]);
  for (const a of added) {
    const d = (byBlob.get(a.newBlob as string) ?? []).find((x) => !used.has(x.path));
    if (!d) continue;
    used.add(d.path);
    renamedTo.set(a.path, { from: d, similarity: 100 });
  }
  const restA = added.filter((a) => !renamedTo.has(a.path));
  const restD = deleted.filter((d) => !used.has(d.path));
  const maxPairs = opts.maxPairs ?? 10_000;
  if (restA.length > 0 && restD.length > 0 && restA.length * restD.length <= maxPairs) {
    const min = opts.minSimilarity ?? 50;
    const texts = new Map<string, string>();
    for (const blob of new Set([...restA.map((a) => a.newBlob as string), ...restD.map((d) => d.oldBlob as string)])) texts.set(blob, await opts.text(blob));
    const pairs: Array<{ a: BlobChange; d: BlobChange; score: number }> = [];
    for (const a of restA) {
      for (const d of restD) {
        const score = similarity(texts.get(d.oldBlob as string) as string, texts.get(a.newBlob as string) as string);
        if (score >= min) pairs.push({ a, d, score });
      }
    }
    pairs.sort((p, q) => q.score - p.score || comparePaths(p.a.path, q.a.path) || comparePaths(p.d.path, q.d.path));
    for (const { a, d, score } of pairs) {
      if (renamedTo.has(a.path) || used.has(d.path)) continue;
      used.add(d.path);
      renamedTo.set(a.path, { from: d, similarity: score });
    }
  }
  const out: Change[] = [];
  for (const c of changes) {
    if (c.oldBlob && c.newBlob) out.push({ path: c.path, change: 'modified', oldBlob: c.oldBlob, newBlob: c.newBlob });
    else if (c.newBlob) {
      const r = renamedTo.get(c.path);
      out.push(
        r
          ? { path: c.path, change: 'renamed', from: r.from.path, oldBlob: r.from.oldBlob, newBlob: c.newBlob, similarity: r.similarity }
          : { path: c.path, change: 'added', newBlob: c.newBlob },
      );
    } else if (!used.has(c.path)) out.push({ path: c.path, change: 'deleted', oldBlob: c.oldBlob });
  }
  return out;
}

/**
 * How much of two texts is the same, in percent of the larger, after git's `diffcore-delta`: both
 * are cut into chunks at each line break (or every 64 characters), and the characters of the chunks
 * they share count.
 */
export function similarity(a: string, b: string): number {
  const max = Math.max(a.length, b.length);
  if (max === 0) return 100;
  const ca = chunks(a);
  let common = 0;
  for (const [chunk, n] of chunks(b)) common += Math.min(n, ca.get(chunk) ?? 0) * chunk.length;
  return Math.floor((100 * common) / max);
}

function chunks(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\n' || i - start === 63) {
      const c = text.slice(start, i + 1);
      out.set(c, (out.get(c) ?? 0) + 1);
      start = i + 1;
    }
  }
  if (start < text.length) {
    const c = text.slice(start);
    out.set(c, (out.get(c) ?? 0) + 1);
  }
  return out;
}

function semaphore(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (fn) => {
    while (active >= n) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
