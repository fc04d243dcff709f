/** Where a streamed body is written: Node's `ServerResponse` locally, Lambda's response stream in AWS. */
export interface ByteSink {
  write(chunk: Uint8Array): boolean;
  once(event: 'drain' | 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
  removeListener(event: 'drain' | 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
  readonly destroyed?: boolean;
}

/** The reader went away before the body ended: the body stopped being made, nothing is wrong with it. */
export class SinkClosedError extends Error {
  constructor() {
    super('the reader closed the connection before the body ended');
    this.name = 'SinkClosedError';
  }
}

/**
 * Writes a body made while it is sent, with backpressure: the next chunk is asked for only once the
 * sink took the last one (or drained), so what waits in memory is one chunk, not the file. When the
 * sink closes first, the body's iterator is closed too (its producer stops and lets go of what it
 * held) and `SinkClosedError` is thrown; a failure of the body is thrown as it is.
 */
export async function writeBody(body: AsyncIterable<Uint8Array>, sink: ByteSink): Promise<void> {
  for await (const chunk of body) {
    if (sink.destroyed) throw new SinkClosedError();
    if (sink.write(chunk)) continue;
    await new Promise<void>((resolve, reject) => {
      const settle = (err?: unknown): void => {
        sink.removeListener('drain', onDrain);
        sink.removeListener('close', onClose);
        sink.removeListener('error', onError);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = (): void => settle();
      const onClose = (): void => settle(new SinkClosedError());
      const onError = (err: unknown): void => settle(err ?? new SinkClosedError());
      sink.once('drain', onDrain);
      sink.once('close', onClose);
      sink.once('error', onError);
      if (sink.destroyed) settle(new SinkClosedError());
    });
  }
}
