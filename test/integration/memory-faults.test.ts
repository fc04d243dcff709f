import type { MemoryService } from '../../lambdas/memory/service';
import type { Caller } from '../../lambdas/memory/types';
import { faultSwitch, type FaultSwitch, type Phase } from '../support/memory-faults';
import { newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';

let h: MemoryHarness;
let faults: FaultSwitch;
beforeAll(async () => {
  h = await startMemoryHarness();
  faults = faultSwitch(h);
});
afterAll(async () => {
  faults.detach();
  await h.close();
});

interface Scenario {
  name: string;
  /** The write under test; it must be idempotent when repeated, as a client's retry would be. */
  op: (svc: MemoryService, me: Caller) => Promise<unknown>;
  /** What the memory holds after the write, as `path=body` lines. */
  after: string[];
}

const BEFORE = ['a.md=old', 'keep.md=keep'];

const scenarios: Scenario[] = [
  { name: 'write a new note', op: (s, me) => s.writeNote(me, 'm', 'dir/new.md', { body: 'new' }), after: ['a.md=old', 'dir/new.md=new', 'keep.md=keep'] },
  { name: 'replace a note', op: (s, me) => s.editNote(me, 'm', 'a.md', { body: 'edited' }), after: ['a.md=edited', 'keep.md=keep'] },
  { name: 'delete a note', op: (s, me) => s.deleteNote(me, 'm', 'a.md').catch(notFoundIsDone), after: ['keep.md=keep'] },
];

/** A retried delete of a note that is already gone has nothing left to do. */
function notFoundIsDone(err: { code?: string }): void {
  if (err.code !== 'NOT_FOUND') throw err;
}

async function fixture(): Promise<{ me: Caller; rev: string }> {
  const me = newCaller();
  const svc = h.service();
  await svc.createMemory(me, 'm');
  await svc.writeNote(me, 'm', 'a.md', { body: 'old' });
  const { rev } = await svc.writeNote(me, 'm', 'keep.md', { body: 'keep' });
  return { me, rev };
}

/** The memory's content through a fresh instance (nothing cached), with its rev. */
async function snapshot(me: Caller): Promise<{ rev: string | null; notes: string[]; files: number }> {
  const svc = h.service();
  const mem = await svc.getMemory(me, 'm');
  const listing = await svc.listNotes(me, 'm', { depth: 'all', type: 'file' });
  const notes = await Promise.all(listing.entries.map(async (e) => `${e.path}=${(await svc.readNote(me, 'm', e.path)).body}`));
  expect(listing.rev).toBe(mem.rev);
  return { rev: mem.rev, notes, files: mem.files };
}

describe.each(scenarios)('a fault at each storage call of "$name"', ({ op, after }) => {
  // The calls of one cold run (a fresh instance): rev read, index read, the PUT wave, the move.
  let calls: string[] = [];
  beforeAll(async () => {
    const { me } = await fixture();
    faults.record();
    await op(h.service(), me);
    calls = [...faults.calls];
    expect(calls[0]).toBe('dynamodb.GetItem');
    expect(calls[calls.length - 1]).toBe('dynamodb.UpdateItem');
    expect(calls.filter((c) => c === 's3.PutObject').length).toBeGreaterThanOrEqual(3);
  });

  const steps = (): Array<[number, Phase]> =>
    calls.flatMap(
      (_, i): Array<[number, Phase]> => [
        [i + 1, 'before'],
        [i + 1, 'after'],
      ],
    );

  test('leaves the memory at its old rev or its new one, never between, and a retry succeeds', async () => {
    expect(calls.length).toBeGreaterThan(0);
    let leftNew = 0;
    for (const [index, phase] of steps()) {
      const { me, rev: oldRev } = await fixture();
      faults.arm(index, phase);
      let failure: unknown;
      try {
        await op(h.service(), me);
      } catch (err) {
        failure = err;
      }
      faults.disarm();
      const where = `${phase} call ${index} (${calls[index - 1]})`;
      expect([where, faults.fired()]).toEqual([where, true]);
      // The head move's answer lost after it landed: the writer looks the head up and answers success.
      const landedUnanswered = index === calls.length && phase === 'after';
      expect([where, (failure as { code?: string })?.code]).toEqual([where, landedUnanswered ? undefined : 'UPSTREAM_UNAVAILABLE']);

      const state = await snapshot(me);
      if (state.rev === oldRev) expect([where, state.notes]).toEqual([where, BEFORE]);
      else {
        // Only the last call, answered after it took effect, may leave the new rev behind.
        expect([where, index, phase]).toEqual([where, calls.length, 'after']);
        leftNew++;
        expect([where, state.notes]).toEqual([where, after]);
      }
      expect(state.files).toBe(state.notes.length);

      await op(h.service(), me);
      const final = await snapshot(me);
      expect([where, final.notes]).toEqual([where, after]);
    }
    // The lost answer of the head move did happen, and was recovered from.
    expect(leftNew).toBe(1);
  }, 240_000);

  test('the cold run makes the calls of the budget', () => {
    const puts = calls.filter((c) => c === 's3.PutObject').length;
    expect(calls).toEqual(['dynamodb.GetItem', ...calls.slice(1, calls.length - puts - 1), ...Array<string>(puts).fill('s3.PutObject'), 'dynamodb.UpdateItem']);
    expect(calls.slice(1, calls.length - puts - 1).every((c) => c === 's3.GetObject')).toBe(true);
  });
});
