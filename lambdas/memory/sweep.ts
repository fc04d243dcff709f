import { randomUUID } from 'node:crypto';
import { mapLimit } from '../shared/concurrency';
import { ImmutableCache } from './cache';
import { GitOverlay, READ_CONCURRENCY } from './git-overlay';
import { PackedObjects } from './packed-objects';
import { SWEEP_TICKET_PREFIX, type BlobKind, type BlobStore, type MemoryRecord, type RevLock, type StoredItem } from './ports';

/**
 * The sweep of unreachable objects: what writes that lost a race (or ran out of time) stored and no
 * head ever came to reference. An operator's command (`npm run memory:sweep`): the functions that
 * serve memories may not delete.
 *
 * Why it can never delete a reachable object:
 * 1. It walks what the head reaches (commits, trees, blobs; the index and lineage of each of those
 *    commits) and lists the memory's stored items; the others older than `graceMs` are candidates.
 *    Segments of packed texts are never candidates: an instance may still hold an older version of
 *    an index that names segments the current one does not. Nor are the packs of large pushes
 *    (`packed-objects.ts`): a pack is kept or dropped whole, and one a lost push left stays.
 * 2. Before deleting it takes the memory's write ticket as a sweep, which also changes the record's
 *    epoch, and reads the head again: whatever landed since the walk is walked too.
 * 3. While it holds the ticket no head can move: writers of the commit loop wait for a ticket, and
 *    the rev lock refuses any move made from a record read before the ticket (another epoch) or
 *    while a sweep held it. So every commit that lands later was built from a record read after the
 *    sweep's last delete (it stops deleting well before its ticket lapses).
 * 4. Such a commit references objects reachable from its parent (never candidates) and objects its
 *    writer stored itself, after reading that record: a write's overlay never takes the instance's
 *    cache as proof that an object is stored, and a push stores every object its commits take from
 *    the memory rather than from the pack. So nothing deleted becomes reachable again.
 */

export interface SweepOptions {
  /** Unreachable items younger than this are left: a write in flight may still be using them. */
  graceMs: number;
  /** How long the sweep's ticket holds at most (writers of the memory wait meanwhile); deletes stop at half of it. */
  fenceMs: number;
  dryRun?: boolean;
  now?: () => number;
}

export const DEFAULT_SWEEP: SweepOptions = { graceMs: 60 * 60 * 1000, fenceMs: 10_000 };

export interface SweepReport {
  account: string;
  name: string;
  head: string | null;
  /** Items listed under the memory's prefix. */
  stored: number;
  /** Unreachable items older than the grace period (deleted unless a dry run). */
  orphans: number;
  /** The same by kind: an unreachable `index` is a commit that lost its race (every commit has one). */
  orphansByKind: Partial<Record<BlobKind, number>>;
  /** Unreachable items younger than the grace period, left. */
  young: number;
  deleted: number;
  /** Why nothing was deleted: a retired memory, or another writer held the ticket. */
  skipped?: 'retired' | 'busy';
}

interface Reached {
  /** Commits, trees and blobs. */
  objects: Set<string>;
  commits: Set<string>;
}

/** Adds what `heads` reach to `reached`, stopping at commits and trees it holds already. */
async function walk(git: GitOverlay, heads: readonly string[], reached: Reached): Promise<void> {
  let commits = heads.filter((c) => !reached.commits.has(c));
  const roots: string[] = [];
  while (commits.length > 0) {
    for (const c of commits) {
      reached.commits.add(c);
      reached.objects.add(c);
    }
    const read = await mapLimit(commits, READ_CONCURRENCY, (c) => git.readCommit(c));
    roots.push(...read.map((c) => c.tree));
    commits = [...new Set(read.flatMap((c) => c.parent))].filter((p) => !reached.commits.has(p));
  }
  let trees = [...new Set(roots)].filter((t) => !reached.objects.has(t));
  while (trees.length > 0) {
    for (const t of trees) reached.objects.add(t);
    const entries = (await mapLimit(trees, READ_CONCURRENCY, (t) => git.readTree(t))).flat();
    const next = new Set<string>();
    for (const e of entries) {
      if (e.type === 'tree') {
        if (!reached.objects.has(e.oid)) next.add(e.oid);
      } else reached.objects.add(e.oid);
    }
    trees = [...next];
  }
}

/** Only loose objects and the index and lineage of a commit are ever candidates (segments and packs never: see above). */
function unreachable(it: StoredItem, r: Reached): boolean {
  if (it.kind === 'object') return !r.objects.has(it.sha);
  if (it.kind === 'index' || it.kind === 'lineage') return !r.commits.has(it.sha);
  return false;
}

export async function sweepMemory(lock: RevLock, blobs: BlobStore, rec: MemoryRecord, opts: SweepOptions = DEFAULT_SWEEP): Promise<SweepReport> {
  const now = opts.now ?? Date.now;
  const report: SweepReport = { account: rec.account, name: rec.name, head: rec.head, stored: 0, orphans: 0, orphansByKind: {}, young: 0, deleted: 0 };
  if (!blobs.listStored || !blobs.deleteMany) throw new Error('this blob store cannot list or delete');
  // A private cache: the walk should neither warm nor be served by anything else. With the memory's
  // packs: a commit a large push brought is only in its pack.
  const cache = new ImmutableCache(64 * 1024 * 1024);
  const git = new GitOverlay(rec.id, blobs, cache, new PackedObjects(blobs, cache));
  const reached: Reached = { objects: new Set(), commits: new Set() };
  if (rec.head) await walk(git, [rec.head], reached);
  let candidates: StoredItem[] = [];
  const cutoff = now() - opts.graceMs;
  for await (const it of blobs.listStored(rec.id)) {
    report.stored++;
    if (!unreachable(it, reached)) continue;
    if (it.modifiedMs > cutoff) report.young++;
    else candidates.push(it);
  }
  const counted = (items: readonly StoredItem[]): Pick<SweepReport, 'orphans' | 'orphansByKind'> => {
    const byKind: Partial<Record<BlobKind, number>> = {};
    for (const it of items) byKind[it.kind] = (byKind[it.kind] ?? 0) + 1;
    return { orphans: items.length, orphansByKind: byKind };
  };
  if (rec.state !== 'active') return { ...report, ...counted(candidates), skipped: 'retired' };
  if (candidates.length === 0 || opts.dryRun) return { ...report, ...counted(candidates) };

  const holder = `${SWEEP_TICKET_PREFIX}${randomUUID()}`;
  const start = now();
  const fence = await lock.takeTicket(rec.account, rec.name, { holder, untilMs: start + opts.fenceMs }, start);
  if (!fence.taken) return { ...report, ...counted(candidates), skipped: fence.current?.state === 'retired' ? 'retired' : 'busy' };
  try {
    // What landed between the walk and the ticket is reachable too.
    if (fence.current.head && fence.current.head !== rec.head) {
      await walk(git, [fence.current.head], reached);
      candidates = candidates.filter((it) => unreachable(it, reached));
    }
    report.head = fence.current.head;
    Object.assign(report, counted(candidates));
    const stopAt = start + opts.fenceMs / 2;
    for (let i = 0; i < candidates.length && now() < stopAt; i += 1000) {
      const chunk = candidates.slice(i, i + 1000);
      await blobs.deleteMany(rec.id, chunk);
      report.deleted += chunk.length;
    }
  } finally {
    await lock.dropTicket(rec.account, rec.name, holder);
  }
  return report;
}
