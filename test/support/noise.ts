/** Text that zlib cannot shrink much (git stores blobs deflated): `bytes` of base64 from a seeded generator. */
export function noise(seed: number, bytes: number): string {
  let a = seed >>> 0;
  const out = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  for (let i = 0; i < out.length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 255;
  }
  return out.toString('base64').slice(0, bytes);
}
