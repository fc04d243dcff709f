import type { FinalizeHandler, FinalizeHandlerArguments, MiddlewareStack } from '@smithy/types';

/**
 * The calls one SDK client has in flight, at most `size`; the others wait their turn, first come
 * first served, at most `maxWaitMs`. The SDK's own timeouts start when a call is handed to its HTTP
 * handler, queueing for a socket included: without this, a burst larger than the socket pool (the
 * local server serves every request in one process) timed out calls that were only waiting, and
 * sent so many at once that the backend answered each of them late. Here a call is sent when a slot
 * is free, and its timeouts count from then.
 */
export class CallPool {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly size: number,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * A slot (resolves with its release), or a `CallQueueTimeout` past `maxWaitMs`: not a name the
   * SDK retries, since waiting again behind the same queue would only double the wait.
   */
  async acquire(): Promise<() => void> {
    if (this.active < this.size) {
      this.active++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const take = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = Number.isFinite(this.maxWaitMs)
        ? setTimeout(() => {
            this.waiting.splice(this.waiting.indexOf(take), 1);
            reject(Object.assign(new Error(`no call slot within ${this.maxWaitMs} ms (${this.size} calls in flight)`), { name: 'CallQueueTimeout' }));
          }, this.maxWaitMs)
        : undefined;
      this.waiting.push(take);
    });
    // The slot was handed over by the release that woke this call: `active` did not change.
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  /** Puts every call of a client through the pool: each attempt (inside the SDK's retries) takes a slot. */
  attach<I extends object, O extends object>(stack: MiddlewareStack<I, O>): void {
    stack.add(
      (next: FinalizeHandler<I, O>) => async (args: FinalizeHandlerArguments<I>) => {
        const release = await this.acquire();
        try {
          return await next(args);
        } finally {
          release();
        }
      },
      { step: 'finalizeRequest', priority: 'low', name: 'callPool', override: true },
    );
  }
}
