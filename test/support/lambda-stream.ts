import { EventEmitter } from 'node:events';
import { streamingEntry, type ResponseStream, type StreamingRuntime } from '../../lambdas/memory-api/streaming';
import type { HttpEvent, HttpResult, LambdaContext } from '../../lambdas/shared/http/types';

/**
 * Lambda's response streaming on a fake runtime, for the streaming entry, which only runs in AWS.
 * The stream records the prelude and every chunk, and asks for a drain after every other write
 * (so the entry's backpressure path runs); a stream test sets `destroyed` and emits `close` itself.
 */
export class FakeStream extends EventEmitter implements ResponseStream {
  chunks: Buffer[] = [];
  ended = false;
  destroyed = false;
  prelude?: { statusCode: number; headers: Record<string, string> };
  write(chunk: Uint8Array): boolean {
    this.chunks.push(Buffer.from(chunk));
    return this.chunks.length % 2 === 1;
  }
  end(): void {
    this.ended = true;
    setImmediate(() => this.emit('finish'));
  }
}

/** One invocation of `streamingEntry` answering `result` into `stream`, which drains every millisecond (`onWrite` runs first). */
export function runStreaming(result: HttpResult, stream: FakeStream, onWrite?: () => void): Promise<void> {
  let wrapped: ((event: HttpEvent, s: ResponseStream, c: LambdaContext) => Promise<void>) | undefined;
  const runtime: StreamingRuntime = {
    streamifyResponse: (h) => {
      wrapped = h;
      return h;
    },
    HttpResponseStream: {
      from: (s, prelude) => {
        (s as FakeStream).prelude = prelude;
        return s;
      },
    },
  };
  streamingEntry(async () => result, runtime);
  const drainer = setInterval(() => {
    onWrite?.();
    stream.emit('drain');
  }, 1);
  return (wrapped as NonNullable<typeof wrapped>)({} as HttpEvent, stream, {} as LambdaContext).finally(() => clearInterval(drainer));
}
