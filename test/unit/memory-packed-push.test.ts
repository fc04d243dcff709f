import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { GitOverlay } from '../../lambdas/memory/git-overlay';
import { objectId } from '../../lambdas/memory/pack';
import { checkHistory } from '../../lambdas/memory/integrity';
import { buildPack, PACK_MIN_OBJECTS, PackedObjects } from '../../lambdas/memory/packed-objects';
import { MemoryService } from '../../lambdas/memory/service';
import type { Caller } from '../../lambdas/memory/types';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { cloneBundle, GIT_COMMITTER_ENV } from '../support/memory-git';

/**
 * A push of many objects is stored as one git pack and its index, not one PUT per object: the wave
 * carries two objects for them, whatever the number of notes. What is stored must be what git
 * itself reads (`git verify-pack`, a repository made of the memory's `objects/` folder as the
 * recovery procedure says, `fsck --strict`), and every reader must find the objects: another
 * instance with a cold cache, the bundle export, the integrity check.
 */
const me: Caller = { account: 'acct', author: { name: 'T', email: 't@example.com' } };
const NOTES = PACK_MIN_OBJECTS + 40;

let dir: string;
const git = (args: string[], cwd = dir, input?: string): Buffer => execFileSync('git', args, { cwd, env: GIT_COMMITTER_ENV, input, maxBuffer: 64 << 20 });

beforeAll(() => {
  dir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'packed-push-'));
  git(['init', '-q', '-b', 'main']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Counts the items of each kind a store receives. */
class CountingStore extends InMemoryBlobStore {
  puts: Record<string, number> = {};
  override async putMany(memoryId: string, items: Parameters<InMemoryBlobStore['putMany']>[1]): Promise<void> {
    for (const i of items) this.puts[i.kind] = (this.puts[i.kind] ?? 0) + 1;
    return super.putMany(memoryId, items);
  }
}

test(`a push of ${NOTES} notes is stored as one pack that git reads, and every reader finds its objects`, async () => {
  for (let i = 0; i < NOTES; i++) {
    mkdirSync(join(dir, `f${i % 7}`), { recursive: true });
    writeFileSync(join(dir, `f${i % 7}`, `n${i}.md`), `# Note ${i}\n\n${randomBytes(12).toString('hex')}\n`);
  }
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'many notes']);
  const head = git(['rev-parse', 'HEAD']).toString().trim();
  const pack = git(['pack-objects', '--stdout', '--revs'], dir, 'HEAD\n');

  const blobs = new CountingStore();
  const lock = new InMemoryRevLock();
  const cursors = new CursorCodec({ current: { id: 1, secret: randomBytes(32) } });
  const svc = new MemoryService({ blobs, lock, cursors });
  await svc.createMemory(me, 'm');
  const out = await svc.gitPush(me, 'm', { ref: 'refs/heads/main', old: null, new: head }, pack);
  expect(out).toMatchObject({ ok: true, rev: head });
  // 1 commit, 1 root tree, 7 folders, the notes: one pack and its index; no loose object.
  expect(blobs.puts).toMatchObject({ pack: 1, 'pack-index': 1 });
  expect(blobs.puts.object).toBeUndefined();

  // Another instance, nothing cached: reads, the bundle and the integrity check find every object.
  const cold = new MemoryService({ blobs, lock, cursors });
  expect((await cold.readNote(me, 'm', 'f3/n3.md')).body).toMatch(/^# Note 3\n/);
  const clone = cloneBundle((await cold.exportBundle(me, 'm')).bytes);
  try {
    clone.git('fsck', '--full', '--strict');
    expect(clone.git('rev-parse', 'HEAD').trim()).toBe(head);
  } finally {
    clone.cleanup();
  }
  const rec = await lock.get(me.account, 'm');
  const report = await checkHistory(blobs, rec as NonNullable<typeof rec>);
  expect(report.missing).toEqual([]);
  expect(report.objects).toBe(NOTES + 9);

  // The recovery procedure: the memory's objects/ folder as .git/objects, the head as main.
  const restored = join(dir, '..', `restored-${process.pid}`);
  git(['init', '-q', '-b', 'main', '--bare', restored]);
  const prefix = `${(rec as { id: string }).id}/`;
  for (const [key, body] of blobs.items) {
    if (!key.startsWith(prefix)) continue;
    const [, kind, sha] = key.split('/');
    if (kind === 'pack') writeFileSync(join(restored, 'objects', 'pack', `pack-${sha}.pack`), body);
    if (kind === 'pack-index') writeFileSync(join(restored, 'objects', 'pack', `pack-${sha}.idx`), body);
  }
  try {
    expect(
      git(
        [
          'verify-pack',
          '-v',
          ...execFileSync('ls', [join(restored, 'objects', 'pack')])
            .toString()
            .trim()
            .split('\n')
            .filter((f) => f.endsWith('.idx'))
            .map((f) => join(restored, 'objects', 'pack', f)),
        ],
        restored,
      ).toString(),
    ).toMatch(/ok$/m);
    git(['update-ref', 'refs/heads/main', head], restored);
    git(['fsck', '--full', '--strict', '--no-dangling'], restored);
  } finally {
    rmSync(restored, { recursive: true, force: true });
  }
});

test('a small push stays loose objects', async () => {
  writeFileSync(join(dir, 'small.md'), '# small\n');
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'small']);
  const blobs = new CountingStore();
  const svc = new MemoryService({ blobs, lock: new InMemoryRevLock(), cursors: new CursorCodec({ current: { id: 1, secret: randomBytes(32) } }) });
  await svc.createMemory(me, 'm');
  const head = git(['rev-parse', 'HEAD']).toString().trim();
  const parent = git(['rev-parse', 'HEAD~1']).toString().trim();
  const base = git(['pack-objects', '--stdout', '--revs'], dir, `${parent}\n`);
  expect(await svc.gitPush(me, 'm', { ref: 'refs/heads/main', old: null, new: parent }, base)).toMatchObject({ ok: true });
  blobs.puts = {};
  const small = git(['pack-objects', '--stdout', '--revs', '--thin'], dir, `HEAD\n^${parent}\n`);
  expect(await svc.gitPush(me, 'm', { ref: 'refs/heads/main', old: parent, new: head }, small)).toMatchObject({ ok: true });
  expect(blobs.puts).toMatchObject({ object: 3 });
  expect(blobs.puts.pack).toBeUndefined();
});

test('reads at once, on an instance that has not listed the pack holding them yet: one listing, and each finds its object', async () => {
  const blobs = new CountingStore();
  const objects = Array.from({ length: 40 }, (_, i) => {
    const content = Buffer.from(`# ${i}\n`);
    return { oid: objectId('blob', content), type: 'blob' as const, content };
  });
  await blobs.putMany('m', buildPack(objects).items);
  let listings = 0;
  const list = blobs.list.bind(blobs);
  blobs.list = (memoryId, kind) => {
    listings++;
    return list(memoryId, kind);
  };
  const cache = new ImmutableCache(1 << 20);
  const cold = new GitOverlay('m', blobs, cache, new PackedObjects(blobs, cache));
  // As a thin push's bases are read: many in flight, each missing as a loose object first.
  const read = await Promise.all(objects.map((o) => cold.readObject(o.oid)));
  expect(read.map((o) => Buffer.from(o.content).toString())).toEqual(objects.map((o) => o.content.toString()));
  expect(listings).toBe(1);
});

describe('push limits', () => {
  const fresh = (limits: Partial<MemoryService['limits']>) => {
    const blobs = new CountingStore();
    const lock = new InMemoryRevLock();
    return { blobs, lock, svc: new MemoryService({ blobs, lock, cursors: new CursorCodec({ current: { id: 1, secret: randomBytes(32) } }), limits }) };
  };
  const whole = () => ({ head: git(['rev-parse', 'HEAD']).toString().trim(), pack: git(['pack-objects', '--stdout', '--revs'], dir, 'HEAD\n') });

  test.each([
    [
      'time (checks past two thirds of MEMORY_PUSH_SECONDS)',
      { pushSeconds: 0 },
      'push too slow',
      /checking this push took longer than a push may take \(0 s in all\)/,
    ],
    ['inflated bytes', { maxPushInflatedBytes: 4096 }, 'push too large', /inflate past 4096 bytes, the most one push may bring/],
    ['objects', { maxPushObjects: 10 }, 'too many objects', /the push brings \d+ objects; a push may bring at most 10/],
  ])('past its %s: refused with a sentence, nothing stored', async (_what, limits, reason, message) => {
    const { head, pack } = whole();
    const { svc, blobs, lock } = fresh(limits);
    await svc.createMemory(me, 'm');
    const out = await svc.gitPush(me, 'm', { ref: 'refs/heads/main', old: null, new: head }, pack);
    expect(out).toMatchObject({ ok: false, reason });
    expect(out.ok ? [] : out.messages).toEqual([expect.stringMatching(message)]);
    expect(blobs.puts).toEqual({});
    expect((await lock.get(me.account, 'm'))?.head).toBeNull();
  });
});
