/**
 * The in-Lambda cache of immutable things: git objects, per-commit indexes and decoded note texts.
 * All of them are named by a hash (or by a commit, for indexes), so an entry is never stale; the
 * only reason to drop one is memory, hence a least-recently-used bound on approximate bytes.
 */
export class ImmutableCache {
  private readonly entries = new Map<string, { value: unknown; bytes: number }>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private total = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes: number) {}

  get<T>(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Re-insert to mark as most recently used (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value as T;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, value: unknown, bytes: number): void {
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.total -= old.bytes;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  /**
   * The cached value, else the loader's (cached when defined). Concurrent loads of one key share a
   * single call, so parallel requests in one instance never fetch the same object twice.
   */
  getOrLoad<T>(key: string, load: () => Promise<T | undefined>, sizeOf: (value: T) => number): Promise<T | undefined> {
    const hit = this.get<T>(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const pending = this.pending.get(key);
    if (pending) return pending as Promise<T | undefined>;
    const promise = load()
      .then((value) => {
        if (value !== undefined) this.set(key, value, sizeOf(value));
        return value;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, promise);
    return promise;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.total;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
