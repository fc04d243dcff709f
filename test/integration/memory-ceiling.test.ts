import { DEFAULT_LIMITS } from '../../lambdas/memory';
import type { MemoryService } from '../../lambdas/memory/service';
import { newCaller, startMemoryHarness, type MemoryHarness } from '../support/memory-harness';
import { errorCode, startMemoryStack, type MemoryStack } from './memory-api-harness';

/**
 * The per-account memory ceiling (default 20) under concurrent creates: from several instances of
 * the core on one rev-lock table (as several Lambda instances are), and over HTTP. The ceiling is a
 * counter moved in the same conditional transaction as each create, so it holds exactly: never
 * more than the ceiling, and no create refused while there was room.
 */
jest.setTimeout(180_000);
const CEILING = DEFAULT_LIMITS.maxMemoriesPerAccount;

describe('the core, several instances on one table', () => {
  let h: MemoryHarness;
  let instances: MemoryService[];
  beforeAll(async () => {
    h = await startMemoryHarness();
    instances = [h.service(), h.service(), h.service()];
  });
  afterAll(() => h.close());

  it(`creates exactly ${CEILING} of ${CEILING + 10} distinct memories asked for at once; the rest are CONFLICT ceiling`, async () => {
    expect(instances[0].limits.maxMemoriesPerAccount).toBe(CEILING);
    const me = newCaller();
    const outcomes = await Promise.allSettled(Array.from({ length: CEILING + 10 }, (_, i) => instances[i % 3].createMemory(me, `m${i}`)));
    const created = outcomes.filter((o) => o.status === 'fulfilled' && o.value.created);
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as { code: string; reason: string });
    expect(created).toHaveLength(CEILING);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect([r.code, r.reason]).toEqual(['CONFLICT', 'ceiling']);
    expect(await instances[1].listMemories(me)).toHaveLength(CEILING);
  });

  it('keeps the count right when creates race a retire: one more only after one leaves', async () => {
    const me = newCaller();
    for (let i = 0; i < CEILING; i++) await instances[i % 3].createMemory(me, `m${i}`);
    // At the ceiling: a retire and many creates at once. At most one create fits, and only if the retire came first.
    const [retired, ...creates] = await Promise.allSettled([
      instances[0].retireMemory(me, 'm0'),
      ...Array.from({ length: 6 }, (_, i) => instances[(i + 1) % 3].createMemory(me, `new${i}`)),
    ]);
    expect(retired.status).toBe('fulfilled');
    expect(creates.filter((o) => o.status === 'fulfilled').length).toBeLessThanOrEqual(1);
    const active = await instances[2].listMemories(me);
    expect(active.length).toBeLessThanOrEqual(CEILING);
    // Whatever the order was, the counter agrees with the memories: one more create fits exactly when there is room.
    const room = CEILING - active.length;
    const more = await Promise.allSettled(Array.from({ length: 3 }, (_, i) => instances[i % 3].createMemory(me, `later${i}`)));
    expect(more.filter((o) => o.status === 'fulfilled')).toHaveLength(room);
    expect(await instances[0].listMemories(me)).toHaveLength(CEILING);
  });
});

describe('over HTTP', () => {
  let s: MemoryStack;
  beforeAll(async () => {
    // Not a test of the rate limit (60 per minute): raised; the ceiling keeps its default.
    s = await startMemoryStack({ MEMORY_RATE_LIMIT: '1000000' });
  }, 180_000);
  afterAll(() => s?.close());

  it(`answers ${CEILING} creates 201 and the rest 409 CONFLICT when ${CEILING + 5} arrive at once`, async () => {
    const headers = { ...s.bearer('ceiling-http'), 'content-type': 'application/json' };
    const responses = await Promise.all(
      Array.from({ length: CEILING + 5 }, (_, i) => s.fetch('/v1/memories', { method: 'POST', headers, body: JSON.stringify({ name: `m${i}` }) })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((x) => x === 201)).toHaveLength(CEILING);
    expect(statuses.filter((x) => x === 409)).toHaveLength(5);
    for (const r of responses.filter((x) => x.status === 409)) expect(await errorCode(r)).toBe('CONFLICT');
    const list = (await (await s.fetch('/v1/memories', { headers: s.bearer('ceiling-http') })).json()) as { memories: unknown[] };
    expect(list.memories).toHaveLength(CEILING);
  });
});
