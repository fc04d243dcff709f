/** A bounded map whose entries lapse; the oldest entry goes first when full. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; untilMs: number }>();

  constructor(private readonly max: number) {}

  get(key: string, nowMs: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (nowMs >= e.untilMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, untilMs: number): void {
    if (this.entries.size >= this.max && !this.entries.has(key)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, untilMs });
  }

  /** Drops every entry whose value matches (a revoked token, whatever form it was presented in). */
  deleteWhere(match: (value: V) => boolean): void {
    for (const [key, e] of this.entries) if (match(e.value)) this.entries.delete(key);
  }
}
