import { randomBytes } from 'node:crypto';
import { InMemoryBlobStore, InMemoryRevLock } from '../../lambdas/memory/adapters/in-memory';
import type { HeadMove, MoveOptions, MoveOutcome } from '../../lambdas/memory/ports';
import { StorageError } from '../../lambdas/memory/errors';
import { MemoryService, type MemoryServiceDeps } from '../../lambdas/memory/service';
import { CursorCodec } from '../../lambdas/shared/cursor';
import { InMemoryIdempotencyStore } from '../../lambdas/shared/idempotency/store';
import { expectMemoryError, newCaller } from '../support/memory-harness';

/**
 * The commit loop on the in-process adapters: batches, the time budget, the write ticket and keyed
 * writes. Instances are services on one lock and one object store.
 */
const cursors = new CursorCodec({ current: { id: 1, secret: randomBytes(32) } });
const noWait = async (): Promise<void> => undefined;

/** A lock whose head moves are seen (and may be held) by the test. */
function watched(inner: InMemoryRevLock, onMove: (next: HeadMove, opts: MoveOptions | undefined) => Promise<void> = async () => undefined) {
  const moves: Array<{ writer: string; ok: boolean }> = [];
  const lock = Object.assign(Object.create(inner) as InMemoryRevLock, {
    moveHead: async (a: string, n: string, e: string | null, next: HeadMove, opts?: MoveOptions): Promise<MoveOutcome> => {
      await onMove(next, opts);
      const out = await inner.moveHead(a, n, e, next, opts);
      moves.push({ writer: next.writer, ok: out.ok });
      return out;
    },
  });
  return { lock, moves };
}

const service = (deps: Partial<MemoryServiceDeps> & Pick<MemoryServiceDeps, 'lock' | 'blobs'>) =>
  new MemoryService({ cursors, backoff: noWait, ...deps, limits: { writeBudgetMs: 60_000, ...deps.limits } });

test('writes to one memory queued in one process land as batches: every write its own commit, fewer head moves than writes', async () => {
  const me = newCaller();
  const { lock, moves } = watched(new InMemoryRevLock());
  const svc = service({ lock, blobs: new InMemoryBlobStore() });
  await svc.createMemory(me, 'm');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => svc.writeNote(me, 'm', `n${i}.md`, { body: `# ${i}` })));
  expect(new Set(results.map((r) => r.rev)).size).toBe(20);
  expect(moves.length).toBeLessThan(20);
  const history = await svc.historyPage(me, 'm', { limit: 100 });
  expect(history.commits.map((c) => c.rev).sort()).toEqual(results.map((r) => r.rev).sort());
  // A write that fails in a batch fails alone.
  const mixed = await Promise.allSettled([
    svc.editNote(me, 'm', 'n1.md', { mode: 'append', body: 'more' }),
    svc.editNote(me, 'm', 'missing.md', { mode: 'append', body: 'x' }),
    svc.deleteNote(me, 'm', 'n2.md'),
  ]);
  expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((await svc.readNote(me, 'm', 'n1.md')).body).toBe('# 1\nmore');
});

test('a write still queued when its budget is spent is answered 503 at once, and never lands', async () => {
  const me = newCaller();
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let hold = false;
  const { lock } = watched(new InMemoryRevLock(), async () => {
    if (hold) await held;
  });
  // A budget the first write's path to its head move fits in on a loaded machine (at 50 ms it once
  // expired first, before the head move it was to hang in); the second's runs out in the queue.
  const svc = service({ lock, blobs: new InMemoryBlobStore(), limits: { writeBudgetMs: 1500 } });
  await svc.createMemory(me, 'm');
  hold = true;
  // The first write's head move hangs; the second waits in the queue behind it past its budget.
  const first = svc.writeNote(me, 'm', 'first.md', { body: 'first' });
  const second = svc.writeNote(me, 'm', 'second.md', { body: 'second' });
  await expectMemoryError(second, 'UPSTREAM_UNAVAILABLE', 'contention');
  hold = false;
  release();
  expect((await first).changed).toBe(true);
  await expectMemoryError(svc.readNote(me, 'm', 'second.md'), 'NOT_FOUND');
});

test('a writer that lost a race takes the ticket: the next head move is its own, whatever the other instance has queued', async () => {
  const me = newCaller();
  const inner = new InMemoryRevLock();
  const blobs = new InMemoryBlobStore();
  // The hot instance tells when one of its writes moved the head, or was refused the ticket.
  let hotEvent: (() => void) | undefined;
  const hotLock = Object.assign(Object.create(inner) as InMemoryRevLock, {
    moveHead: async (a: string, n: string, e: string | null, next: HeadMove, opts?: MoveOptions): Promise<MoveOutcome> => {
      const out = await inner.moveHead(a, n, e, next, opts);
      hotEvent?.();
      return out;
    },
    takeTicket: async (...args: Parameters<InMemoryRevLock['takeTicket']>) => {
      const out = await inner.takeTicket(...args);
      if (!out.taken) hotEvent?.();
      return out;
    },
  });
  const hot = service({ lock: hotLock, blobs });
  await hot.createMemory(me, 'm');
  await hot.writeNote(me, 'm', 'warm.md', { body: 'warm' });
  // Before each of the cold instance's moves the hot instance writes: the first time it lands first
  // (the cold one loses that race); the second time it must be held back by the cold one's ticket.
  let during: Promise<unknown> | undefined;
  const { lock, moves } = watched(inner, async () => {
    if (moves.length === 0) {
      await hot.writeNote(me, 'm', 'hot-before.md', { body: 'before' });
      return;
    }
    if (during) return;
    const seen = new Promise<void>((r) => {
      hotEvent = r;
    });
    during = hot.writeNote(me, 'm', 'hot-during.md', { body: 'during' });
    await seen;
    hotEvent = undefined;
  });
  const cold = service({ lock, blobs });
  expect((await cold.writeNote(me, 'm', 'cold.md', { body: 'cold' })).changed).toBe(true);
  // Lost once, then landed with the ticket: the hot write tried meanwhile was refused the ticket.
  expect(moves.map((m) => m.ok)).toEqual([false, true]);
  await during;
  expect((await cold.listNotes(me, 'm', { depth: 'all' })).files).toBe(4);
});

test('a keyed write records its result with its commit; a write given that record returns it and writes nothing', async () => {
  const me = newCaller();
  const idem = new InMemoryIdempotencyStore();
  const { lock, moves } = watched(new InMemoryRevLock(idem));
  const svc = service({ lock, blobs: new InMemoryBlobStore() });
  await svc.createMemory(me, 'm');
  const claim = await idem.claim('k', 'f');
  if (claim.kind !== 'claimed') throw new Error(claim.kind);
  const once = { key: 'k', token: claim.token, fingerprint: 'f' };
  const first = await svc.moveNote(me, 'm', { from: 'a.md', to: 'b.md' }).catch(() => undefined);
  expect(first).toBeUndefined();
  await svc.writeNote(me, 'm', 'a.md', { body: 'see [b](b.md)' });
  const moved = await svc.moveNote(me, 'm', { from: 'a.md', to: 'c.md', updateLinks: true }, { once });
  expect(once).toMatchObject({ recorded: true });
  const record = await idem.claim('k', 'f');
  expect(record).toEqual({ kind: 'committed', result: expect.objectContaining({ rev: moved.rev }) });
  const before = moves.length;
  const again = await svc.moveNote(
    me,
    'm',
    { from: 'a.md', to: 'c.md', updateLinks: true },
    { once: { ...once, committed: (record as { result: unknown }).result } },
  );
  expect(again).toEqual(moved);
  expect(moves.length).toBe(before);
  // Without the store the rev lock cannot record a key: a keyed write fails rather than land unrecorded.
  const bare = service({ lock: new InMemoryRevLock(), blobs: new InMemoryBlobStore() });
  await bare.createMemory(me, 'm');
  await expect(bare.writeNote(me, 'm', 'x.md', { body: 'x' }, { once: { key: 'k2', token: 't', fingerprint: 'f' } })).rejects.toThrow(/idempotency store/);
});

type LockCall = keyof InMemoryRevLock;

/**
 * The rev lock on a table that stops answering, as DynamoDB Local under SIGSTOP: a call of the
 * paused kinds gets no answer until the SDK gives up on it (its timeout, `sdkMs`) with a storage
 * error. `calls`: the paused calls made, in order; `called`: resolves at the next one.
 */
function pausable(inner: InMemoryRevLock, sdkMs: number) {
  let paused: ReadonlySet<LockCall> = new Set();
  const calls: LockCall[] = [];
  let seen: () => void = () => undefined;
  const lock = new Proxy(inner, {
    get(target, prop: LockCall) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!paused.has(prop)) return (value as (...a: unknown[]) => unknown).apply(target, args);
        calls.push(prop);
        seen();
        return new Promise((_, reject) => setTimeout(() => reject(new StorageError(`dynamodb.${prop}`, new Error('request timed out'))), sdkMs).unref());
      };
    },
  });
  return {
    lock,
    calls,
    /** Calls of these kinds get no answer from now on (none: the table answers again). */
    pause: (kinds: LockCall[]) => {
      paused = new Set(kinds);
    },
    called: () => new Promise<void>((r) => (seen = r)),
  };
}

const EVERY_CALL: LockCall[] = ['get', 'moveHead', 'takeTicket', 'dropTicket'];

test('writes meeting a paused table while they read the head or wait their turn are answered 503 at their budget, before the SDK gives up on the call', async () => {
  const me = newCaller();
  const inner = new InMemoryRevLock();
  const table = pausable(inner, 10_000);
  const svc = service({ lock: table.lock, blobs: new InMemoryBlobStore(), limits: { writeBudgetMs: 200 } });
  await svc.createMemory(me, 'm');
  await svc.writeNote(me, 'm', 'warm.md', { body: 'warm' });

  // The head read of the first write's batch gets no answer; the writes queued behind it wait in the process.
  table.pause(EVERY_CALL);
  const writes = ['a.md', 'b.md', 'c.md'].map((p) => svc.writeNote(me, 'm', p, { body: p }));
  const errors = await Promise.all(writes.map((w) => expectMemoryError(w, 'UPSTREAM_UNAVAILABLE', 'contention')));
  for (const err of errors) expect(err).toMatchObject({ extra: { retryAfterSeconds: 1 } });
  expect(table.calls[0]).toBe('get');

  // Another writer holds the ticket: this one's takes of it get no answer.
  table.pause([]);
  const now = Date.now();
  await inner.takeTicket(me.account, 'm', { holder: 'another-instance', untilMs: now + 60_000 }, now);
  table.pause(['takeTicket', 'dropTicket']);
  await expectMemoryError(svc.writeNote(me, 'm', 'd.md', { body: 'd' }), 'UPSTREAM_UNAVAILABLE', 'contention');
  expect(table.calls).toContain('takeTicket');
  table.pause([]);
  await inner.dropTicket(me.account, 'm', 'another-instance');
  for (const p of ['a.md', 'b.md', 'c.md', 'd.md']) await expectMemoryError(svc.readNote(me, 'm', p), 'NOT_FOUND');
}, 60_000);

test('a head move in flight at the deadline is waited for (it may land), then the write is answered with no further table call', async () => {
  const me = newCaller();
  const table = pausable(new InMemoryRevLock(), 3000);
  // A budget the write's path to its head move fits in on a loaded machine; the move outlasts it.
  const svc = service({ lock: table.lock, blobs: new InMemoryBlobStore(), limits: { writeBudgetMs: 1500 } });
  await svc.createMemory(me, 'm');
  await svc.writeNote(me, 'm', 'warm.md', { body: 'warm' });
  table.pause(['moveHead']);
  const moving = table.called();
  const write = svc.writeNote(me, 'm', 'a.md', { body: 'a' });
  write.catch(() => undefined);
  await moving;
  // From its head move on the table answers nothing.
  table.pause(EVERY_CALL);
  // The move's answer never came: whether it landed is unknown, and the write says storage failed.
  await expectMemoryError(write, 'UPSTREAM_UNAVAILABLE', 'storage');
  expect(table.calls).toEqual(['moveHead']);
}, 60_000);
