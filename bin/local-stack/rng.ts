/**
 * The demo generator's randomness (`synthetic.ts`): a seeded PRNG and the draws it makes, so the
 * same seed gives the same catalog, byte for byte, on every machine.
 */

// Hot-path globals bound once: inside a vm context (Jest's test environment) every global lookup
// goes through an interceptor, which made `Math.imul` in the PRNG the dominant cost of a
// 10,000-server run there (about 3x slower than plain Node).
const { imul, floor, pow } = Math;

/** mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit avalanche mix, so neighbouring indexes get unrelated PRNG streams. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h = imul(h ^ (h >>> 16), 0x7feb352d);
  h = imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[floor(this.next() * items.length)];
  }
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1][0];
  }
  /** Distinct picks, in draw order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const pool = items.slice();
    const out: T[] = [];
    while (out.length < n && pool.length > 0) out.push(pool.splice(floor(this.next() * pool.length), 1)[0]);
    return out;
  }
  /**
   * Pareto-distributed non-negative number (xm · (u^(−1/α) − 1)): the heavy tail gives a handful
   * of huge values and a long tail of small ones, as stars and downloads really are.
   */
  pareto(xm: number, alpha: number): number {
    const u = 1 - this.next(); // (0, 1]
    return xm * (pow(u, -1 / alpha) - 1);
  }
  hex(chars: number): string {
    let s = '';
    while (s.length < chars) s += (floor(this.next() * 0x100000000) >>> 0).toString(16).padStart(8, '0');
    return s.slice(0, chars);
  }
}
