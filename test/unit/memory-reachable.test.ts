import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { parseIndex, serializeIndex } from '../../lambdas/memory/note-index';
import { cloneBundle } from '../support/memory-git';
import { inMemoryService, newCaller } from '../support/memory-harness';

/**
 * A bundle's trees come from the commits' indexes (`reachable.ts`): each folder's tree is rebuilt
 * from what the index lists and taken only when it hashes to the id the index names.
 */
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
});
