import { randomBytes } from 'node:crypto';
import { CursorCodec, CursorError, MAX_CURSOR_CHARS, parseKeyRing } from '../../lambdas/shared/cursor';

const key = (id: number) => ({ id, secret: randomBytes(32) });

describe('signed cursors', () => {
  const k1 = key(1);
  const codec = new CursorCodec({ current: k1 });
  const payload = Buffer.from('position-42');

  it('round-trips a payload for its purpose', async () => {
    expect(await codec.decode('list', codec.encode('list', payload))).toEqual(payload);
  });

  it('refuses a cursor of another purpose, a flipped bit, truncation, extension and garbage', async () => {
    const c = codec.encode('list', payload);
    await expect(codec.decode('search', c)).rejects.toThrow(CursorError);
    const raw = Buffer.from(c, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const t = Buffer.from(raw);
      t[i] ^= 0x01;
      await expect(codec.decode('list', t.toString('base64url'))).rejects.toThrow(CursorError);
    }
    await expect(codec.decode('list', c.slice(0, -1))).rejects.toThrow(CursorError);
    await expect(codec.decode('list', `${c}A`)).rejects.toThrow(CursorError);
    for (const bad of ['', '!!!', 'a b', 'x'.repeat(MAX_CURSOR_CHARS + 1), 'AAAA']) await expect(codec.decode('list', bad)).rejects.toThrow(CursorError);
  });

  it('refuses a cursor signed with an unknown key', async () => {
    const other = new CursorCodec({ current: key(1) });
    await expect(codec.decode('list', other.encode('list', payload))).rejects.toThrow(CursorError);
  });

  it('accepts cursors of the previous key after a rotation, and not of a retired one', async () => {
    const k2 = key(2);
    const old = codec.encode('list', payload);
    const rotated = new CursorCodec({ current: k2, previous: k1 });
    expect(await rotated.decode('list', old)).toEqual(payload);
    expect(Buffer.from(rotated.encode('list', payload), 'base64url')[0]).toBe(2);
    const retired = new CursorCodec({ current: key(3), previous: k2 });
    await expect(retired.decode('list', old)).rejects.toThrow(CursorError);
  });

  it('refuses to mint a cursor over 200 characters', () => {
    expect(() => codec.encode('list', randomBytes(140))).toThrow(/exceeds 200/);
    expect(codec.encode('list', randomBytes(130)).length).toBeLessThanOrEqual(MAX_CURSOR_CHARS);
  });

  it('parses a key ring and rejects weak or malformed ones', () => {
    const ring = parseKeyRing(JSON.stringify({ current: { id: 7, secret: randomBytes(32).toString('base64') } }));
    expect(ring.current.id).toBe(7);
    expect(() => parseKeyRing('{}')).toThrow(/missing current/);
    // The flat form Secrets Manager generates at deploy time is the current key.
    expect(parseKeyRing(JSON.stringify({ id: 1, secret: 'a'.repeat(64) })).current.id).toBe(1);
    expect(() => parseKeyRing(JSON.stringify({ current: { id: 300, secret: 'AAAA' } }))).toThrow(/0-255/);
    expect(() => parseKeyRing(JSON.stringify({ current: { id: 1, secret: 'AAAA' } }))).toThrow(/16 bytes/);
  });

  describe('a rotation seen by an instance started before it', () => {
    // Two instances of one function: `early` loaded the ring before the rotation, `late` after it.
    const k2 = key(2);
    let stored: { current: typeof k1; previous?: typeof k1 } = { current: k1 };
    let reads = 0;
    let now = 0;
    const source = async () => {
      reads += 1;
      return stored;
    };
    const early = new CursorCodec(stored, { reload: source, clock: () => now });

    it('accepts the new key’s cursors by re-reading the ring, and then signs with it', async () => {
      stored = { current: k2, previous: k1 };
      const late = new CursorCodec(stored, { reload: source, clock: () => now });
      const fromLate = late.encode('list', payload);
      expect(await early.decode('list', fromLate)).toEqual(payload);
      expect(reads).toBe(1);
      expect(Buffer.from(early.encode('list', payload), 'base64url')[0]).toBe(2);
      // The other direction needs no reload: the old key is the ring's previous.
      expect(await late.decode('list', new CursorCodec({ current: k1 }).encode('list', payload))).toEqual(payload);
    });

    it('re-reads at most once a minute, so forged key ids cannot make every request read the secret', async () => {
      const forged = Buffer.from(codec.encode('list', payload), 'base64url');
      forged[0] = 99;
      const before = reads;
      for (let i = 0; i < 5; i++) await expect(early.decode('list', forged.toString('base64url'))).rejects.toThrow(CursorError);
      expect(reads).toBe(before);
      now += 61_000;
      await expect(early.decode('list', forged.toString('base64url'))).rejects.toThrow(CursorError);
      expect(reads).toBe(before + 1);
    });
  });
});
