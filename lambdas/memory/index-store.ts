import type { ImmutableCache } from './cache';
import type { MemoryLimits } from './config';
import type { GitOverlay } from './git-overlay';
import { describeNote } from './markdown';
import { fileEntry, indexBytes, parseIndex, serializeIndex, type FileEntry, type NoteIndex } from './note-index';
import type { BlobItem, BlobStore, MemoryRecord } from './ports';

/**
 * Where the per-commit note index comes from and goes to. An interface, so the way indexes (and
 * later, packed search segments built beside them) are stored can change without touching the
 * commit loop or the readers.
 */
export interface IndexStore {
  /** The index of `commit`: from this instance's cache, from storage, or rebuilt from the tree. */
  load(rec: MemoryRecord, commit: string): Promise<NoteIndex>;
  /** The items a new commit's PUT wave stores for its index. */
  items(index: NoteIndex): BlobItem[];
  /** Called once the wave landed: the index is readable without a fetch from now on. */
  remember(rec: MemoryRecord, index: NoteIndex): void;
}

export const isoSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** The index as a gzipped JSON object per commit (`m/<id>/index/<commit>`), cached forever. */
export class StoredIndexes implements IndexStore {
  constructor(
    private readonly blobs: BlobStore,
    private readonly cache: ImmutableCache,
    private readonly limits: MemoryLimits,
    private readonly git: (rec: MemoryRecord) => GitOverlay,
  ) {}

  async load(rec: MemoryRecord, commit: string): Promise<NoteIndex> {
    const idx = await this.cache.getOrLoad(
      key(rec, commit),
      async () => {
        const bytes = await this.blobs.get(rec.id, 'index', commit);
        return bytes ? parseIndex(bytes) : this.rebuild(rec, commit);
      },
      indexBytes,
    );
    return idx as NoteIndex;
  }

  items(index: NoteIndex): BlobItem[] {
    return [{ kind: 'index', sha: index.commit, body: serializeIndex(index) }];
  }

  remember(rec: MemoryRecord, index: NoteIndex): void {
    this.cache.set(key(rec, index.commit), index, indexBytes(index));
  }

  /**
   * Builds a commit's index from its tree when the index object is missing (a commit brought in
   * through the git recovery procedure). Slow (reads every note) but only ever once per commit.
   */
  private async rebuild(rec: MemoryRecord, commit: string): Promise<NoteIndex> {
    const git = this.git(rec);
    const c = await git.readCommit(commit);
    const time = isoSeconds(c.committer.timestamp);
    const trees = new Map<string, string>();
    const files = new Map<string, FileEntry>();
    const walk = async (folder: string, oid: string): Promise<void> => {
      trees.set(folder, oid);
      for (const e of await git.readTree(oid)) {
        const path = folder === '' ? e.path : `${folder}/${e.path}`;
        if (e.type === 'tree') await walk(path, e.oid);
        else if (e.type === 'blob' && path.endsWith('.md')) files.set(path, fileEntry(e.oid, describeNote(await git.readText(e.oid), path, this.limits), time));
      }
    };
    await walk('', c.tree);
    const built: NoteIndex = { commit, parent: c.parent[0] ?? null, time, files, trees, tombstones: new Map() };
    await this.blobs.putMany(rec.id, this.items(built));
    return built;
  }
}

const key = (rec: MemoryRecord, commit: string): string => `i:${rec.id}:${commit}`;
