import type { ImmutableCache } from './cache';
import type { GitOverlay } from './git-overlay';
import type { BlobItem, BlobStore, MemoryRecord } from './ports';

/**
 * The lineage of a commit: its parents, its first-parent depth, its generation number and its
 * nearest first-parent ancestors. A history walk over git commit objects is one sequential GET per
 * commit (each names the next); a lineage names the next CHAIN commits at once, so history pages,
 * `?rev=` reads, clones and fetches walk a thousand commits in eight sequential reads and fetch the
 * commits themselves in parallel. Like the per-commit index, it is derived, immutable and named by
 * its commit (`m/<id>/lineage/<sha>`), written in the same PUT wave as the commit it describes, and
 * computed from the commit objects when missing (history written before lineages existed).
 */
export const CHAIN = 128;

export interface Lineage {
  commit: string;
  parents: string[];
  /** Commits on the first-parent path to the root, this one included (the root is 1). */
  depth: number;
  /** Generation number: 1 + the largest of the parents' (the root is 1); an ancestor's is always smaller. */
  gen: number;
  /** True when neither this commit nor any of its ancestors is a merge: the history is one line. */
  linear: boolean;
  /** First-parent ancestors, nearest first, at most CHAIN. */
  chain: string[];
}

const MAGIC = 0x4c; // 'L'
const VERSION = 1;

export function serializeLineage(l: Lineage): Uint8Array {
  const buf = Buffer.alloc(2 + 4 + 4 + 1 + 1 + 20 * l.parents.length + 2 + 20 * l.chain.length);
  let o = 0;
  buf[o++] = MAGIC;
  buf[o++] = VERSION;
  buf.writeUInt32BE(l.depth, o);
  o += 4;
  buf.writeUInt32BE(l.gen, o);
  o += 4;
  buf[o++] = l.linear ? 1 : 0;
  buf[o++] = l.parents.length;
  for (const p of l.parents) o += Buffer.from(p, 'hex').copy(buf, o);
  buf.writeUInt16BE(l.chain.length, o);
  o += 2;
  for (const c of l.chain) o += Buffer.from(c, 'hex').copy(buf, o);
  return buf;
}

export function parseLineage(commit: string, bytes: Uint8Array): Lineage {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf[0] !== MAGIC || buf[1] !== VERSION) throw new Error(`unsupported lineage record of ${commit}`);
  let o = 2;
  const depth = buf.readUInt32BE(o);
  o += 4;
  const gen = buf.readUInt32BE(o);
  o += 4;
  const linear = buf[o++] === 1;
  const nParents = buf[o++];
  const parents: string[] = [];
  for (let i = 0; i < nParents; i++, o += 20) parents.push(buf.subarray(o, o + 20).toString('hex'));
  const nChain = buf.readUInt16BE(o);
  o += 2;
  const chain: string[] = [];
  for (let i = 0; i < nChain; i++, o += 20) chain.push(buf.subarray(o, o + 20).toString('hex'));
  return { commit, parents, depth, gen, linear, chain };
}

/** The lineage of a new commit from those of its parents (in the commit's parent order). */
export function childLineage(commit: string, parents: readonly Lineage[]): Lineage {
  const first = parents[0];
  return {
    commit,
    parents: parents.map((p) => p.commit),
    depth: first ? first.depth + 1 : 1,
    gen: 1 + parents.reduce((g, p) => Math.max(g, p.gen), 0),
    linear: parents.length <= 1 && (first ? first.linear : true),
    chain: first ? [first.commit, ...first.chain].slice(0, CHAIN) : [],
  };
}

/** Commits visited at most by one ancestry search through merges (a linear history never needs one). */
const MAX_DAG_VISITS = 20_000;

export class Lineages {
  constructor(
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
  ) {}

  /** The stored lineage of `commit`, or undefined when none is stored. */
  async load(rec: MemoryRecord, commit: string): Promise<Lineage | undefined> {
    return this.cache.getOrLoad(
      key(rec, commit),
      async () => {
        const bytes = await this.blobs.get(rec.id, 'lineage', commit);
        return bytes ? parseLineage(commit, bytes) : undefined;
      },
      (l) => 160 + 48 * (l.chain.length + l.parents.length),
    );
  }

  items(lineages: readonly Lineage[]): BlobItem[] {
    return lineages.map((l) => ({ kind: 'lineage' as const, sha: l.commit, body: serializeLineage(l) }));
  }

  /** Once stored: readable without a fetch from now on. */
  remember(rec: MemoryRecord, lineages: readonly Lineage[]): void {
    for (const l of lineages) this.cache.set(key(rec, l.commit), l, 160 + 48 * (l.chain.length + l.parents.length));
  }

  /**
   * The lineage of an existing commit, and the records computed on the way because storage lacked
   * them (history written before lineages existed): the caller stores those in its next wave, or
   * `ensureStored` does. Undefined when `commit` is not a commit of this memory.
   */
  async ensure(rec: MemoryRecord, git: GitOverlay, commit: string): Promise<{ lineage: Lineage; created: Lineage[] } | undefined> {
    const known = await this.load(rec, commit);
    if (known) return { lineage: known, created: [] };
    if (!(await isCommit(git, commit))) return undefined;
    const memo = new Map<string, Lineage>();
    const created: Lineage[] = [];
    const stack = [commit];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (memo.has(top)) {
        stack.pop();
        continue;
      }
      const parents = (await git.readCommit(top)).parent;
      const found = await Promise.all(parents.map(async (p) => memo.get(p) ?? (await this.load(rec, p))));
      const missing = parents.filter((_, i) => !found[i]);
      if (missing.length > 0) {
        stack.push(...missing);
        continue;
      }
      const l = childLineage(top, found as Lineage[]);
      memo.set(top, l);
      created.push(l);
      stack.pop();
    }
    this.remember(rec, created);
    return { lineage: memo.get(commit) as Lineage, created };
  }

  /** `ensure`, storing what it had to compute (a read path's one-time repair of old history). */
  async lookup(rec: MemoryRecord, git: GitOverlay, commit: string): Promise<Lineage | undefined> {
    const out = await this.ensure(rec, git, commit);
    if (out && out.created.length > 0) await this.blobs.putMany(rec.id, this.items(out.created));
    return out?.lineage;
  }

  /** The commit `steps` first parents back from `from` (undefined past the root). */
  async stepBack(rec: MemoryRecord, git: GitOverlay, from: Lineage, steps: number): Promise<string | undefined> {
    let l = from;
    let left = steps;
    for (;;) {
      if (left === 0) return l.commit;
      if (left <= l.chain.length) return l.chain[left - 1];
      if (l.chain.length < CHAIN) return undefined;
      left -= CHAIN;
      const next = await this.lookup(rec, git, l.chain[CHAIN - 1]);
      if (!next) throw new Error(`lineage of ${l.chain[CHAIN - 1]} is missing`);
      l = next;
    }
  }

  /**
   * The first-parent history from `head` (included), newest first, a batch of up to CHAIN + 1
   * commits per lineage read.
   */
  async *firstParents(rec: MemoryRecord, git: GitOverlay, head: string): AsyncGenerator<string[]> {
    let l = await this.lookup(rec, git, head);
    if (!l) throw new Error(`commit ${head} has no lineage`);
    yield [head, ...l.chain];
    while (l.chain.length === CHAIN) {
      const last = l.chain[CHAIN - 1];
      l = await this.lookup(rec, git, last);
      if (!l) throw new Error(`commit ${last} has no lineage`);
      if (l.chain.length > 0) yield l.chain;
    }
  }

  /**
   * Is `ancestor` reachable from `head` (or equal to it)? Along first parents it costs one lineage
   * read per CHAIN commits between them; off that path (a commit of a merged side branch) a search
   * through the parents that never goes below the ancestor's generation, bounded by MAX_DAG_VISITS.
   */
  async isAncestor(rec: MemoryRecord, git: GitOverlay, ancestor: string, head: string): Promise<boolean> {
    if (ancestor === head) return true;
    const [a, h] = await Promise.all([this.lookup(rec, git, ancestor), this.lookup(rec, git, head)]);
    if (!a || !h || a.gen >= h.gen) return false;
    if (h.depth > a.depth && (await this.stepBack(rec, git, h, h.depth - a.depth)) === ancestor) return true;
    if (h.linear) return false;
    const seen = new Set<string>([head]);
    let frontier = h.parents;
    while (frontier.length > 0 && seen.size < MAX_DAG_VISITS) {
      const fresh = [...new Set(frontier)].filter((c) => !seen.has(c));
      for (const c of fresh) seen.add(c);
      if (fresh.includes(ancestor)) return true;
      const ls = await Promise.all(fresh.map((c) => this.lookup(rec, git, c)));
      frontier = ls.flatMap((l) => (l && l.gen > a.gen ? l.parents : []));
    }
    return false;
  }
}

async function isCommit(git: GitOverlay, oid: string): Promise<boolean> {
  if (!(await git.has(oid))) return false;
  try {
    await git.readCommit(oid);
    return true;
  } catch {
    return false;
  }
}

const key = (rec: MemoryRecord, commit: string): string => `l:${rec.id}:${commit}`;
