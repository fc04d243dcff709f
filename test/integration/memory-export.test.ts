import { strFromU8, unzipSync } from 'fflate';
import type { MemoryService } from '../../lambdas/memory/service';
import { tickingClock } from '../support/memory-clock';
import { cloneBundle } from '../support/memory-git';
import { expectMemoryError, newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

let h: MemoryHarness;
let svc: MemoryService;
beforeAll(async () => {
  h = await startMemoryHarness();
  svc = h.service({ clock: tickingClock(Date.UTC(2026, 2, 1, 9, 0, 0)) });
});
afterAll(() => h.close());

test('the bundle is verified and cloned by real git, with the full history, authors and times', async () => {
  const me = newCaller();
  me.author = { name: 'Ada Lovelace', email: 'ada@example.com' };
  await svc.createMemory(me, 'hist');
  await svc.writeNote(me, 'hist', 'a.md', { body: '# A\nfirst' });
  await svc.writeNote(me, 'hist', 'folder/deep/b.md', { body: 'b', frontmatter: { tags: ['x'] } });
  await svc.editNote(me, 'hist', 'a.md', { mode: 'append', body: 'second' });
  await svc.writeNote(me, 'hist', 'ünï/çödé.md', { body: 'unicode path' });
  const deleted = await svc.deleteNote(me, 'hist', 'folder/deep/b.md');

  const bundle = await svc.exportBundle(me, 'hist');
  expect(bundle).toMatchObject({ name: 'hist', rev: deleted.rev, filename: 'hist.bundle', contentType: 'application/x-git-bundle' });
  expect(Buffer.from(bundle.bytes.subarray(0, 16)).toString()).toBe('# v2 git bundle\n');

  const clone = cloneBundle(bundle.bytes);
  try {
    clone.git('fsck', '--strict', '--no-dangling');
    expect(clone.git('rev-parse', 'HEAD').trim()).toBe(deleted.rev);
    // The clock ticks once for the memory's creation, then once per commit.
    expect(clone.git('log', '--format=%an <%ae>|%cn|%aI|%s').trim().split('\n')).toEqual([
      'Ada Lovelace <ada@example.com>|Ada Lovelace|2026-03-01T09:00:06+00:00|Delete folder/deep/b.md',
      'Ada Lovelace <ada@example.com>|Ada Lovelace|2026-03-01T09:00:05+00:00|Create ünï/çödé.md',
      'Ada Lovelace <ada@example.com>|Ada Lovelace|2026-03-01T09:00:04+00:00|Edit a.md (append)',
      'Ada Lovelace <ada@example.com>|Ada Lovelace|2026-03-01T09:00:03+00:00|Create folder/deep/b.md',
      'Ada Lovelace <ada@example.com>|Ada Lovelace|2026-03-01T09:00:02+00:00|Create a.md',
    ]);
    expect(clone.git('-c', 'core.quotePath=false', 'ls-files').trim().split('\n')).toEqual(['a.md', 'ünï/çödé.md']);
    expect(clone.git('show', 'HEAD:a.md')).toBe('# A\nfirst\nsecond');
    // The documented recovery procedure for a deleted note: its last content is in history.
    const deleting = clone.git('log', '--diff-filter=D', '--format=%H', '--', 'folder/deep/b.md').trim();
    expect(clone.git('show', `${deleting}^:folder/deep/b.md`)).toBe('---\ntags:\n  - x\n---\nb');
  } finally {
    clone.cleanup();
  }
});

test('a memory without history, a missing and a retired one: NOT_FOUND', async () => {
  const me = newCaller();
  await svc.createMemory(me, 'empty');
  await expectMemoryError(svc.exportBundle(me, 'empty'), 'NOT_FOUND', 'no_history');
  await expectMemoryError(svc.exportBundle(me, 'missing'), 'NOT_FOUND', 'memory_not_found');
  await svc.writeNote(me, 'empty', 'a.md', { body: 'x' });
  await svc.retireMemory(me, 'empty');
  await expectMemoryError(svc.exportBundle(me, 'empty'), 'NOT_FOUND', 'memory_not_found');
});

test('the zip holds every visible memory as <memory>/<path>, front matter included', async () => {
  const me = newCaller();
  for (const n of ['one', 'two', 'hidden', 'retired', 'blank']) await svc.createMemory(me, n);
  await svc.writeNote(me, 'one', 'a.md', { body: 'A', frontmatter: { tags: ['t'] } });
  await svc.writeNote(me, 'one', 'sub/b.md', { body: 'B' });
  await svc.writeNote(me, 'one', 'gone.md', { body: 'gone' });
  await svc.deleteNote(me, 'one', 'gone.md');
  await svc.writeNote(me, 'two', 'c.md', { markdown: '---\nk: v\n---\nC' });
  await svc.writeNote(me, 'hidden', 'h.md', { body: 'H' });
  await svc.writeNote(me, 'retired', 'r.md', { body: 'R' });
  await svc.retireMemory(me, 'retired');

  const out = await svc.exportZip({ ...me, grants: ['one', 'two', 'retired', 'blank'] });
  expect(out).toMatchObject({ filename: 'memories.zip', contentType: 'application/zip', memories: ['blank', 'one', 'two'] });
  const files = unzipSync(out.bytes);
  expect(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strFromU8(v)]))).toEqual({
    'one/a.md': '---\ntags:\n  - t\n---\nA',
    'one/sub/b.md': 'B',
    'two/c.md': '---\nk: v\n---\nC',
  });

  const all = unzipSync((await svc.exportZip(me)).bytes);
  expect(Object.keys(all).sort()).toEqual(['hidden/h.md', 'one/a.md', 'one/sub/b.md', 'two/c.md']);
  expect(Object.keys(unzipSync((await svc.exportZip(newCaller())).bytes))).toEqual([]);
});

test('a memory whose notes were all deleted still exports its history', async () => {
  const me = newCaller();
  await svc.createMemory(me, 'emptied');
  await svc.writeNote(me, 'emptied', 'only.md', { body: 'only' });
  await svc.deleteNote(me, 'emptied', 'only.md');
  const clone = cloneBundle((await svc.exportBundle(me, 'emptied')).bytes);
  try {
    clone.git('fsck', '--strict');
    expect(clone.git('ls-files').trim()).toBe('');
    expect(clone.git('show', 'HEAD~1:only.md')).toBe('only');
  } finally {
    clone.cleanup();
  }
});
