import { mapLimit } from '../shared/concurrency';
import { ImmutableCache } from './cache';
import { GitOverlay, READ_CONCURRENCY } from './git-overlay';
import { PackedObjects } from './packed-objects';
import type { BlobStore, MemoryRecord } from './ports';
import { objectKey } from './tables';

/**
 * The check after a restore (README, "Restore"): a rev-table item restored to a point in time names
 * a head commit; every object that commit reaches must still be in the memory bucket. The memory
 * functions never delete objects, so after a point-in-time restore of the table the answer is
 * normally "all there"; an object deleted by other means is reported by its S3 key, which the
 * bucket's versions bring back. A missing index is reported too but is no damage: the core rebuilds
 * an index it does not find.
 */
export interface HistoryReport {
  account: string;
  name: string;
  state: MemoryRecord['state'];
  head: string | null;
  /** Objects found (commits, trees, blobs reachable from the head). */
  objects: number;
  /** Reachable objects that are not in the bucket, with their keys. */
  missing: Array<{ sha: string; key: string }>;
  /** The head commit's index is not in the bucket (it is rebuilt on the next read). */
  indexMissing: boolean;
}

export async function checkHistory(blobs: BlobStore, rec: MemoryRecord): Promise<HistoryReport> {
  const report: HistoryReport = { account: rec.account, name: rec.name, state: rec.state, head: rec.head, objects: 0, missing: [], indexMissing: false };
  if (!rec.head) return report;
  // A private cache: this walk should not warm (or be served by) anything else.
  const cache = new ImmutableCache(64 * 1024 * 1024);
  const git = new GitOverlay(rec.id, blobs, cache, new PackedObjects(blobs, cache));
  const seen = new Set<string>();
  const missing = (sha: string) => report.missing.push({ sha, key: objectKey(rec.id, 'object', sha) });
  const present = async (shas: string[]): Promise<string[]> => {
    const fresh = [...new Set(shas)].filter((s) => !seen.has(s));
    for (const s of fresh) seen.add(s);
    const found = await mapLimit(fresh, READ_CONCURRENCY, async (s) => ({ s, ok: await git.prefetch(s) }));
    for (const f of found) if (!f.ok) missing(f.s);
    const here = found.filter((f) => f.ok).map((f) => f.s);
    report.objects += here.length;
    return here;
  };

  let commits = [rec.head];
  const roots: string[] = [];
  while (commits.length > 0) {
    const here = await present(commits);
    const read = await mapLimit(here, READ_CONCURRENCY, (c) => git.readCommit(c));
    commits = read.flatMap((c) => c.parent);
    roots.push(...read.map((c) => c.tree));
  }
  let trees = roots;
  while (trees.length > 0) {
    const here = await present(trees);
    const entries = (await mapLimit(here, READ_CONCURRENCY, (t) => git.readTree(t))).flat();
    await present(entries.filter((e) => e.type === 'blob').map((e) => e.oid));
    trees = entries.filter((e) => e.type === 'tree').map((e) => e.oid);
  }
  report.indexMissing = (await blobs.get(rec.id, 'index', rec.head)) === undefined;
  return report;
}
