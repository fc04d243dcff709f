import { createHash, timingSafeEqual } from 'node:crypto';

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

/** Constant-time comparison that does not leak the secret's length either (both sides hashed first). */
export function sameSecret(presented: string, secret: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
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
