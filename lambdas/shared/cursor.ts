import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque, tamper-proof cursors. A cursor is `base64url(keyId · payload · mac16)` where the MAC is
 * HMAC-SHA256 over (purpose, keyId, payload). The purpose binds a cursor to one listing and one
 * query (a cursor of another endpoint or query is foreign and refused). The current and the previous
 * key are both accepted, so rotating the key breaks no cursor in flight (DECISIONS).
 */
export interface CursorKey {
  /** 0-255, carried in the cursor to pick the key on verification. */
  id: number;
  secret: Buffer;
}

export interface KeyRing {
  current: CursorKey;
  previous?: CursorKey;
}

const MAC_BYTES = 16;
export const MAX_CURSOR_CHARS = 200;

export class CursorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CursorError';
  }
}

export interface CursorCodecOptions {
  /**
   * Reads the ring again (Secrets Manager, or the data dir's file). Called when a cursor names a key
   * this instance does not know, which is what a rotation looks like to an instance started before
   * it: another instance signs with the new current key. Bounded (`minReloadMs`), so forged key
   * ids cannot make every request re-read the secret.
   */
  reload?: () => Promise<KeyRing>;
  /** At most one reload per this many milliseconds (default 60 s). */
  minReloadMs?: number;
  clock?: () => number;
}

export class CursorCodec {
  private keys: KeyRing;
  private reloading?: Promise<void>;
  private lastReloadMs = Number.NEGATIVE_INFINITY;

  constructor(
    keys: KeyRing,
    private readonly opts: CursorCodecOptions = {},
  ) {
    this.keys = keys;
  }

  encode(purpose: string, payload: Buffer): string {
    const { id, secret } = this.keys.current;
    const body = Buffer.concat([Buffer.from([id]), payload]);
    const token = Buffer.concat([body, mac(secret, purpose, body)]).toString('base64url');
    if (token.length > MAX_CURSOR_CHARS) throw new Error(`cursor of ${token.length} chars exceeds ${MAX_CURSOR_CHARS}`);
    return token;
  }

  /** Returns the payload, or throws `CursorError` for anything forged, foreign, truncated or malformed. */
  async decode(purpose: string, token: string): Promise<Buffer> {
    if (token.length === 0 || token.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) {
      throw new CursorError('cursor is not a valid cursor of this listing');
    }
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 1 + MAC_BYTES) throw new CursorError('cursor is not a valid cursor of this listing');
    const body = raw.subarray(0, raw.length - MAC_BYTES);
    const tag = raw.subarray(raw.length - MAC_BYTES);
    let key = this.keyFor(body[0]);
    if (!key && (await this.reloadOnce())) key = this.keyFor(body[0]);
    if (!key || !timingSafeEqual(tag, mac(key.secret, purpose, body))) {
      throw new CursorError('cursor is not a valid cursor of this listing');
    }
    return body.subarray(1);
  }

  private keyFor(id: number): CursorKey | undefined {
    return [this.keys.current, this.keys.previous].find((k) => k && k.id === id);
  }

  /** Re-reads the ring unless that was done within `minReloadMs`; concurrent callers share one read. */
  private async reloadOnce(): Promise<boolean> {
    const reload = this.opts.reload;
    if (!reload) return false;
    const now = (this.opts.clock ?? Date.now)();
    if (!this.reloading) {
      if (now - this.lastReloadMs < (this.opts.minReloadMs ?? 60_000)) return false;
      this.lastReloadMs = now;
      this.reloading = reload().then(
        (keys) => {
          this.keys = keys;
          this.reloading = undefined;
        },
        () => {
          this.reloading = undefined; // keep the ring in use; the next unknown key after the interval tries again
        },
      );
    }
    await this.reloading;
    return true;
  }
}

function mac(secret: Buffer, purpose: string, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(purpose).update('\0').update(body).digest().subarray(0, MAC_BYTES);
}

/**
 * Parses the key-ring JSON kept in Secrets Manager or `DATA_DIR`: `{ current: {id, secret(base64)},
 * previous? }`, or a single flat `{ id, secret }` (what Secrets Manager generates at deploy time),
 * which is the current key. A rotation writes the full form.
 */
export function parseKeyRing(json: string): KeyRing {
  const raw = JSON.parse(json) as Record<string, unknown>;
  const flat = raw && typeof raw === 'object' && !('current' in raw) && 'secret' in raw;
  const parsed = (flat ? { current: raw } : raw) as { current?: { id?: unknown; secret?: unknown }; previous?: { id?: unknown; secret?: unknown } };
  const toKey = (k: { id?: unknown; secret?: unknown } | undefined): CursorKey | undefined => {
    if (!k) return undefined;
    if (typeof k.id !== 'number' || !Number.isInteger(k.id) || k.id < 0 || k.id > 255 || typeof k.secret !== 'string') {
      throw new Error('cursor key ring: each key needs an integer id 0-255 and a base64 secret');
    }
    const secret = Buffer.from(k.secret, 'base64');
    if (secret.length < 16) throw new Error('cursor key ring: secrets must be at least 16 bytes');
    return { id: k.id, secret };
  };
  const current = toKey(parsed.current);
  if (!current) throw new Error('cursor key ring: missing current key');
  return { current, previous: toKey(parsed.previous) };
}
