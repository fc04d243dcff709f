/**
 * A response body read up to `maxBytes`, or undefined as soon as it is known to be larger: a
 * declared Content-Length over the cap, or the bytes read so far. The stream is then cancelled,
 * not drained, so an endless body costs nothing past the cap. Read errors propagate.
 */
export async function readCappedBody(res: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (res.body === null) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
