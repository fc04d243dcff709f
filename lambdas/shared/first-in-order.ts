/**
 * The first `k` items of `items` in the order of `cmp` (a total order), without sorting them all:
 * a page needs a few dozen of what may be thousands of hits (memory search, the catalog's embedded
 * search). A bounded heap whose root is the worst item kept, O(n log k); past a quarter of the
 * items a plain sort is as quick.
 */
export function firstInOrder<T>(items: readonly T[], k: number, cmp: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  if (k * 4 >= items.length) return [...items].sort(cmp).slice(0, k);
  const heap: T[] = [];
  // Max-heap under cmp: heap[0] is the item that would come last.
  const worse = (i: number, j: number): boolean => cmp(heap[i], heap[j]) > 0;
  const swap = (i: number, j: number): void => {
    const t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
  };
  const down = (from: number): void => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && worse(l, top)) top = l;
      if (r < heap.length && worse(r, top)) top = r;
      if (top === i) return;
      swap(i, top);
      i = top;
    }
  };
  for (let n = 0; n < items.length; n++) {
    const item = items[n];
    if (heap.length < k) {
      heap.push(item);
      for (let i = heap.length - 1; i > 0 && worse(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
    } else if (cmp(item, heap[0]) < 0) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort(cmp);
}
