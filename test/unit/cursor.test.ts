import { randomBytes } from 'node:crypto';
import { CursorCodec, CursorError, MAX_CURSOR_CHARS, parseKeyRing } from '../../lambdas/shared/cursor';

const key = (id: number) => ({ id, secret: randomBytes(32) });

describe('signed cursors', () => {
  const k1 = key(1);
  const codec = new CursorCodec({ current: k1 });
  const payload = Buffer.from('position-42');

  it('round-trips a payload for its purpose', () => {
    expect(codec.decode('list', codec.encode('list', payload))).toEqual(payload);
  });

  it('refuses a cursor of another purpose, a flipped bit, truncation, extension and garbage', () => {
    const c = codec.encode('list', payload);
    expect(() => codec.decode('search', c)).toThrow(CursorError);
    const raw = Buffer.from(c, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const t = Buffer.from(raw);
      t[i] ^= 0x01;
      expect(() => codec.decode('list', t.toString('base64url'))).toThrow(CursorError);
    }
    expect(() => codec.decode('list', c.slice(0, -1))).toThrow(CursorError);
    expect(() => codec.decode('list', `${c}A`)).toThrow(CursorError);
    for (const bad of ['', '!!!', 'a b', 'x'.repeat(MAX_CURSOR_CHARS + 1), 'AAAA']) expect(() => codec.decode('list', bad)).toThrow(CursorError);
  });

  it('refuses a cursor signed with an unknown key', () => {
    const other = new CursorCodec({ current: key(1) });
    expect(() => codec.decode('list', other.encode('list', payload))).toThrow(CursorError);
  });

  it('accepts cursors of the previous key after a rotation, and not of a retired one', () => {
    const k2 = key(2);
    const old = codec.encode('list', payload);
    const rotated = new CursorCodec({ current: k2, previous: k1 });
    expect(rotated.decode('list', old)).toEqual(payload);
    expect(Buffer.from(rotated.encode('list', payload), 'base64url')[0]).toBe(2);
    const retired = new CursorCodec({ current: key(3), previous: k2 });
    expect(() => retired.decode('list', old)).toThrow(CursorError);
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
});
