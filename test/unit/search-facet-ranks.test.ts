import { countByRank, valuesByRank } from '../../lambdas/catalog-core/search/facet-ranks';

/** A deterministic pseudo-random source, so a failure names the same masks every run. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('facet counts per match (facet-ranks)', () => {
  it('counts each value and the matches holding none exactly as the bitset intersections do', () => {
    const rnd = lcg(29);
    for (const n of [1, 31, 32, 33, 200, 1000]) {
      const words = (n + 31) >>> 5;
      const bits = new Map<string, Uint32Array>();
      // Values held by some ranks, several per rank or none, one value held by no rank.
      for (const [value, share] of [
        ['a', 0.5],
        ['b', 0.2],
        ['c', 0.02],
        ['never', 0],
      ] as const) {
        const b = new Uint32Array(words);
        for (let r = 0; r < n; r++) if (rnd() < share) b[r >>> 5] |= 1 << (r & 31);
        bits.set(value, b);
      }
      const byRank = valuesByRank(bits, n);
      for (const density of [0, 0.01, 0.3, 1]) {
        const mask = new Uint32Array(words);
        for (let r = 0; r < n; r++) if (rnd() < density) mask[r >>> 5] |= 1 << (r & 31);
        const expected = new Map<string, number>();
        let none = 0;
        for (let r = 0; r < n; r++) {
          if (!(mask[r >>> 5] & (1 << (r & 31)))) continue;
          const held = [...bits].filter(([, b]) => b[r >>> 5] & (1 << (r & 31))).map(([v]) => v);
          if (held.length === 0) none += 1;
          for (const v of held) expected.set(v, (expected.get(v) ?? 0) + 1);
        }
        const got = countByRank(mask, byRank);
        expect({ n, density, counts: new Map([...got.counts].sort()), none: got.none }).toEqual({ n, density, counts: new Map([...expected].sort()), none });
      }
    }
  });
});
