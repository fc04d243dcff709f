import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import { MEMORY_API } from '../../lambdas/memory-api/routes';
import { SinkClosedError, writeBody } from '../../lambdas/shared/http/stream-body';
import { type HttpResult, STREAM_BODY } from '../../lambdas/shared/http/types';
import { createLocalServer, listen, type RunningServer } from '../../bin/local-stack/server';
import { FakeStream, runStreaming } from '../support/lambda-stream';

/**
 * Bodies made while they are sent (exports): each chunk is asked for once the last one was taken,
 * a reader that leaves stops the making, and a body that fails after the head left cuts the answer
 * short. Locally (the local server) and in AWS (the streaming Lambda entry, on a fake runtime).
 */

/** A body of endless 64 KiB chunks that says how many were made and when it was closed. */
function endless(): { body: AsyncGenerator<Uint8Array>; made: () => number; closed: Promise<void> } {
  let made = 0;
  let close!: () => void;
  const closed = new Promise<void>((r) => {
    close = r;
  });
  async function* body(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        made++;
        yield Buffer.alloc(64 * 1024, made % 256);
      }
    } finally {
      close();
    }
  }
  return { body: body(), made: () => made, closed };
}

async function* failing(chunks: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < chunks; i++) yield Buffer.alloc(1024, i);
  throw new Error('storage failed midway');
}

/** A writable that takes `room` chunks, then waits to be drained. */
class Sink extends EventEmitter {
  taken: Uint8Array[] = [];
  destroyed = false;
  constructor(private room: number) {
    super();
  }
  write(chunk: Uint8Array): boolean {
    this.taken.push(chunk);
    return --this.room > 0;
  }
  drain(room: number): void {
    this.room = room;
    this.emit('drain');
  }
}

describe('writeBody', () => {
  it('asks for the next chunk only once the sink took (or drained) the last', async () => {
    const { body, made } = endless();
    const sink = new Sink(2);
    const writing = writeBody(body, sink);
    await new Promise((r) => setImmediate(r));
    // Two chunks taken, the third waits for a drain: no fourth was made.
    expect([sink.taken.length, made()]).toEqual([2, 2]);
    sink.drain(1);
    await new Promise((r) => setImmediate(r));
    expect([sink.taken.length, made()]).toEqual([3, 3]);
    sink.destroyed = true;
    sink.emit('close');
    await expect(writing).rejects.toBeInstanceOf(SinkClosedError);
  });

  it('closes the body when the sink closes (its maker stops and lets go)', async () => {
    const { body, closed } = endless();
    const sink = new Sink(1);
    const writing = writeBody(body, sink);
    sink.destroyed = true;
    sink.emit('close');
    await expect(writing).rejects.toBeInstanceOf(SinkClosedError);
    await closed;
    expect(sink.listenerCount('drain') + sink.listenerCount('close') + sink.listenerCount('error')).toBe(0);
  });

  it("throws the body's own failure", async () => {
    await expect(writeBody(failing(3), new Sink(100))).rejects.toThrow('storage failed midway');
  });
});

describe('the local server', () => {
  let server: RunningServer;
  let next: () => HttpResult;
  beforeAll(async () => {
    const fn = async (): Promise<HttpResult> => next();
    const functions = Object.fromEntries([MEMORY_API.catchAllFn, ...MEMORY_API.routes.map((r) => r.fn)].map((f) => [f, fn]));
    server = await listen(createLocalServer({ apis: [{ table: MEMORY_API, functions }], ready: () => true }), 0);
  });
  afterAll(() => server.close());

  const streamed = (body: AsyncIterable<Uint8Array>): HttpResult => ({ statusCode: 200, headers: { 'content-type': 'application/zip' }, [STREAM_BODY]: body });

  it('sends a made body chunked, without a length', async () => {
    async function* three(): AsyncGenerator<Uint8Array> {
      for (const s of ['one ', 'two ', 'three']) yield Buffer.from(s);
    }
    next = () => streamed(three());
    const res = await fetch(`${server.url}/v1/memories/export`);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(await res.text()).toBe('one two three');
  });

  it('stops making the body when the reader leaves, and serves the next request', async () => {
    const body = endless();
    next = () => streamed(body.body);
    await new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}/v1/memories/export`, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end();
    });
    await body.closed;
    next = () => ({ statusCode: 200, headers: {}, body: 'ok' });
    expect(await (await fetch(`${server.url}/v1/memories/export`)).text()).toBe('ok');
  });

  it('cuts the answer short when the body fails after the head left (the reader sees an error, not a whole file)', async () => {
    next = () => streamed(failing(3));
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // The head may or may not have left before the connection is cut; the body never ends well.
      await expect(fetch(`${server.url}/v1/memories/export`).then((res) => res.arrayBuffer())).rejects.toThrow();
      expect(logged).toHaveBeenCalledWith('local server: streamed answer cut short', expect.objectContaining({ message: 'storage failed midway' }));
    } finally {
      logged.mockRestore();
    }
  });
});

describe('the streaming Lambda entry', () => {
  it('writes a made body chunk by chunk, waiting for the stream to drain', async () => {
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 5; i++) yield Buffer.alloc(10, i);
    }
    const stream = new FakeStream();
    await runStreaming({ statusCode: 200, headers: { 'content-type': 'application/x-git-bundle' }, [STREAM_BODY]: chunks() }, stream);
    expect(stream.prelude).toEqual({ statusCode: 200, headers: { 'content-type': 'application/x-git-bundle' } });
    expect(stream.chunks.map((c) => c[0])).toEqual([0, 1, 2, 3, 4]);
    expect(stream.ended).toBe(true);
  });

  it('fails the invocation (the runtime cuts the answer) when the body fails midway, without ending the stream', async () => {
    const stream = new FakeStream();
    await expect(runStreaming({ statusCode: 200, headers: {}, [STREAM_BODY]: failing(3) }, stream)).rejects.toThrow('storage failed midway');
    expect(stream.chunks).toHaveLength(3);
    expect(stream.ended).toBe(false);
  });

  it('stops making the body when the stream closes', async () => {
    const body = endless();
    const stream = new FakeStream();
    const invocation = runStreaming({ statusCode: 200, headers: {}, [STREAM_BODY]: body.body }, stream, () => {
      if (stream.chunks.length >= 4 && !stream.destroyed) {
        stream.destroyed = true;
        stream.emit('close');
      }
    });
    await expect(invocation).rejects.toBeInstanceOf(SinkClosedError);
    await body.closed;
  });
});
