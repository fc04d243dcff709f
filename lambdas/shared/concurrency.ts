/**
 * The project's one set of concurrency and retry helpers. Everything that fans out, waits or
 * retries goes through these, so a change of policy (jitter, caps, failure handling) is made once.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Full-jitter exponential backoff (AWS Architecture Blog, "Exponential Backoff And Jitter"): a
 * random wait in [0, min(cap, base·2^attempt)), so losers of one race spread out instead of
 * colliding again at once.
 */
export function jitteredBackoffMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** Math.min(attempt, 20));
}

export interface MapLimitOptions {
  /**
   * `stop` (default): after the first failure no further item starts; the calls in flight finish,
   * then the first error is thrown. `continue`: every item is tried (independent units of work
   * that should each make progress), then the first error is thrown.
   */
  onError?: 'stop' | 'continue';
}

/** `fn` over `items` with at most `limit` calls in flight; results in the order of `items`. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>, opts: MapLimitOptions = {}): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const worker = async (): Promise<void> => {
    while (next < items.length && !(failed && opts.onError !== 'continue')) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (err) {
        if (!failed) {
          failed = true;
          firstError = err;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw firstError;
  return out;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * A lazily started, shared initialisation (a Lambda's dependencies): every caller awaits the same
 * promise; a failure is not kept, so the next caller tries again (e.g. Secrets Manager throttled
 * during a cold start).
 */
export function retryingOnce<T>(init: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= init().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
