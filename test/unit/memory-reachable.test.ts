import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import type { BlobKind } from '../../lambdas/memory/ports';
import { INDEX_WORTH } from '../../lambdas/memory/reachable';
import { parseIndex, serializeIndex } from '../../lambdas/memory/note-index';
import { cloneBundle } from '../support/memory-git';
import { inMemoryService, newCaller } from '../support/memory-harness';

/**
 * A bundle's trees come from the commits' indexes (`reachable.ts`): each folder's tree is rebuilt
 * from what the index lists and taken only when it hashes to the id the index names; an older commit
 * that brings many trees the walk has not met is listed from its own index instead of its trees.
 */

/** A blob store that remembers what was read from it. */
class ReadLog extends InMemoryBlobStore {
  readonly reads: string[] = [];
  override get(memoryId: string, kind: BlobKind, sha: string): Promise<Uint8Array | undefined> {
    this.reads.push(`${kind}/${sha}`);
    return super.get(memoryId, kind, sha);
  }
}
describe('a bundle lists the head from its index', () => {
  test('a folder whose tree is not what the index lists is read, and the bundle still holds everything', async () => {
    const blobs = new InMemoryBlobStore();
    const lock = new InMemoryRevLock();
    const svc = inMemoryService({ blobs, lock });
    const me = newCaller();
    await svc.createMemory(me, 'm');
    await svc.importNotes(me, 'm', [
      { path: 'a/one.md', markdown: 'one' },
      { path: 'a/two.md', markdown: 'two' },
      { path: 'b/three.md', markdown: 'three' },
    ]);
    const rev = (await svc.getMemory(me, 'm')).rev as string;
    // The stored index forgets a.md's neighbour (as an index rebuilt from a tree holding a file that
    // is not a note would): its folder's tree no longer matches what the index lists.
    const key = [...blobs.items.keys()].find((k) => k.endsWith(`/index/${rev}`)) as string;
    const idx = parseIndex(blobs.items.get(key) as Uint8Array);
    idx.files.delete('a/two.md');
    blobs.items.set(key, serializeIndex(idx));

    // A fresh instance, which has read nothing.
    const clone = cloneBundle((await inMemoryService({ blobs, lock }).exportBundle(me, 'm')).bytes);
    try {
      clone.git('fsck', '--strict', '--no-dangling');
      expect(clone.git('ls-files').trim().split('\n')).toEqual(['a/one.md', 'a/two.md', 'b/three.md']);
      expect(clone.git('show', 'HEAD:a/two.md')).toBe('two');
    } finally {
      clone.cleanup();
    }
  });

  test('an import under the head is listed from its index: no tree of its folders is read before the first byte, and the bundle holds the whole history', async () => {
    const blobs = new ReadLog();
    const lock = new InMemoryRevLock();
    const svc = inMemoryService({ blobs, lock });
    const me = newCaller();
    await svc.createMemory(me, 'm');
    const folders = Array.from({ length: INDEX_WORTH + 8 }, (_, i) => `f${i}`);
    // Two imports that each change every folder, then a write to one of them: the first import's
    // folder trees are met by no later commit.
    await svc.importNotes(
      me,
      'm',
      folders.map((f) => ({ path: `${f}/a.md`, markdown: `a in ${f}` })),
    );
    await svc.importNotes(
      me,
      'm',
      folders.map((f) => ({ path: `${f}/b.md`, markdown: `b in ${f}` })),
    );
    await svc.writeNote(me, 'm', 'f0/c.md', { markdown: 'c' });

    // A fresh instance, which has read nothing: what it reads before the first byte (the pack's
    // header counts every object, so they are all listed by then).
    blobs.reads.length = 0;
    const stream = await inMemoryService({ blobs, lock }).streamBundle(me, 'm');
    const listing = [...blobs.reads];
    const chunks: Uint8Array[] = [];
    for await (const c of stream.body) chunks.push(c);
    const clone = cloneBundle(Buffer.concat(chunks));
    try {
      clone.git('fsck', '--strict', '--no-dangling');
      const [, , first] = clone.git('rev-list', 'HEAD').trim().split('\n');
      expect(clone.git('ls-tree', '-r', '--name-only', first).trim().split('\n')).toHaveLength(folders.length);
      expect(listing).toContain(`index/${first}`);
      // Its root is read with the other commits' roots, in one wave; the folders under it are not.
      const folderTrees = clone.git('ls-tree', '-r', '-d', '--object-only', first).trim().split('\n');
      expect(folderTrees).toHaveLength(folders.length);
      expect(listing.filter((r) => folderTrees.some((t) => r === `object/${t}`))).toEqual([]);
    } finally {
      clone.cleanup();
    }
  });
});
