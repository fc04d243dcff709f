import { header, type HttpEvent } from './types';

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
