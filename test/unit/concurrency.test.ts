import { mapLimit, mergeLimit, sleep } from '../../lambdas/shared/concurrency';

/** A source of `n` items, each after a short random wait, that records how many sources run at once. */
function sources(count: number, n: number, live: { now: number; max: number; closed: number; started: number }) {
  return Array.from(
    { length: count },
    (_, s) =>
      async function* (): AsyncGenerator<string> {
        live.started++;
        live.now++;
        live.max = Math.max(live.max, live.now);
        try {
          for (let i = 0; i < n; i++) {
            await sleep(Math.random() * 3);
            yield `${s}:${i}`;
          }
        } finally {
          live.now--;
          live.closed++;
        }
      },
  );
}

describe('mergeLimit', () => {
  it('gives every item of every source once, each source in its own order, at most `limit` sources open at once', async () => {
    const live = { now: 0, max: 0, closed: 0, started: 0 };
    const got: string[] = [];
    for await (const item of mergeLimit(sources(10, 7, live), 3)) got.push(item);
    expect(got).toHaveLength(70);
    expect(new Set(got).size).toBe(70);
    for (let s = 0; s < 10; s++) {
      expect(got.filter((g) => g.startsWith(`${s}:`))).toEqual(Array.from({ length: 7 }, (_, i) => `${s}:${i}`));
    }
    expect(live.max).toBe(3);
    expect(live.closed).toBe(10);
  });

  it('a consumer that stops early closes the open sources and never starts the rest', async () => {
    const live = { now: 0, max: 0, closed: 0, started: 0 };
    let n = 0;
    for await (const _ of mergeLimit(sources(10, 50, live), 2)) if (++n === 4) break;
    expect(live.started).toBe(2);
    expect(live.now).toBe(0);
    expect(live.closed).toBe(2);
  });

  it('a failing source fails the merge with its error, and the others are closed', async () => {
    const live = { now: 0, max: 0, closed: 0, started: 0 };
    const failing = async function* (): AsyncGenerator<string> {
      yield 'x';
      await sleep(5);
      throw new Error('page failed');
    };
    const all = [...sources(3, 1000, live), failing];
    const run = async () => {
      for await (const _ of mergeLimit(all, 4)) {
        // The consumer is slow: the failure happens while nobody awaits it (no unhandled rejection).
        await sleep(1);
      }
    };
    await expect(run()).rejects.toThrow('page failed');
    expect(live.now).toBe(0);
  });

  it('no sources: nothing', async () => {
    const got: unknown[] = [];
    for await (const x of mergeLimit<number>([], 4)) got.push(x);
    expect(got).toEqual([]);
  });
});

describe('mapLimit', () => {
  it('keeps the order of its items and at most `limit` calls in flight', async () => {
    let now = 0;
    let max = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
      now++;
      max = Math.max(max, now);
      await sleep(x);
      now--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(max).toBe(2);
  });
});
