import type { HeadMove, MemoryRecord, MoveOptions, MoveOutcome, RevLock, WriteTicket } from '../../lambdas/memory/ports';
import { DynamoRevLock } from '../../lambdas/memory/adapters/dynamo-rev-lock';
import type { MemoryService } from '../../lambdas/memory/service';
import { cloneBundle } from '../support/memory-git';
import { expectMemoryError, newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

let h: MemoryHarness;
beforeAll(async () => {
  h = await startMemoryHarness();
});
afterAll(() => h.close());

/** Runs `between` once, just before this lock's first head move: a writer that lost the race. */
class InterleavingLock implements RevLock {
  private pending?: () => Promise<unknown>;
  constructor(
    private readonly inner: RevLock,
    between: () => Promise<unknown>,
  ) {
    this.pending = between;
  }
  get = (a: string, n: string) => this.inner.get(a, n);
  list = (a: string) => this.inner.list(a);
  create = (r: MemoryRecord, c: number) => this.inner.create(r, c);
  retire = (a: string, n: string, e: string | null | undefined, at: string) => this.inner.retire(a, n, e, at);
  restore = (a: string, n: string, c: number) => this.inner.restore(a, n, c);
  takeTicket = (a: string, n: string, t: WriteTicket, now: number) => this.inner.takeTicket(a, n, t, now);
  dropTicket = (a: string, n: string, holder: string) => this.inner.dropTicket(a, n, holder);
  async moveHead(a: string, n: string, e: string | null, next: HeadMove, opts?: MoveOptions): Promise<MoveOutcome> {
    const run = this.pending;
    this.pending = undefined;
    if (run) await run();
    return this.inner.moveHead(a, n, e, next, opts);
  }
}

function interleaved(between: () => Promise<unknown>): MemoryService {
  return h.service({ lock: new InterleavingLock(new DynamoRevLock(h.dynamodb, h.table), between) });
}

test('50 parallel writes to 50 notes without If-Match, from 50 instances: all land, history linear with 50 commits', async () => {
  const me = newCaller();
  await h.service().createMemory(me, 'race');
  // Fifty instances' writes to one memory land one commit at a time, in ticket order: the last waits
  // for 49 commits, which with two full suites on two cores took over the harness's 120 s. The
  // writes get the test's own budget (inside its timeout); the test is about order, not speed.
  const limits = { writeBudgetMs: 280_000 };
  const writes = Array.from({ length: 50 }, (_, i) =>
    h.service({ limits }).writeNote(me, 'race', `notes/n${String(i).padStart(2, '0')}.md`, { body: `# Note ${i}\n` }),
  );
  const results = await Promise.all(writes);
  expect(results.every((r) => r.changed)).toBe(true);
  expect(new Set(results.map((r) => r.rev)).size).toBe(50);

  const svc = h.service();
  const mem = await svc.getMemory(me, 'race');
  expect(mem.files).toBe(50);
  const listing = await svc.listNotes(me, 'race', { folder: 'notes', type: 'file', limit: 500 });
  expect(listing.entries).toHaveLength(50);

  const clone = cloneBundle((await svc.exportBundle(me, 'race')).bytes);
  try {
    expect(clone.git('rev-list', '--count', 'HEAD').trim()).toBe('50');
    expect(clone.git('rev-list', '--min-parents=2', '--count', 'HEAD').trim()).toBe('0');
    expect(clone.git('rev-parse', 'HEAD').trim()).toBe(mem.rev);
    expect(clone.git('ls-files').trim().split('\n')).toHaveLength(50);
    // Every commit that a writer reported is in the history (none was lost to a rebase).
    const history = new Set(clone.git('rev-list', 'HEAD').trim().split('\n'));
    for (const r of results) expect(history.has(r.rev)).toBe(true);
    clone.git('fsck', '--strict');
  } finally {
    clone.cleanup();
  }
  // Fifty writers on one memory redo their PUT waves many times on the slow local backends.
}, 300_000);

test('50 parallel writes through one instance also all land', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'one');
  await Promise.all(Array.from({ length: 50 }, (_, i) => svc.writeNote(me, 'one', `n${i}.md`, { body: `n${i}` })));
  expect((await svc.getMemory(me, 'one')).files).toBe(50);
});

test('20 parallel writes with the same If-Match: exactly one succeeds, the rest CONFLICT, nothing half-written', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'ifmatch');
  const base = await svc.writeNote(me, 'ifmatch', 'base.md', { body: 'base' });
  const settled = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => h.service().writeNote(me, 'ifmatch', `w${i}.md`, { body: `w${i}` }, { expectedRev: base.rev })),
  );
  const ok = settled.filter((s): s is PromiseFulfilledResult<Awaited<ReturnType<MemoryService['writeNote']>>> => s.status === 'fulfilled');
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  expect(ok).toHaveLength(1);
  expect(failed).toHaveLength(19);
  for (const f of failed) expect(f.reason as { code: string; reason: string }).toMatchObject({ code: 'CONFLICT', reason: 'stale_rev' });
  const mem = await svc.getMemory(me, 'ifmatch');
  expect(mem.rev).toBe(ok[0].value.rev);
  expect(mem.files).toBe(2);
  const paths = (await svc.listNotes(me, 'ifmatch')).entries.map((e) => e.path);
  expect(paths).toEqual(['base.md', ok[0].value.path]);
});

test('parallel appends to one note without If-Match: every append lands (edits are re-applied on rebase)', async () => {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'log');
  await svc.writeNote(me, 'log', 'log.md', { body: 'start' });
  await Promise.all(Array.from({ length: 10 }, (_, i) => h.service().editNote(me, 'log', 'log.md', { mode: 'append', body: `entry ${i}` })));
  const lines = (await svc.readNote(me, 'log', 'log.md')).body.split('\n');
  expect(lines[0]).toBe('start');
  expect(lines.slice(1).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `entry ${i}`).sort());
});

describe('rebase after a lost race', () => {
  test('str_replace re-checks uniqueness against the new head', async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'sr');
    await a.writeNote(me, 'sr', 'n.md', { body: 'one foo here' });
    const b = interleaved(() => a.editNote(me, 'sr', 'n.md', { mode: 'str_replace', old_str: 'foo', new_str: 'bar' }));
    await expectMemoryError(b.editNote(me, 'sr', 'n.md', { mode: 'str_replace', old_str: 'foo', new_str: 'baz' }), 'BAD_REQUEST', 'no_unique_match');
    expect((await a.readNote(me, 'sr', 'n.md')).body).toBe('one bar here');
  });

  test('a str_replace that still matches once is re-applied on top of the other change', async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'sr2');
    await a.writeNote(me, 'sr2', 'n.md', { body: 'alpha beta' });
    const b = interleaved(() => a.editNote(me, 'sr2', 'n.md', { mode: 'append', body: 'gamma' }));
    await b.editNote(me, 'sr2', 'n.md', { mode: 'str_replace', old_str: 'alpha', new_str: 'ALPHA' });
    expect((await a.readNote(me, 'sr2', 'n.md')).body).toBe('ALPHA beta\ngamma');
  });

  test('an edit of a note deleted meanwhile is NOT_FOUND', async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'del');
    await a.writeNote(me, 'del', 'n.md', { body: 'x' });
    const b = interleaved(() => a.deleteNote(me, 'del', 'n.md'));
    await expectMemoryError(b.editNote(me, 'del', 'n.md', { mode: 'append', body: 'y' }), 'NOT_FOUND', 'note_not_found');
  });

  test('a write to a memory retired meanwhile is NOT_FOUND and leaves it retired', async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'ret');
    await a.writeNote(me, 'ret', 'n.md', { body: 'x' });
    const b = interleaved(() => a.retireMemory(me, 'ret'));
    await expectMemoryError(b.writeNote(me, 'ret', 'n.md', { body: 'y' }), 'NOT_FOUND', 'memory_not_found');
    await expectMemoryError(a.getMemory(me, 'ret'), 'NOT_FOUND');
  });

  test('with If-Match, a lost race is CONFLICT and the winner stays', async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'im');
    const w = await a.writeNote(me, 'im', 'n.md', { body: 'x' });
    let winner = '';
    const b = interleaved(async () => {
      winner = (await a.writeNote(me, 'im', 'n.md', { body: 'from a' })).rev;
    });
    await expectMemoryError(b.writeNote(me, 'im', 'n.md', { body: 'from b' }, { expectedRev: w.rev }), 'CONFLICT', 'stale_rev');
    expect((await a.getMemory(me, 'im')).rev).toBe(winner);
    expect((await a.readNote(me, 'im', 'n.md')).body).toBe('from a');
  });

  test("the loser's objects are unreachable: the history holds only the winner and the rebased commit", async () => {
    const me = newCaller();
    const a = h.service();
    await a.createMemory(me, 'gc');
    await a.writeNote(me, 'gc', 'base.md', { body: 'base' });
    const b = interleaved(() => a.writeNote(me, 'gc', 'a.md', { body: 'a' }));
    await b.writeNote(me, 'gc', 'b.md', { body: 'b' });
    const clone = cloneBundle((await a.exportBundle(me, 'gc')).bytes);
    try {
      expect(clone.git('log', '--format=%s').trim().split('\n')).toEqual(['Create b.md', 'Create a.md', 'Create base.md']);
      // The pack holds only reachable objects: nothing dangling for fsck to report.
      expect(clone.git('fsck', '--unreachable', '--no-reflogs').trim()).toBe('');
    } finally {
      clone.cleanup();
    }
  });
});
