import { timingSafeEqual } from 'node:crypto';

/** Header CloudFront adds to every origin request; its value is the origin-verify secret (lib/edge.ts). */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/**
 * The origin secret as the request path reads it: the current value (undefined when none is
 * configured, as in the local stack: then every request is admitted), and optionally `admits`,
 * which knows the previous value during a rotation (see `originSecretGetter`).
 */
export interface OriginSecretGetter {
  (): string | undefined;
  admits?(presented: string | undefined): Promise<boolean>;
}

/**
 * Constant-time comparison of the presented value with the secret. Only the length can show in the
 * timing, and it is no secret: the deployment generates the value at a fixed length (48 characters,
 * `lib/catalog-data.ts`), which anyone can read in this repository. Hashing both sides to hide it
 * cost a SHA-256 per request (13 µs here, the largest single cost of a cached read) for nothing.
 */
export function sameSecret(presented: string, secret: string): boolean {
  const expected = secretBytes(secret);
  const given = Buffer.from(presented, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// The secret is the same on every request (two values during a rotation): its bytes are kept.
const encoded = new Map<string, Buffer>();
function secretBytes(secret: string): Buffer {
  let b = encoded.get(secret);
  if (b === undefined) {
    b = Buffer.from(secret, 'utf8');
    if (encoded.size >= 4) encoded.clear();
    encoded.set(secret, b);
  }
  return b;
}

/**
 * Whether a request may be served: always when no secret is configured, otherwise only with the
 * header CloudFront adds. "Origins answer only CloudFront": a caller that finds the execute-api or
 * function URL host name gets a 403 instead of the API.
 */
export async function originAdmits(secret: OriginSecretGetter, presented: string | undefined): Promise<boolean> {
  if (secret.admits) return secret.admits(presented);
  const value = secret();
  return value === undefined || (presented !== undefined && sameSecret(presented, value));
}
