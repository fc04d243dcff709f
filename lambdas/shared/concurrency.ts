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

/**
 * The items of several async sources as they arrive, at most `limit` sources read at once (each
 * started only when a slot frees, so a source that is never reached costs nothing). Each active
 * source has one `next()` in flight: its next page is fetched while the consumer works. Stopping
 * early (`break`, a throw) closes the sources still open.
 */
export async function* mergeLimit<T>(sources: ReadonlyArray<() => AsyncIterable<T>>, limit: number): AsyncGenerator<T> {
  type Step = { i: number; r: IteratorResult<T> };
  const active = new Map<number, { it: AsyncIterator<T>; next: Promise<Step> }>();
  const pull = (i: number, it: AsyncIterator<T>): Promise<Step> => {
    const next = it.next().then((r) => ({ i, r }));
    // Raced later; without this a source failing while the consumer works would be an unhandled rejection.
    next.catch(() => undefined);
    return next;
  };
  let started = 0;
  const startNext = (): void => {
    const i = started++;
    const it = sources[i]()[Symbol.asyncIterator]();
    active.set(i, { it, next: pull(i, it) });
  };
  while (started < sources.length && active.size < Math.max(1, limit)) startNext();
  try {
    while (active.size > 0) {
      const { i, r } = await Promise.race([...active.values()].map((a) => a.next));
      const source = active.get(i);
      if (!source) continue;
      if (r.done) {
        active.delete(i);
        if (started < sources.length) startNext();
        continue;
      }
      source.next = pull(i, source.it);
      yield r.value;
    }
  } finally {
    await Promise.allSettled([...active.values()].map((a) => a.it.return?.()));
  }
}

/**
 * `fn` over `items`, the results yielded in the order of `items`, with up to `ahead` calls started
 * before the consumer asks for them: reads overlap the consumer's work, and no more than `ahead`
 * results are ever waiting. Stopping early lets the calls in flight finish unobserved.
 */
export async function* mapAhead<T, R>(items: readonly T[], ahead: number, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const inFlight: Array<Promise<R>> = [];
  let next = 0;
  const fill = (): void => {
    while (next < items.length && inFlight.length < Math.max(1, ahead)) {
      const p = fn(items[next++]);
      // Awaited in turn below; without this one failing while an earlier one is awaited would be unhandled.
      p.catch(() => undefined);
      inFlight.push(p);
    }
  };
  fill();
  while (inFlight.length > 0) {
    const result = await (inFlight.shift() as Promise<R>);
    fill();
    yield result;
  }
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
