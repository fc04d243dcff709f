import type { CrawlStateStore, PlanStep, RunMeta, UnitItem } from '../../lambdas/crawler/domain/ports';
import type { UnitResult } from '../../lambdas/crawler/domain/types';

/**
 * What every `CrawlStateStore` promises the crawler, held to the in-memory store and the DynamoDB
 * one alike: runs start only over the run the caller saw (two planners racing: one wins), plan steps
 * commit once and in order (a retried step after a crash is a no-op), a unit completes once however
 * often a crashed-and-retried invocation completes it, a run finishes only while current, a slug
 * has one owner, and what is stored comes back as it was stored.
 */
export function crawlStateContract(name: string, make: () => Promise<CrawlStateStore>): void {
  describe(`CrawlStateStore contract: ${name}`, () => {
    let s: CrawlStateStore;
    beforeEach(async () => {
      s = await make();
    });

    const run = (runId: string, over: Partial<RunMeta> = {}): RunMeta => ({
      runId,
      mode: 'full',
      startedAt: '2026-01-01T00:00:00.000Z',
      status: 'planning',
      steps: 0,
      unitsCreated: 0,
      unitsDone: 0,
      rowsSeen: 0,
      ...over,
    });
    const unit = (runId: string, unitId: string, over: Partial<UnitItem> = {}): UnitItem => ({
      runId,
      unitId,
      kind: 'page',
      status: 'pending',
      rows: JSON.stringify([{ server: { name: `io.test/${unitId}` } }]),
      ...over,
    });
    const step = (n: number, units: UnitItem[], over: Partial<PlanStep> = {}): PlanStep => ({ step: n, units, planned: false, rows: units.length, ...over });
    const result = (over: Partial<UnitResult> = {}): UnitResult => ({
      rows: 1,
      added: ['io.test/a'],
      updated: [],
      unchanged: 0,
      removed: [],
      deleted: [],
      superseded: 0,
      rejected: [],
      failures: [],
      iconsStored: 0,
      ...over,
    });

    it('starts a run only over the run the caller saw, and exactly one of two racing planners wins', async () => {
      expect(await s.getPointer()).toEqual({});
      const outcomes = await Promise.all([s.startRun(run('r1'), undefined), s.startRun(run('r2'), undefined)]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const winner = outcomes[0] ? 'r1' : 'r2';
      const loser = winner === 'r1' ? 'r2' : 'r1';
      expect((await s.getPointer()).currentRun).toBe(winner);
      expect(await s.getRun(loser)).toBeUndefined();
      // A stale view (no current run) cannot take over; the right one can, and the same id twice cannot.
      expect(await s.startRun(run('r3'), undefined)).toBe(false);
      expect(await s.startRun(run(winner), winner)).toBe(false);
      expect(await s.startRun(run('r3'), winner)).toBe(true);
      expect((await s.getPointer()).currentRun).toBe('r3');
    });

    it('commits plan steps once and in order, storing their units and advancing the run', async () => {
      await s.startRun(run('r'), undefined);
      const first = step(1, [unit('r', 'p0001'), unit('r', 'p0002')], {
        cursor: 'c1',
        maxUpdatedAt: '2026-01-02T00:00:00Z',
        upstreamStartedAt: '2026-01-01T00:00:01Z',
      });
      await s.commitPlanStep('r', first);
      // A retry of the same step after a crash changes nothing, however many times.
      await Promise.all([s.commitPlanStep('r', first), s.commitPlanStep('r', first)]);
      await expect(s.commitPlanStep('r', step(3, [unit('r', 'p0009')]))).rejects.toThrow(/out of order|step/);
      await s.commitPlanStep('r', step(2, [unit('r', 'p0003')], { planned: true }));
      const meta = await s.getRun('r');
      expect(meta).toMatchObject({ steps: 2, unitsCreated: 3, rowsSeen: 3, status: 'running', maxUpdatedAt: '2026-01-02T00:00:00Z' });
      expect(meta?.cursor).toBeUndefined();
      expect(meta?.upstreamStartedAt).toBe('2026-01-01T00:00:01Z');
      const units = await s.listUnits('r');
      expect(units.map((u) => u.unitId)).toEqual(['p0001', 'p0002', 'p0003']);
      // The listing leaves the payloads out; a unit read alone has them.
      expect(units.every((u) => u.rows === undefined && u.status === 'pending')).toBe(true);
      expect((await s.getUnit({ runId: 'r', unitId: 'p0002' }))?.rows).toBe(unit('r', 'p0002').rows);
      await expect(s.commitPlanStep('missing', step(1, []))).rejects.toThrow(/unknown run|missing/);
    });

    it('completes a unit once, however often a retried invocation completes it (a crash after the work)', async () => {
      await s.startRun(run('r'), undefined);
      await s.commitPlanStep('r', step(1, [unit('r', 'p0001'), unit('r', 'p0002')], { planned: true }));
      const ref = { runId: 'r', unitId: 'p0001' };
      const after = await Promise.all([s.completeUnit(ref, result()), s.completeUnit(ref, result({ added: ['other'] })), s.completeUnit(ref, result())]);
      expect(after.map((m) => m.unitsDone).sort()).toEqual([1, 1, 1]);
      const done = await s.getUnit(ref);
      expect(done?.status).toBe('done');
      expect(done?.rows).toBeUndefined();
      expect(done?.result?.rows).toBe(1);
      expect((await s.getRun('r'))?.unitsDone).toBe(1);
      expect((await s.completeUnit({ runId: 'r', unitId: 'p0002' }, result())).unitsDone).toBe(2);
      await expect(s.completeUnit({ runId: 'r', unitId: 'nope' }, result())).rejects.toThrow('unknown unit r/nope');
    });

    it('finishes only the current run, once, moving the pointer and the high-water mark', async () => {
      await s.startRun(run('r1'), undefined);
      await s.commitPlanStep('r1', step(1, [], { planned: true }));
      await s.finishRun('r1', 'summary one', '2026-01-05T00:00:00Z');
      await s.finishRun('r1', 'again', '2026-02-01T00:00:00Z');
      expect(await s.getPointer()).toEqual({ lastRun: 'r1', highWater: '2026-01-05T00:00:00Z' });
      expect(await s.getRun('r1')).toMatchObject({ status: 'done', summary: 'summary one' });
      // A run that is not current (another took over) cannot finish; one without a mark keeps the old one.
      await s.startRun(run('r2'), undefined);
      await s.startRun(run('stale'), 'r2').then(async (ok) => expect(ok).toBe(true));
      await expect(s.finishRun('r2', 'late', undefined)).rejects.toThrow('run r2 is not current');
      await expect(s.finishRun('no-such-run', 'x', undefined)).rejects.toThrow('unknown run no-such-run');
      await s.finishRun('stale', 'no mark', undefined);
      expect(await s.getPointer()).toEqual({ lastRun: 'stale', highWater: '2026-01-05T00:00:00Z' });
    });

    it('gives a slug one owner, also when two names claim it at once', async () => {
      const claims = await Promise.all([s.claimSlug('dup', 'io.a/x'), s.claimSlug('dup', 'io.b/x')]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const owner = claims[0] ? 'io.a/x' : 'io.b/x';
      expect(await s.claimSlug('dup', owner)).toBe(true);
      expect(await s.claimSlug('dup', owner === 'io.a/x' ? 'io.b/x' : 'io.a/x')).toBe(false);
    });

    it('stores name states and cached responses as they were given', async () => {
      const states = Array.from({ length: 30 }, (_, i) => ({
        name: `io.test/n${i}`,
        slug: `n${i}`,
        precedence: `p${i}`,
        listed: i % 2 === 0,
        ...(i % 2 === 1 && { reason: 'rejected: no description' }),
        stars: { snapshots: [{ at: '2026-01-01', stars: i }] },
      }));
      await s.saveNames(states as never);
      const got = await s.getNames(['io.test/n3', 'io.test/n4', 'io.test/none']);
      expect([...got.keys()].sort()).toEqual(['io.test/n3', 'io.test/n4']);
      expect(got.get('io.test/n3')).toEqual(states[3]);
      const scanned: string[] = [];
      for await (const st of s.scanNames()) scanned.push(st.name);
      expect(scanned.sort()).toEqual(states.map((x) => x.name).sort());
      await s.putCached('gh:repo:a/b', { etag: '"e1"', value: { stars: 3 }, fetchedAt: '2026-01-01T00:00:00Z' });
      const cached = await s.getCached<{ stars: number }>(['gh:repo:a/b', 'gh:repo:none']);
      expect([...cached]).toEqual([['gh:repo:a/b', { etag: '"e1"', value: { stars: 3 }, fetchedAt: '2026-01-01T00:00:00Z' }]]);
    });
  });
}
