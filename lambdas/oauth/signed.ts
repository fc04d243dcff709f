import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import type { KeyRing } from '../shared/cursor';

/**
 * Short-lived, HMAC-signed values that carry a pending authorization through the browser (hidden
 * form fields, the upstream `state`), so the front keeps no server-side session. The keys derive
 * from the cursor key ring (Secrets Manager in AWS, `DATA_DIR` locally) under a label of their own,
 * so a cursor can never pass for one of these nor the reverse; the previous key is accepted too,
 * so a rotation breaks no sign-in in flight.
 *
 * Format: `<keyId>.<base64url(JSON {p: payload, e: expiry})>.<base64url(mac)>`, the MAC over the
 * purpose, key id and body: a value signed for one step cannot be replayed at another.
 */
export class FrontSigner {
  private readonly keys: Array<{ id: number; key: Buffer }>;

  constructor(ring: KeyRing) {
    this.keys = [ring.current, ...(ring.previous ? [ring.previous] : [])].map((k) => ({
      id: k.id,
      key: createHmac('sha256', k.secret).update('mcp-oauth-front/v1').digest(),
    }));
  }

  sign(purpose: string, payload: unknown, expiresAt: number): string {
    const { id, key } = this.keys[0];
    const body = Buffer.from(JSON.stringify({ p: payload, e: expiresAt })).toString('base64url');
    return `${id}.${body}.${mac(key, purpose, id, body)}`;
  }

  /** The payload when the value is ours, for this purpose, unexpired and of the expected shape. */
  verify<S extends z.ZodType>(purpose: string, token: string | undefined, nowSeconds: number, schema: S): z.output<S> | undefined {
    if (token === undefined || token.length > 8192) return undefined;
    const m = /^(\d{1,3})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return undefined;
    const id = Number(m[1]);
    const key = this.keys.find((k) => k.id === id);
    if (!key) return undefined;
    const expected = Buffer.from(mac(key.key, purpose, id, m[2]));
    const given = Buffer.from(m[3]);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(m[2], 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const envelope = decoded as { p?: unknown; e?: unknown };
    if (typeof envelope !== 'object' || envelope === null || typeof envelope.e !== 'number' || envelope.e <= nowSeconds) return undefined;
    const parsed = schema.safeParse(envelope.p);
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * A secret derived from `input` that never leaves the server: the PKCE verifier of the front's
   * own request to Cognito comes from the transaction's nonce, so it needs no storage either.
   */
  derive(label: string, input: string): string {
    return createHmac('sha256', this.keys[0].key).update(label).update('\0').update(input).digest('base64url');
  }
}

function mac(key: Buffer, purpose: string, id: number, body: string): string {
  return createHmac('sha256', key).update(purpose).update('\0').update(String(id)).update('\0').update(body).digest('base64url');
}

export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/** What a signed value stores of the browser-binding cookie: its hash, so URLs never carry the cookie itself. */
export function bindingOf(cookieValue: string): string {
  return createHash('sha256').update(cookieValue).digest('base64url').slice(0, 22);
}

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(verifier))). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
