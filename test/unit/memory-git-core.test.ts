import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import { ImmutableCache } from '../../lambdas/memory/cache';
import { CHAIN, childLineage, parseLineage, serializeLineage, type Lineage } from '../../lambdas/memory/lineage';
import { applyDelta, objectId, PackError, readPack } from '../../lambdas/memory/pack';
import { checkTree, parseCommit } from '../../lambdas/memory/push-checks';
import type { HeadMove, MoveOutcome } from '../../lambdas/memory/ports';
import { MemoryService } from '../../lambdas/memory/service';
import { detectRenames, similarity } from '../../lambdas/memory/tree-diff';
import type { Caller } from '../../lambdas/memory/types';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { basesIn, GIT_COMMITTER_ENV } from '../support/memory-git';

/**
 * The git machinery of the memory core, in-process: the pack reader (every object type, both
 * delta kinds, thin packs, and what it refuses), lineage records, rename detection, fsck's checks
 * of pushed trees and commits, and a push that loses the race at the conditional write (it must
 * land nothing, and a lost answer of a move that landed must still count as landed). Packs are
 * made by the real git.
 */
const me: Caller = { account: 'acct', author: { name: 'T', email: 't@example.com' } };
const LIMITS = { maxObjects: 1000, maxObjectBytes: 1 << 20, maxTotalBytes: 8 << 20 };
const ENV = GIT_COMMITTER_ENV;

let dir: string;
const git = (args: string[], input?: string | Buffer): Buffer => execFileSync('git', args, { cwd: dir, env: ENV, input, maxBuffer: 64 << 20 });

beforeAll(() => {
  dir = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'git-core-'));
  git(['init', '-q', '-b', 'main']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function commit(files: Record<string, string>, message: string): string {
  for (const [p, text] of Object.entries(files)) {
    execFileSync('mkdir', ['-p', join(dir, p, '..')]);
    writeFileSync(join(dir, p), text);
  }
  git(['add', '-A']);
  git(['commit', '-q', '-m', message]);
  return git(['rev-parse', 'HEAD']).toString().trim();
}

/** The pack git would send for `revs` (e.g. `['HEAD', '^abc']`), thin when asked, with deltas. */
function pack(revs: string[], thin = false): Buffer {
  return git(['pack-objects', '--stdout', '--revs', '--delta-base-offset', ...(thin ? ['--thin'] : [])], `${revs.join('\n')}\n`);
}

describe('the pack reader', () => {
  test('reads a whole pack, deltas included, into objects whose ids are git’s', async () => {
    const base = `${'line of a long note\n'.repeat(200)}`;
    commit({ 'a.md': base }, 'one');
    const head = commit({ 'a.md': `${base}one more line\n`, 'b.md': '# b\n' }, 'two');
    const bytes = pack(['HEAD']);
    const objects = await readPack(bytes, async () => new Map(), LIMITS);
    const expected = git(['rev-list', '--objects', 'HEAD'])
      .toString()
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]);
    expect([...objects.keys()].sort()).toEqual(expected.sort());
    expect(objects.get(head)?.type).toBe('commit');
    for (const o of objects.values()) expect(objectId(o.type, o.content)).toBe(o.oid);
    // git packed one version of a.md as a delta of the other: the reader did resolve a delta.
    writeFileSync(join(dir, '.git', 'whole.pack'), bytes);
    git(['index-pack', join(dir, '.git', 'whole.pack')]);
    expect(git(['verify-pack', '-v', join(dir, '.git', 'whole.idx')]).toString()).toMatch(/chain length = 1: \d+ object/);
  });

  test('takes a thin pack, looking bases up in storage, and refuses one whose base is nowhere', async () => {
    const before = git(['rev-parse', 'HEAD']).toString().trim();
    const head = commit({ 'a.md': `${'line of a long note\n'.repeat(200)}one more line\nand another\n` }, 'three');
    const thin = pack(['HEAD', `^${before}`], true);
    const stored = await readPack(pack([before]), async () => new Map(), LIMITS);
    const objects = await readPack(thin, basesIn(stored), LIMITS);
    expect(objects.has(head)).toBe(true);
    await expect(readPack(thin, async () => new Map(), LIMITS)).rejects.toThrow(/base .* is missing/);
  });

  test('refuses a corrupt checksum, a truncated pack, too many objects and objects over the size cap', async () => {
    const bytes = pack(['HEAD']);
    const corrupt = Buffer.from(bytes);
    corrupt[corrupt.length - 30] ^= 0xff;
    await expect(readPack(corrupt, async () => new Map(), LIMITS)).rejects.toBeInstanceOf(PackError);
    await expect(readPack(bytes.subarray(0, 40), async () => new Map(), LIMITS)).rejects.toThrow(PackError);
    await expect(readPack(bytes, async () => new Map(), { ...LIMITS, maxObjects: 2 })).rejects.toThrow(/brings \d+ objects/);
    await expect(readPack(bytes, async () => new Map(), { ...LIMITS, maxObjectBytes: 100 })).rejects.toThrow(/at most 100/);
    await expect(readPack(Buffer.from('not a pack at all, not at all, no'), async () => new Map(), LIMITS)).rejects.toThrow(/not a pack/);
  });

  test('refuses a pack that inflates past its declared sizes (a small pack cannot become gigabytes)', async () => {
    const content = Buffer.alloc(1 << 16, 0x61);
    // A blob that declares 10 bytes but carries 64 KiB of deflated zeros.
    const header = Buffer.from([0x30 | 10]);
    const body = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 1]), header, deflateSync(content)]);
    const bomb = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    await expect(readPack(bomb, async () => new Map(), LIMITS)).rejects.toThrow(PackError);
  });

  test('applies copy and insert delta instructions, and refuses reads out of range', () => {
    const src = Buffer.from('hello world');
    // sizes 11 → 9, copy 5 bytes at 0, insert " you"
    const delta = Buffer.from([11, 9, 0x90, 5, 4, ...Buffer.from(' you')]);
    expect(applyDelta(src, delta, 100).toString()).toBe('hello you');
    expect(() => applyDelta(src, Buffer.from([11, 20, 0x91, 5, 16]), 100)).toThrow(PackError);
    expect(() => applyDelta(src, Buffer.from([3, 1, 1, 0x41]), 100)).toThrow(/base size/);
  });
});

describe("fsck's checks of what is pushed", () => {
  const tree = (entries: Array<[string, string]>) => {
    const content = Buffer.concat(entries.map(([mode, name]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), randomBytes(20)])));
    return { oid: objectId('tree', content), type: 'tree' as const, content };
  };

  test('trees: sorted the way git sorts, no duplicates, regular files and folders only, no names git refuses', () => {
    expect(
      checkTree(
        tree([
          ['100644', 'a.md'],
          ['40000', 'b'],
          ['100644', 'c.md'],
        ]),
      ),
    ).toEqual([]);
    expect(
      checkTree(
        tree([
          ['100644', 'b.md'],
          ['100644', 'a.md'],
        ]),
      )[0],
    ).toMatch(/not sorted/);
    expect(
      checkTree(
        tree([
          ['100644', 'a.md'],
          ['100644', 'a.md'],
        ]),
      ).join(),
    ).toMatch(/twice/);
    expect(checkTree(tree([['120000', 'l.md']]))[0]).toMatch(/symbolic link/);
    expect(checkTree(tree([['160000', 'sub']]))[0]).toMatch(/submodule/);
    expect(checkTree(tree([['040000', 'zero']]))[0]).toMatch(/zero-padded/);
    expect(checkTree(tree([['40000', '.git']]))[0]).toMatch(/git directory/);
    expect(checkTree(tree([['40000', 'GIT~1']]))[0]).toMatch(/short name/);
    // "a.md" (a file) sorts before "a.md0" but "a" (a folder, compared as "a/") after "a.md".
    expect(
      checkTree(
        tree([
          ['100644', 'a.md'],
          ['40000', 'a'],
        ]),
      ),
    ).toEqual([]);
    const broken = { oid: 'x', type: 'tree' as const, content: Buffer.from('100644 no-nul-here') };
    expect(checkTree(broken)[0]).toMatch(/malformed/);
  });

  test('commits: tree, parents, author and committer lines in order, identities well formed', () => {
    const ok = `tree ${'a'.repeat(40)}\nparent ${'b'.repeat(40)}\nauthor A B <a@b> 1700000000 +0100\ncommitter C <c@d> 1700000001 -0500\n\nmsg\n`;
    expect(parseCommit('x', Buffer.from(ok))).toEqual({ oid: 'x', tree: 'a'.repeat(40), parents: ['b'.repeat(40)], time: 1700000001 });
    expect(parseCommit('x', Buffer.from(ok.replace('author A B <a@b>', 'author <a@b>')))).toMatch(/author/);
    expect(parseCommit('x', Buffer.from(ok.replace(' -0500', ' EST')))).toMatch(/committer/);
    expect(parseCommit('x', Buffer.from(ok.replace(/^tree .*\n/, '')))).toMatch(/first line/);
    expect(parseCommit('x', Buffer.from(ok.replace('\n\nmsg\n', '\n')))).toMatch(/blank line/);
  });
});

describe('lineage records', () => {
  test('round-trip, and a child takes its first parent and that parent’s chain, up to CHAIN', () => {
    let l: Lineage = childLineage('0'.repeat(40), []);
    expect(l).toMatchObject({ depth: 1, gen: 1, linear: true, chain: [] });
    for (let i = 1; i <= CHAIN + 5; i++) l = childLineage(i.toString(16).padStart(40, '0'), [l]);
    expect(l.depth).toBe(CHAIN + 6);
    expect(l.chain).toHaveLength(CHAIN);
    expect(l.chain[0]).toBe((CHAIN + 4).toString(16).padStart(40, '0'));
    expect(parseLineage(l.commit, serializeLineage(l))).toEqual(l);
    const merge = childLineage('f'.repeat(40), [l, childLineage('e'.repeat(40), [])]);
    expect(merge).toMatchObject({ linear: false, gen: l.gen + 1, parents: [l.commit, 'e'.repeat(40)] });
    expect(childLineage('d'.repeat(40), [merge]).linear).toBe(false);
  });
});

describe('rename detection', () => {
  test('pairs the same blob first, then versions at least half alike, best first', async () => {
    const texts: Record<string, string> = { b1: 'a\nb\nc\nd\n', b2: 'a\nb\nc\nx\n', b3: 'totally\ndifferent\n' };
    const changes = await detectRenames(
      [
        { path: 'new/one.md', newBlob: 'b1' },
        { path: 'new/two.md', newBlob: 'b2' },
        { path: 'old/one.md', oldBlob: 'b1' },
        { path: 'old/two.md', oldBlob: 'b1' },
        { path: 'old/three.md', oldBlob: 'b3' },
        { path: 'same.md', oldBlob: 'b3', newBlob: 'b2' },
      ],
      { text: async (b) => texts[b] },
    );
    expect(changes).toEqual([
      { path: 'new/one.md', change: 'renamed', from: 'old/one.md', oldBlob: 'b1', newBlob: 'b1', similarity: 100 },
      { path: 'new/two.md', change: 'renamed', from: 'old/two.md', oldBlob: 'b1', newBlob: 'b2', similarity: 75 },
      { path: 'old/three.md', change: 'deleted', oldBlob: 'b3' },
      { path: 'same.md', change: 'modified', oldBlob: 'b3', newBlob: 'b2' },
    ]);
    expect(similarity('', '')).toBe(100);
    expect(similarity('abc\n', 'xyz\n')).toBe(0);
  });
});

describe('a push that loses the race at the conditional write', () => {
  function services() {
    const blobs = new InMemoryBlobStore();
    const cursors = new CursorCodec({ current: { id: 1, secret: randomBytes(32) } });
    const make = (l: InMemoryRevLock) => new MemoryService({ blobs, lock: l, cursors, cache: new ImmutableCache(64 << 20), backoff: async () => undefined });
    return { blobs, make };
  }

  /** A clone of the memory's bundle with one more commit, and the thin pack that push would send. */
  async function pushable(svc: MemoryService): Promise<{ old: string; next: string; pack: Buffer }> {
    const bundle = await svc.exportBundle(me, 'm');
    const work = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), 'push-race-'));
    writeFileSync(join(work, 'm.bundle'), bundle.bytes);
    const run = (args: string[], input?: string) => execFileSync('git', args, { cwd: join(work, 'c'), env: ENV, input });
    execFileSync('git', ['clone', '-q', 'm.bundle', 'c'], { cwd: work, env: ENV });
    writeFileSync(join(work, 'c', 'pushed.md'), '# pushed\n');
    run(['add', '-A']);
    run(['commit', '-q', '-m', 'pushed']);
    const next = run(['rev-parse', 'HEAD']).toString().trim();
    const packBytes = run(['pack-objects', '--stdout', '--revs', '--thin'], `HEAD\n^${bundle.rev}\n`);
    rmSync(work, { recursive: true, force: true });
    return { old: bundle.rev, next, pack: packBytes };
  }

  test('another writer moving the head between the checks and the move: refused, fetch first, nothing reachable', async () => {
    const lock = new InMemoryRevLock();
    const { make } = services();
    const writer = make(lock);
    await writer.createMemory(me, 'm');
    await writer.writeNote(me, 'm', 'a.md', { body: 'a' });
    // The pushing instance's lock lets the REST write land just before the push's own move.
    let competing: string | undefined;
    const racing = Object.assign(Object.create(lock) as InMemoryRevLock, {
      moveHead: async (a: string, n: string, e: string | null, next: HeadMove): Promise<MoveOutcome> => {
        competing ??= (await writer.writeNote(me, 'm', 'agent.md', { body: 'first' })).rev;
        return lock.moveHead(a, n, e, next);
      },
    });
    const pusher = make(racing);
    const p = await pushable(writer);
    const out = await pusher.gitPush(me, 'm', { ref: 'refs/heads/main', old: p.old, new: p.next }, p.pack);
    expect(out).toMatchObject({ ok: false, reason: 'fetch first' });
    expect((await writer.getMemory(me, 'm')).rev).toBe(competing);
    await expect(writer.readNote(me, 'm', 'pushed.md', { rev: p.next })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await writer.readNote(me, 'm', 'agent.md')).body).toBe('first');
  });

  test('a move that landed but whose answer was lost counts as landed (the writer token, not the sha)', async () => {
    const lock = new InMemoryRevLock();
    const { make } = services();
    const writer = make(lock);
    await writer.createMemory(me, 'm');
    await writer.writeNote(me, 'm', 'a.md', { body: 'a' });
    const lossy = Object.assign(Object.create(lock) as InMemoryRevLock, {
      moveHead: async (a: string, n: string, e: string | null, next: HeadMove): Promise<MoveOutcome> => {
        await lock.moveHead(a, n, e, next);
        return { ok: false, current: await lock.get(a, n) };
      },
    });
    const p = await pushable(writer);
    const out = await make(lossy).gitPush(me, 'm', { ref: 'refs/heads/main', old: p.old, new: p.next }, p.pack);
    expect(out).toEqual({ ok: true, rev: p.next, commits: 1 });
    expect((await writer.readNote(me, 'm', 'pushed.md')).body).toBe('# pushed\n');
  });
});
