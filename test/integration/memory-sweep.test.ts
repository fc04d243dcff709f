import { DynamoRevLock } from '../../lambdas/memory/adapters/dynamo-rev-lock';
import { S3BlobStore } from '../../lambdas/memory/adapters/s3-blob-store';
import { checkHistory } from '../../lambdas/memory/integrity';
import type { HeadMove, MemoryRecord, MoveOptions, MoveOutcome } from '../../lambdas/memory/ports';
import type { MemoryService } from '../../lambdas/memory/service';
import { sweepMemory } from '../../lambdas/memory/sweep';
import type { Caller } from '../../lambdas/memory/types';
import { cloneBundle } from '../support/memory-git';
import { newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

/**
 * The sweep of unreachable objects (`lambdas/memory/sweep.ts`) on DynamoDB Local and the S3
 * server: it deletes what lost attempts stored, never what a head reaches, and a writer whose
 * objects it deleted cannot land on them afterwards.
 */
let h: MemoryHarness;
let lock: DynamoRevLock;
let blobs: S3BlobStore;
beforeAll(async () => {
  h = await startMemoryHarness();
  lock = new DynamoRevLock(h.dynamodb, h.table);
  blobs = new S3BlobStore(h.s3, h.bucket);
});
afterAll(() => h.close());

const SWEEP = { graceMs: 0, fenceMs: 10_000 };

/** A service whose first head move lets `between` run first (another instance's write lands meanwhile). */
function losing(between: () => Promise<unknown>): MemoryService {
  let pending: (() => Promise<unknown>) | undefined = between;
  const racing = Object.assign(Object.create(lock) as DynamoRevLock, {
    moveHead: async (a: string, n: string, e: string | null, next: HeadMove, opts?: MoveOptions): Promise<MoveOutcome> => {
      const run = pending;
      pending = undefined;
      if (run) await run();
      return lock.moveHead(a, n, e, next, opts);
    },
  });
  return h.service({ lock: racing });
}

const record = async (me: Caller, name: string): Promise<MemoryRecord> => (await lock.get(me.account, name)) as MemoryRecord;

/** Every reachable object is stored, every note reads back through a fresh instance, and the export passes fsck. */
async function intact(me: Caller, name: string, notes: Record<string, string>): Promise<void> {
  const rec = await record(me, name);
  expect((await checkHistory(blobs, rec)).missing).toEqual([]);
  const svc = h.service();
  for (const [path, body] of Object.entries(notes)) expect((await svc.readNote(me, name, path)).body).toBe(body);
  const clone = cloneBundle((await svc.exportBundle(me, name)).bytes);
  try {
    clone.git('fsck', '--full', '--strict');
  } finally {
    clone.cleanup();
  }
}

test('the objects of lost attempts are deleted, every object the head reaches stays', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'm');
  const notes: Record<string, string> = { 'a.md': 'a', 'dir/b.md': 'b' };
  await svc.writeNote(me, 'm', 'a.md', { body: 'a' });
  await svc.writeNote(me, 'm', 'dir/b.md', { body: 'b' });
  // Three writes that each lose one race to another instance, then rebase and land.
  for (let i = 0; i < 3; i++) {
    notes[`lost/${i}.md`] = `lost ${i}`;
    notes[`won/${i}.md`] = `won ${i}`;
    await losing(() => h.service().writeNote(me, 'm', `won/${i}.md`, { body: `won ${i}` })).writeNote(me, 'm', `lost/${i}.md`, { body: `lost ${i}` });
  }
  const first = await sweepMemory(lock, blobs, await record(me, 'm'), SWEEP);
  expect(first.skipped).toBeUndefined();
  // Each lost attempt stored its trees, commit, index and lineage for nothing (its note's blob is reused by the rebase).
  expect(first.orphans).toBeGreaterThanOrEqual(3 * 4);
  expect(first.deleted).toBe(first.orphans);
  await intact(me, 'm', notes);
  // The memory takes writes after it, and a second sweep finds nothing.
  await svc.writeNote(me, 'm', 'after.md', { body: 'after' });
  notes['after.md'] = 'after';
  expect(await sweepMemory(lock, blobs, await record(me, 'm'), SWEEP)).toMatchObject({ orphans: 0, deleted: 0 });
  await intact(me, 'm', notes);
}, 120_000);

test('a writer whose objects were stored before a sweep deleted them cannot land on them: its move fails, it stores them again, then lands', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'w');
  await svc.writeNote(me, 'w', 'a.md', { body: 'a' });
  // The sweep runs between the writer's PUT wave and its head move: the writer's new objects are
  // unreachable then, so the sweep deletes them.
  let swept: Awaited<ReturnType<typeof sweepMemory>> | undefined;
  const writer = losing(async () => {
    swept = await sweepMemory(lock, blobs, await record(me, 'w'), SWEEP);
  });
  const out = await writer.writeNote(me, 'w', 'b.md', { body: 'b' });
  expect(out.changed).toBe(true);
  expect(swept?.deleted).toBeGreaterThan(0);
  await intact(me, 'w', { 'a.md': 'a', 'b.md': 'b' });
}, 120_000);

test('a dry run counts and deletes nothing; a retired memory is left as it is', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'd');
  await svc.writeNote(me, 'd', 'a.md', { body: 'a' });
  await losing(() => h.service().writeNote(me, 'd', 'b.md', { body: 'b' })).writeNote(me, 'd', 'c.md', { body: 'c' });
  const dry = await sweepMemory(lock, blobs, await record(me, 'd'), { ...SWEEP, dryRun: true });
  expect(dry.orphans).toBeGreaterThan(0);
  expect(dry.deleted).toBe(0);
  await svc.retireMemory(me, 'd');
  const retired = await sweepMemory(lock, blobs, await record(me, 'd'), SWEEP);
  expect(retired).toMatchObject({ skipped: 'retired', deleted: 0, orphans: dry.orphans });
  await svc.restoreMemory(me, 'd');
  await intact(me, 'd', { 'a.md': 'a', 'b.md': 'b', 'c.md': 'c' });
}, 120_000);
