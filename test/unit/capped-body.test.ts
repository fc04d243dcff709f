import { readCappedBody } from '../../lambdas/shared/http/capped-body';

/** The one capped body reader of the crawler and the OAuth front's metadata-document fetch. */
function streamed(chunks: string[]): { res: Response; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled < chunks.length) c.enqueue(new TextEncoder().encode(chunks[pulled++]));
      else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { res: new Response(body), pulled: () => pulled, cancelled: () => cancelled };
}

it('reads a body up to and including the cap', async () => {
  expect(Buffer.from((await readCappedBody(streamed(['abc', 'de']).res, 5)) as Uint8Array).toString()).toBe('abcde');
  expect(await readCappedBody(new Response(null), 5)).toEqual(new Uint8Array(0));
});

it('gives up on a declared length over the cap without reading', async () => {
  const res = new Response('x'.repeat(10), { headers: { 'content-length': '10' } });
  expect(await readCappedBody(res, 5)).toBeUndefined();
});

it('stops a streamed body at the chunk that crosses the cap and cancels the rest', async () => {
  const s = streamed(['abc', 'def', 'ghi', 'jkl']);
  expect(await readCappedBody(s.res, 5)).toBeUndefined();
  // The stream may have pulled one chunk ahead, never the whole body.
  expect(s.pulled()).toBeLessThan(4);
  expect(s.cancelled()).toBe(true);
});

it('lets a read error through to the caller', async () => {
  const res = new Response(new ReadableStream({ pull: (c) => c.error(new Error('reset')) }));
  await expect(readCappedBody(res, 5)).rejects.toThrow('reset');
});
