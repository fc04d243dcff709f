import { readCappedBody } from '../../lambdas/shared/http/capped-body';

/** The one capped body reader of the crawler and the OAuth front's metadata-document fetch. */
// highWaterMark 0: the stream pulls a chunk only when the reader asks for one, so `pulled` counts
// exactly what was read.
function streamed(chunks: string[], headers: Record<string, string> = {}): { res: Response; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (pulled < chunks.length) c.enqueue(new TextEncoder().encode(chunks[pulled++]));
        else c.close();
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { res: new Response(body, { headers }), pulled: () => pulled, cancelled: () => cancelled };
}

it('reads a body up to and including the cap', async () => {
  const s = streamed(['abc', 'de']);
  expect(Buffer.from((await readCappedBody(s.res, 5)) as Uint8Array).toString()).toBe('abcde');
  expect(s.cancelled()).toBe(false);
  expect(await readCappedBody(new Response(null), 5)).toEqual(new Uint8Array(0));
});

it('gives up on a declared length over the cap without reading a byte, and cancels the body', async () => {
  const s = streamed(['abcdefghij'], { 'content-length': '10' });
  expect(await readCappedBody(s.res, 5)).toBeUndefined();
  expect(s.pulled()).toBe(0);
  expect(s.cancelled()).toBe(true);
});

it('does not trust a declared length under the cap: the bytes read decide', async () => {
  const s = streamed(['abc', 'def', 'ghi'], { 'content-length': '3' });
  expect(await readCappedBody(s.res, 5)).toBeUndefined();
  expect(s.pulled()).toBe(2);
});

it('stops a streamed body at the chunk that crosses the cap and cancels the rest', async () => {
  const s = streamed(['abc', 'def', 'ghi', 'jkl']);
  expect(await readCappedBody(s.res, 5)).toBeUndefined();
  // 'abc' fits, 'def' crosses the cap: two chunks read, the other two never pulled.
  expect(s.pulled()).toBe(2);
  expect(s.cancelled()).toBe(true);
});

it('lets a read error through to the caller', async () => {
  const res = new Response(new ReadableStream({ pull: (c) => c.error(new Error('reset')) }));
  await expect(readCappedBody(res, 5)).rejects.toThrow('reset');
});
