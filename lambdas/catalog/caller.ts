import type { RatePolicy } from '../shared/rate-limit/rate-limiter';
import type { CatalogConfig } from '../shared/config';
import { header, type HttpEvent } from '../shared/http/types';

/**
 * Who is calling, for rate limiting. Anonymous callers are keyed by client IP (`AnonymousCallers`
 * below). The bearer tier is `BearerCallers` (`lambdas/auth/callers.ts`), which `createCatalogDeps`
 * uses when it is given a token verifier (the Lambda and the local stack always give one): it
 * verifies the token and returns `user:<sub>` with the authenticated policy, and falls back to the
 * anonymous tier for any missing, bad or unverifiable token (never a 401 on catalog reads).
 */
export interface Caller {
  key: string;
  policy: RatePolicy;
}

export interface CallerResolver {
  resolve(event: HttpEvent): Promise<Caller>;
}

export function anonymousPolicy(config: CatalogConfig): RatePolicy {
  return { name: 'catalog-anon', ratePerSecond: config.anonymous.rate, burst: config.anonymous.burst };
}

export function authenticatedPolicy(config: CatalogConfig): RatePolicy {
  return { name: 'catalog-user', ratePerSecond: config.authenticated.rate, burst: config.authenticated.burst };
}

/**
 * The client IP. Behind CloudFront it is the viewer address CloudFront forwards, trusted only when
 * the request carries the secret origin header CloudFront adds (so a caller that reaches the API
 * directly cannot pick its own bucket); otherwise the connection's source address.
 * The distribution's viewer-request function sets `x-viewer-address` from the connection,
 * overwriting anything a client sent; `CloudFront-Viewer-Address` (ip:port) is the fallback, used
 * when an origin request policy forwards it.
 */
export function clientIp(event: HttpEvent, originSecret: string | undefined): string {
  if (originSecret !== undefined && header(event, 'x-origin-verify') === originSecret) {
    // The function's header first: it always overwrites whatever a client sent.
    const fromFunction = header(event, 'x-viewer-address');
    if (fromFunction) return fromFunction;
    const viewer = header(event, 'cloudfront-viewer-address');
    if (viewer) return stripPort(viewer);
  }
  return event.requestContext?.http?.sourceIp ?? 'unknown';
}

/** `1.2.3.4:5678` → `1.2.3.4`; `2001:db8::1:443` (CloudFront's IPv6 form) → `2001:db8::1`. */
function stripPort(addr: string): string {
  const i = addr.lastIndexOf(':');
  return i > 0 ? addr.slice(0, i) : addr;
}

export class AnonymousCallers implements CallerResolver {
  constructor(
    private readonly config: CatalogConfig,
    private readonly originSecret: () => string | undefined,
  ) {}

  async resolve(event: HttpEvent): Promise<Caller> {
    return { key: `ip:${clientIp(event, this.originSecret())}`, policy: anonymousPolicy(this.config) };
  }
}
