/** Small statistics helpers for the benchmark scripts. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(samples: number[]): { p50: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}

/** Wall time in ms of each of `n` sequential calls of `fn(i)`. */
export async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

export const ms = (v: number): string => `${v.toFixed(v < 1 ? 3 : 2)} ms`;

export interface BenchSection {
  title: string;
  /** Markdown: how it was measured. */
  method: string;
  /** Markdown table rows: [metric, value, target, verdict]. */
  rows: Array<[string, string, string, string]>;
  /** When and where the section ran (set by bin/bench.ts; kept from BENCHMARKS.md by a partial run). */
  ran?: string;
}

export function verdict(ok: boolean): string {
  return ok ? 'met' : '**missed**';
}
