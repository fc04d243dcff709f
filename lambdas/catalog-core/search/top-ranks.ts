/**
 * The first `k` text hits in the embedded engine's order (score desc, then popularity rank asc,
 * which also breaks ties by slug) without an object per hit: a broad query at 100,000 servers
 * matches tens of thousands of them while a page needs a few dozen. A bounded heap over two typed
 * arrays whose root is the worst hit kept, O(n log k).
 */
export class TopRanks {
  private readonly scores: Float64Array;
  private readonly ranks: Int32Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.scores = new Float64Array(Math.max(k, 0));
    this.ranks = new Int32Array(Math.max(k, 0));
  }

  push(score: number, rank: number): void {
    const { scores, ranks } = this;
    if (this.size < this.k) {
      let i = this.size++;
      // Sift up: the parent must be worse than (after) its child.
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!after(scores[parent], ranks[parent], score, rank)) {
          scores[i] = scores[parent];
          ranks[i] = ranks[parent];
          i = parent;
        } else break;
      }
      scores[i] = score;
      ranks[i] = rank;
      return;
    }
    if (this.k === 0 || !after(scores[0], ranks[0], score, rank)) return;
    // Replace the root and sift down.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const worst = r < this.size && after(scores[r], ranks[r], scores[l], ranks[l]) ? r : l;
      if (!after(scores[worst], ranks[worst], score, rank)) break;
      scores[i] = scores[worst];
      ranks[i] = ranks[worst];
      i = worst;
    }
    scores[i] = score;
    ranks[i] = rank;
  }

  /** The kept ranks, best first. */
  sorted(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    order.sort((a, b) => this.scores[b] - this.scores[a] || this.ranks[a] - this.ranks[b]);
    return order.map((i) => this.ranks[i]);
  }
}

/** Whether hit (sa, ra) comes after hit (sb, rb). */
function after(sa: number, ra: number, sb: number, rb: number): boolean {
  return sa < sb || (sa === sb && ra > rb);
}
